//! The operator's hand-made calls count as running: Ctrl-C cancels them (it
//! does not quit under them), and "interrupting…" goes once nothing runs.

use std::time::Instant;

use mcp_harness::protocol::{
    BackendEvent, Command, Requester, ToolCallView, ToolOutcomeView, TurnEnd,
};
use mcp_harness::ui::msg::Effect;
use mcp_harness::ui::state::{AppState, Cell};
use mcp_harness::ui::update::update;

use super::{backend, ctrl};
use crate::fixtures::call_started;

fn interrupted(id: &str) -> BackendEvent {
    BackendEvent::ToolCallFinished(ToolOutcomeView {
        id: id.into(),
        ok: false,
        text: "interrupted by the operator; the call was cancelled".into(),
        code: Some("interrupted".into()),
        server_output: None,
        elapsed_ms: 0,
        decided: None,
        flow: None,
        dropped_nulls: Vec::new(),
    })
}

#[test]
fn ctrl_c_cancels_a_running_hand_made_call_instead_of_quitting() {
    let mut s = AppState::new(Instant::now());
    let hand = ToolCallView {
        by: Requester::Operator,
        ..call_started("operator-1", "mcp__demo_alpha__slow")
    };
    backend(&mut s, BackendEvent::ToolCallStarted(hand));
    assert!(s.interruptible());
    assert_eq!(
        update(&mut s, ctrl('c')),
        vec![Effect::Send(Command::Interrupt)]
    );
    assert!(!s.quitting);
    assert_eq!(
        s.status.as_ref().map(|(t, _)| t.as_str()),
        Some("interrupting…")
    );
    backend(&mut s, interrupted("operator-1"));
    assert!(!s.interruptible());
    assert_eq!(
        s.status, None,
        "nothing runs any more: no \"interrupting…\""
    );
    assert_eq!(update(&mut s, ctrl('c')), vec![Effect::Send(Command::Quit)]);
}

#[test]
fn an_interrupted_turn_is_told_once() {
    let mut s = AppState::new(Instant::now());
    s.busy = true;
    update(&mut s, ctrl('c'));
    backend(
        &mut s,
        BackendEvent::Notice(
            "interrupted by the operator; in-flight tool calls were cancelled".into(),
        ),
    );
    backend(&mut s, BackendEvent::TurnEnded(TurnEnd::Interrupted));
    let notices: Vec<&Cell> = s
        .cells
        .iter()
        .filter(|c| matches!(c, Cell::Notice(_)))
        .collect();
    assert_eq!(notices.len(), 1, "{notices:?}");
    assert_eq!(s.status, None);
}
