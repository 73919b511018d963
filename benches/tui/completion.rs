//! The input box's completion at scale: a keystroke after `@` with 10,000
//! resources listed → its frame drawn, against the same with 5 resources, for
//! a word every resource matches and for one only a few do. Every key computes
//! the list once; the frame's other readers (the popup, the footer) reuse it.

use std::time::{Duration, Instant};

use crossterm::event::KeyCode;
use mcp_harness::protocol::{BackendEvent, PolicyEffect, ResourceRow, ResourcesView};
use mcp_harness_tui::ui::msg::Msg;
use mcp_harness_tui::ui::state::{AppState, Focus};

use super::{Ui, key, median};

fn listing(n: usize) -> ResourcesView {
    ResourcesView {
        alias: "demo_alpha".into(),
        resources: (0..n)
            .map(|i| ResourceRow {
                uri: format!(
                    "demo://demo-alpha/documents/section-{:03}/file-{i:05}.md",
                    i % 97
                ),
                name: format!("file {i}"),
                mime: Some("text/markdown".into()),
                size: Some(1024 + i as u64),
            })
            .collect(),
        templates: Vec::new(),
        malformed: 0,
        read: PolicyEffect::Confirm,
        error: None,
    }
}

/// Median of 100 keystrokes after `@` and `word`: a `1`, then ⌫. After `d`
/// every resource matches (the search stops at its cap); after `file-0000`
/// ten do at most, and one after `file-00001`, so every key searches the
/// whole listing.
pub fn keystrokes(ui: &mut Ui, resources: usize, word: &str) -> Duration {
    ui.state.focus = Focus::Input;
    ui.state.input = AppState::new(Instant::now()).input;
    ui.apply(key(KeyCode::Char('@')));
    ui.apply(Msg::Backend(BackendEvent::Resources(listing(resources))));
    for c in word.chars() {
        ui.apply(key(KeyCode::Char(c)));
    }
    ui.draw();
    let mut times = Vec::with_capacity(100);
    for i in 0..100 {
        let code = if i % 2 == 0 {
            KeyCode::Char('1')
        } else {
            KeyCode::Backspace
        };
        let t = Instant::now();
        ui.apply(key(code));
        ui.draw();
        times.push(t.elapsed());
    }
    assert!(ui.state.completing(), "the list shows");
    median(times)
}
