//! The conversation view follows the selection and never scrolls past its
//! content.

use std::time::Instant;

use crossterm::event::KeyCode;
use mcp_harness::protocol::BackendEvent;
use mcp_harness::ui::state::{AppState, Cell, Focus};
use mcp_harness::ui::update::update;
use ratatui::layout::Rect;

use super::{backend, key};
use crate::fixtures::call_started;

/// Forty entries at 80×24: the conversation shows a handful at a time.
fn long_session() -> AppState {
    let mut s = AppState::new(Instant::now());
    s.area = Rect::new(0, 0, 80, 24);
    for i in 0..20 {
        s.cells.push(Cell::User(format!("question {i}")));
        backend(
            &mut s,
            BackendEvent::ToolCallStarted(call_started(
                &format!("c{i}"),
                "mcp__demo_alpha__lookup",
            )),
        );
    }
    s.focus = Focus::Conversation;
    s
}

/// Which cells are on screen: (first, last) in cell order.
fn on_screen(s: &AppState) -> (usize, usize) {
    use mcp_harness::ui::layout::conversation_text_width;
    let inner_height = 24 - 1 - 2 - 2 - 3; // tabs, status bar, borders, input
    let width = conversation_text_width(78);
    let (top, bottom) = (
        s.scroll_back as usize + inner_height,
        s.scroll_back as usize,
    );
    let mut from_bottom = 0;
    let mut shown = Vec::new();
    for (i, cell) in s.cells.iter().enumerate().rev() {
        // Measured as drawn, not from the transcript's cache.
        let h = cell.lines(width, s.now).len() + 1;
        // Content lines of cell i: (from_bottom, from_bottom + h) from the bottom.
        if from_bottom + h > bottom && from_bottom + 1 < top {
            shown.push(i);
        }
        from_bottom += h;
    }
    (*shown.last().unwrap(), shown[0])
}

#[test]
fn moving_the_selection_up_keeps_it_on_screen() {
    let mut s = long_session();
    for _ in 0..25 {
        update(&mut s, key(KeyCode::Char('k')));
        let selected = s.selected_cell.unwrap();
        let (first, last) = on_screen(&s);
        assert!(
            (first..=last).contains(&selected),
            "cell {selected} selected, cells {first}..={last} shown (scrolled {})",
            s.scroll_back
        );
    }
    update(&mut s, key(KeyCode::Char('g')));
    assert_eq!(on_screen(&s).0, 0, "the top shows the first cell");
    update(&mut s, key(KeyCode::Char('G')));
    assert_eq!(s.scroll_back, 0);
}

#[test]
fn scrolling_stops_at_the_top_and_page_down_acts_at_once() {
    let mut s = long_session();
    for _ in 0..30 {
        update(&mut s, key(KeyCode::PageUp));
    }
    let top = s.scroll_back;
    assert!(top > 0 && top < 300, "clamped to the content: {top}");
    assert_eq!(on_screen(&s).0, 0);
    update(&mut s, key(KeyCode::PageUp));
    assert_eq!(s.scroll_back, top, "no further than the top");
    update(&mut s, key(KeyCode::PageDown));
    assert_eq!(s.scroll_back, top.saturating_sub(10), "PgDn moves at once");
    // A short conversation does not scroll at all.
    let mut short = AppState::new(Instant::now());
    short.area = Rect::new(0, 0, 80, 24);
    short.cells.push(Cell::User("hello".into()));
    update(&mut short, key(KeyCode::PageUp));
    assert_eq!(short.scroll_back, 0);
}
