//! The approval prompt arms itself only after a quiet second: continued typing,
//! in any pane, never decides a call; and prompts find their calls by id.

use std::time::Duration;
use std::time::Instant;

use crossterm::event::KeyCode;
use mcp_harness::protocol::{BackendEvent, Command, Decision, Requester, ToolCallView};
use mcp_harness::ui::msg::Effect;
use mcp_harness::ui::state::{AppState, CallStatus, Cell, Focus};
use mcp_harness::ui::update::update;

use super::{backend, key, typed};
use crate::fixtures::{approval, approval_for, call_started};

fn approvals_sent(effects: &[Effect]) -> usize {
    effects
        .iter()
        .filter(|e| matches!(e, Effect::Send(Command::Approval { .. })))
        .count()
}

#[test]
fn continued_typing_never_approves_however_long_it_goes_on() {
    let start = Instant::now();
    let mut s = AppState::new(start);
    typed(&mut s, "please ");
    backend(
        &mut s,
        BackendEvent::ApprovalRequested(approval(1, "mcp__demo_alpha__set")),
    );
    // "y" every 300 ms for three seconds: each key pushes the arming back.
    let mut sent = 0;
    for _ in 0..10 {
        s.now += Duration::from_millis(300);
        assert!(!s.prompt_armed());
        sent += approvals_sent(&update(&mut s, key(KeyCode::Char('y'))));
    }
    assert_eq!(sent, 0, "no key decided the call");
    assert_eq!(s.input_text(), "please yyyyyyyyyy");
    assert_eq!(s.approvals.len(), 1);
    // The loop wakes when the prompt arms (to draw it armed).
    assert_eq!(s.next_wakeup(Duration::from_millis(100)), s.arms_at());
    // After a second with no keys, y decides.
    s.now += Duration::from_millis(1000);
    assert!(s.prompt_armed());
    assert_eq!(
        update(&mut s, key(KeyCode::Char('y'))),
        vec![Effect::Send(Command::Approval {
            id: 1,
            decision: Decision::Once
        })]
    );
}

#[test]
fn in_a_list_pane_a_fresh_prompt_does_not_take_y_a_or_n() {
    let start = Instant::now();
    let mut s = AppState::new(start);
    update(&mut s, crate::fixtures::views(crate::fixtures::servers()));
    s.focus = Focus::Registry;
    backend(
        &mut s,
        BackendEvent::ApprovalRequested(approval(1, "mcp__demo_alpha__set")),
    );
    // Nobody typed for ages, but the prompt only just opened.
    s.now = start + Duration::from_millis(200);
    assert_eq!(approvals_sent(&update(&mut s, key(KeyCode::Char('a')))), 0);
    assert!(s.registry_all, "a went to the registry (all servers)");
    s.now = start + Duration::from_millis(900);
    assert_eq!(approvals_sent(&update(&mut s, key(KeyCode::Char('n')))), 0);
    assert_eq!(
        s.focus,
        Focus::Registry,
        "n is no registry key: it stays there"
    );
    assert_eq!(
        s.input_text(),
        "",
        "and never becomes text in the input box"
    );
    // A second after the last key, the prompt decides.
    s.now = start + Duration::from_millis(1950);
    assert_eq!(
        update(&mut s, key(KeyCode::Char('n'))),
        vec![Effect::Send(Command::Approval {
            id: 1,
            decision: Decision::Deny
        })]
    );
}

#[test]
fn scrolling_an_armed_prompt_keeps_it_armed_and_the_next_prompt_arms_anew() {
    let start = Instant::now();
    let mut s = AppState::new(start);
    for id in [1, 2] {
        backend(
            &mut s,
            BackendEvent::ApprovalRequested(approval(id, "mcp__demo_alpha__set")),
        );
    }
    s.now = start + Duration::from_secs(2);
    update(&mut s, key(KeyCode::Down));
    assert!(s.prompt_armed(), "reading the arguments is not typing");
    assert_eq!(approvals_sent(&update(&mut s, key(KeyCode::Char('y')))), 1);
    // A double y decides one call, not two.
    assert_eq!(approvals_sent(&update(&mut s, key(KeyCode::Char('y')))), 0);
    assert_eq!(s.approvals.len(), 1);
    s.now += Duration::from_secs(1);
    assert_eq!(approvals_sent(&update(&mut s, key(KeyCode::Char('y')))), 1);
}

fn status_of(s: &AppState, id: &str) -> CallStatus {
    s.cells
        .iter()
        .find_map(|c| match c {
            Cell::ToolCall(t) if t.id == id => Some(t.status.clone()),
            _ => None,
        })
        .expect("the call's cell")
}

#[test]
fn a_prompt_flips_its_own_call_not_another_call_of_the_same_tool() {
    let start = Instant::now();
    let mut s = AppState::new(start);
    let tool = "mcp__demo_alpha__set";
    let hand = ToolCallView {
        by: Requester::Operator,
        ..call_started("operator-1", tool)
    };
    backend(&mut s, BackendEvent::ToolCallStarted(hand));
    backend(
        &mut s,
        BackendEvent::ToolCallStarted(call_started("c1", tool)),
    );
    // The Lead's call asks first, then the hand-made one.
    backend(
        &mut s,
        BackendEvent::ApprovalRequested(approval_for(1, tool, "c1")),
    );
    assert_eq!(status_of(&s, "c1"), CallStatus::AwaitingApproval);
    assert!(matches!(
        status_of(&s, "operator-1"),
        CallStatus::Running { .. }
    ));
    backend(
        &mut s,
        BackendEvent::ApprovalRequested(approval_for(2, tool, "operator-1")),
    );
    s.now += Duration::from_secs(2);
    update(&mut s, key(KeyCode::Char('y')));
    assert!(matches!(status_of(&s, "c1"), CallStatus::Running { .. }));
    assert_eq!(status_of(&s, "operator-1"), CallStatus::AwaitingApproval);
    // A prompt that arrives before its call's own event still marks it.
    backend(
        &mut s,
        BackendEvent::ApprovalRequested(approval_for(3, tool, "c2")),
    );
    backend(
        &mut s,
        BackendEvent::ToolCallStarted(call_started("c2", tool)),
    );
    assert_eq!(status_of(&s, "c2"), CallStatus::AwaitingApproval);
}
