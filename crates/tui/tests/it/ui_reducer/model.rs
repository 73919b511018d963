//! A session without a model (a config of one's own, no `[model]`, no key):
//! the conversation says so first, a message is refused and stays in the box,
//! and the servers still connect.

use std::time::Instant;

use crossterm::event::KeyCode;
use mcp_harness::protocol::{BackendEvent, Command, SessionInfo};
use mcp_harness::ui::msg::Effect;
use mcp_harness::ui::state::{AppState, Cell, Focus};
use mcp_harness::ui::update::update;

use super::{backend, key, typed};
use crate::fixtures::{servers, views};

pub const NO_MODEL: &str = "no model configured: set ANTHROPIC_API_KEY / OPENAI_API_KEY or \
                            `[model]`; you can still connect, inspect and call tools by hand";

pub fn without_a_model() -> AppState {
    let mut s = AppState::new(Instant::now());
    backend(
        &mut s,
        BackendEvent::Started(SessionInfo {
            provider: "none".into(),
            model: "no model configured".into(),
            no_model: Some(NO_MODEL.into()),
            config: "/home/op/.config/mcp-harness/config.toml".into(),
            config_file: Some("/home/op/.config/mcp-harness/config.toml".into()),
            ..SessionInfo::default()
        }),
    );
    update(&mut s, views(servers()));
    s
}

#[test]
fn without_a_model_the_conversation_says_so_first() {
    let s = without_a_model();
    assert!(!s.banner, "not the demo's welcome");
    assert!(
        matches!(s.cells.first(), Some(Cell::Notice(text)) if text == NO_MODEL),
        "{:?}",
        s.cells
    );
}

#[test]
fn without_a_model_a_message_is_refused_and_kept() {
    let mut s = without_a_model();
    typed(&mut s, "hello");
    assert!(update(&mut s, key(KeyCode::Enter)).is_empty(), "no turn");
    assert!(!s.busy);
    assert_eq!(s.input_text(), "hello", "the text stays in the box");
    assert_eq!(s.status.as_ref().map(|(t, _)| t.as_str()), Some(NO_MODEL));
    assert!(!s.cells.iter().any(|c| matches!(c, Cell::User(_))));
    // The servers are the operator's still: c connects.
    s.focus = Focus::Servers;
    s.selected_server = 1;
    assert_eq!(
        update(&mut s, key(KeyCode::Char('c'))),
        vec![Effect::Send(Command::Connect("demo_beta".into()))]
    );
}
