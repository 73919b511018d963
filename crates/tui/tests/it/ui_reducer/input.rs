//! The input box: Enter sends, Alt-Enter adds a line, ↑/↓ recall history,
//! and pasted text lands in the box with its line breaks (never behind a form).

use std::time::{Duration, Instant};

use crate::fixtures::elicitation;
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use mcp_harness::protocol::{BackendEvent, Command};
use mcp_harness::ui::msg::{Effect, Msg};
use mcp_harness::ui::state::{AppState, Cell, Focus};
use mcp_harness::ui::update::update;

use super::{backend, key, typed};

#[test]
fn enter_sends_and_alt_enter_adds_a_line() {
    let mut s = AppState::new(Instant::now());
    typed(&mut s, "hello");
    update(
        &mut s,
        Msg::Key(KeyEvent::new(KeyCode::Enter, KeyModifiers::ALT)),
    );
    typed(&mut s, "world");
    let effects = update(&mut s, key(KeyCode::Enter));
    assert_eq!(
        effects,
        vec![Effect::Send(Command::Prompt("hello\nworld".into()))]
    );
    assert_eq!(s.cells, vec![Cell::User("hello\nworld".into())]);
    assert!(s.busy);
    assert_eq!(s.input_text(), "");
    // While busy, Enter does not send; it says why.
    typed(&mut s, "more");
    assert!(update(&mut s, key(KeyCode::Enter)).is_empty());
    assert!(s.status.as_ref().unwrap().0.contains("a turn is running"));
}

#[test]
fn up_and_down_recall_history() {
    let mut s = AppState::new(Instant::now());
    for text in ["first", "second"] {
        typed(&mut s, text);
        update(&mut s, key(KeyCode::Enter));
        s.busy = false;
    }
    update(&mut s, key(KeyCode::Up));
    assert_eq!(s.input_text(), "second");
    update(&mut s, key(KeyCode::Up));
    assert_eq!(s.input_text(), "first");
    update(&mut s, key(KeyCode::Down));
    update(&mut s, key(KeyCode::Down));
    assert_eq!(s.input_text(), "");
}

#[test]
fn paste_goes_into_the_input_box() {
    let mut s = AppState::new(Instant::now());
    s.focus = Focus::Registry;
    update(&mut s, Msg::Paste("line one\nline two".into()));
    assert_eq!(s.focus, Focus::Input);
    assert_eq!(s.input_text(), "line one\nline two");
}

#[test]
fn pasted_line_breaks_survive_as_lines() {
    let mut s = AppState::new(Instant::now());
    // Bracketed paste delivers the line breaks as CR (or CR LF).
    update(&mut s, Msg::Paste("one\rtwo\r\nthree".into()));
    assert_eq!(s.input.lines(), ["one", "two", "three"]);
    // With a form open, a paste fills its selected text field, on one line.
    backend(&mut s, BackendEvent::ElicitationRequested(elicitation(9)));
    s.now += Duration::from_secs(2);
    update(&mut s, key(KeyCode::Down));
    update(&mut s, Msg::Paste("7\r".into()));
    assert_eq!(
        s.elicitations[0].values[1],
        mcp_harness::ui::state::FieldValue::Text("57 ".into())
    );
    assert_eq!(
        s.input.lines(),
        ["one", "two", "three"],
        "not behind the form"
    );
}
