//! The reducer without a terminal: whole-state changes for keys, paste and
//! backend events, and the effects it asks for.

mod approvals;
mod conversation;
mod editor;
mod flows;
pub mod forms;
mod hand_calls;
mod input;
mod keys;
mod mentions;
pub mod model;
mod readme_keys;
mod registry;
mod serving;
mod sign_in;
mod tasks;
mod windows;

use std::time::{Duration, Instant};

use crate::fixtures::{approval, approval_for, call_started, elicitation, servers};
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use mcp_harness::protocol::{
    BackendEvent, Command, Decision, ElicitAnswer, Requester, ToolOutcomeView,
};
use mcp_harness::ui::msg::{Effect, Msg};
use mcp_harness::ui::state::{AppState, CallStatus, Cell, Focus, Overlay};
use mcp_harness::ui::update::update;
use serde_json::Value;

pub fn key(code: KeyCode) -> Msg {
    Msg::Key(KeyEvent::new(code, KeyModifiers::NONE))
}

pub fn ctrl(c: char) -> Msg {
    Msg::Key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::CONTROL))
}

pub fn typed(state: &mut AppState, text: &str) {
    for c in text.chars() {
        update(state, key(KeyCode::Char(c)));
    }
}

pub fn backend(state: &mut AppState, event: BackendEvent) -> Vec<Effect> {
    update(state, Msg::Backend(event))
}

#[test]
fn ctrl_c_interrupts_a_running_turn_and_quits_when_idle() {
    let mut s = AppState::new(Instant::now());
    s.busy = true;
    assert_eq!(
        update(&mut s, ctrl('c')),
        vec![Effect::Send(Command::Interrupt)]
    );
    s.busy = false;
    assert_eq!(update(&mut s, ctrl('c')), vec![Effect::Send(Command::Quit)]);
    assert!(s.quitting);
    assert_eq!(backend(&mut s, BackendEvent::Stopped), vec![Effect::Exit]);
}

#[test]
fn approvals_queue_and_decide_with_y_a_n() {
    let mut s = AppState::new(Instant::now());
    backend(
        &mut s,
        BackendEvent::ToolCallStarted(call_started("c1", "mcp__demo_alpha__set")),
    );
    backend(
        &mut s,
        BackendEvent::ApprovalRequested(approval_for(7, "mcp__demo_alpha__set", "c1")),
    );
    backend(
        &mut s,
        BackendEvent::ApprovalRequested(approval(8, "mcp__demo_alpha__reset")),
    );
    assert_eq!(s.approvals.len(), 2);
    let Cell::ToolCall(call) = &s.cells[0] else {
        panic!()
    };
    assert_eq!(call.status, CallStatus::AwaitingApproval);
    s.now += Duration::from_secs(2);
    // Other keys do not vanish silently: they go where they were going; the
    // prompt and the footer say what the prompt wants.
    assert!(update(&mut s, key(KeyCode::Char('x'))).is_empty());
    assert_eq!(s.input_text(), "x");
    assert_eq!(s.scope(), mcp_harness::ui::keymap::Scope::Approval);
    // That key was typing: the prompt arms again after a pause.
    s.now += Duration::from_secs(2);
    assert_eq!(
        update(&mut s, key(KeyCode::Char('y'))),
        vec![Effect::Send(Command::Approval {
            id: 7,
            decision: Decision::Once
        })]
    );
    let Cell::ToolCall(call) = &s.cells[0] else {
        panic!()
    };
    assert!(matches!(call.status, CallStatus::Running { .. }));
    // The next prompt gets its own quiet second.
    s.now += Duration::from_secs(2);
    assert_eq!(
        update(&mut s, key(KeyCode::Esc)),
        vec![Effect::Send(Command::Approval {
            id: 8,
            decision: Decision::Deny
        })]
    );
    assert!(s.approvals.is_empty());
}

#[test]
fn streamed_text_merges_and_calls_finish() {
    let mut s = AppState::new(Instant::now());
    for part in ["Hel", "lo"] {
        backend(
            &mut s,
            BackendEvent::AssistantDelta {
                agent: Requester::Lead,
                text: part.into(),
            },
        );
    }
    backend(
        &mut s,
        BackendEvent::ToolCallStarted(call_started("c1", "mcp__demo_alpha__lookup")),
    );
    backend(
        &mut s,
        BackendEvent::ToolCallFinished(ToolOutcomeView {
            id: "c1".into(),
            ok: false,
            text: "did not answer".into(),
            code: Some("mcp_timeout".into()),
            server_output: None,
            elapsed_ms: 1500,
            decided: None,
            flow: None,
            dropped_nulls: Vec::new(),
        }),
    );
    assert_eq!(
        s.cells[0],
        Cell::Assistant {
            agent: Requester::Lead,
            text: "Hello".into(),
            streaming: false
        }
    );
    let Cell::ToolCall(call) = &s.cells[1] else {
        panic!()
    };
    assert_eq!(
        call.status,
        CallStatus::Failed {
            code: "mcp_timeout".into(),
            elapsed_ms: 1500
        }
    );
    assert!(!s.animating(), "nothing moves once the call ended");
}

#[test]
fn revoked_tools_stay_struck_out_in_place_until_the_next_key() {
    let start = Instant::now();
    let mut s = AppState::new(start);
    update(&mut s, crate::fixtures::views(servers()));
    s.focus = Focus::Registry;
    let before: Vec<String> = (0..s.rows().refs.len())
        .map(|i| s.registry_row(i).unwrap().tool().name.clone())
        .collect();
    backend(
        &mut s,
        BackendEvent::ToolsRevoked {
            alias: "demo_alpha".into(),
            tools: vec!["mcp__demo_alpha__lookup".into()],
            cause: mcp_harness::protocol::EndCause {
                kind: mcp_harness::protocol::EndKind::Killed,
                text: "server process killed by the operator".into(),
            },
        },
    );
    // The new views have no tools for alpha: its listing stays, struck out.
    let mut lost = servers();
    lost[0].state = mcp_harness::protocol::AliasStatus::Lost;
    lost[0].published = std::sync::Arc::from(Vec::new());
    update(&mut s, crate::fixtures::views(lost));
    let after: Vec<String> = (0..s.rows().refs.len())
        .map(|i| s.registry_row(i).unwrap().tool().name.clone())
        .collect();
    assert_eq!(after, before, "in place, in the same order");
    assert!(matches!(
        s.registry_row(0),
        Some(mcp_harness::ui::state::RegistryRow::Struck {
            alias: "demo_alpha",
            ..
        })
    ));
    assert!(!s.animating(), "no timer: they wait for a key");
    assert!(matches!(s.cells.last(), Some(Cell::Notice(n)) if n.contains("revoked 1 tools")));
    // A key right away (the y that confirmed the kill) leaves them…
    update(&mut s, key(KeyCode::Down));
    assert!(!s.struck.is_empty());
    // …the next one, later, puts them away.
    s.now = start + Duration::from_secs(5);
    update(&mut s, key(KeyCode::Down));
    assert!(s.struck.is_empty());
    assert_eq!(s.rows().refs.len(), 0, "alpha has no tools now");
}

#[test]
fn side_panel_keys_send_alias_commands_that_fit_the_selection() {
    let start = Instant::now();
    let mut s = AppState::new(start);
    update(&mut s, crate::fixtures::views(servers()));
    s.focus = Focus::Servers;
    // demo_alpha is connected: c says so instead of connecting it again.
    assert!(update(&mut s, key(KeyCode::Char('c'))).is_empty());
    assert!(s.status.as_ref().unwrap().0.contains("already connected"));
    assert_eq!(
        update(&mut s, key(KeyCode::Char('d'))),
        vec![Effect::Send(Command::Disconnect("demo_alpha".into()))]
    );
    // K asks first, armed like an approval: a y right away does nothing…
    assert!(update(&mut s, key(KeyCode::Char('K'))).is_empty());
    assert!(matches!(s.overlay, Some(Overlay::ConfirmKill { .. })));
    assert!(update(&mut s, key(KeyCode::Char('y'))).is_empty());
    assert!(matches!(s.overlay, Some(Overlay::ConfirmKill { .. })));
    // …after a quiet second it kills.
    s.now += Duration::from_secs(2);
    assert_eq!(
        update(&mut s, key(KeyCode::Char('y'))),
        vec![Effect::Send(Command::KillServer("demo_alpha".into()))]
    );
    assert_eq!(s.overlay, None);
    // n (or Esc) cancels at once.
    s.focus = Focus::Servers;
    update(&mut s, key(KeyCode::Char('K')));
    assert!(update(&mut s, key(KeyCode::Char('n'))).is_empty());
    assert_eq!(s.overlay, None);
    update(&mut s, key(KeyCode::Down));
    // demo_beta was rejected: c connects it; K has no process to kill.
    assert_eq!(
        update(&mut s, key(KeyCode::Char('c'))),
        vec![Effect::Send(Command::Connect("demo_beta".into()))]
    );
    assert!(update(&mut s, key(KeyCode::Char('K'))).is_empty());
    assert_eq!(s.overlay, None);
    // p on a policy_mismatch opens the confirmation; with no config file
    // (the embedded default) there is nothing to write into, so y does nothing…
    assert!(update(&mut s, key(KeyCode::Char('p'))).is_empty());
    assert_eq!(
        s.overlay,
        Some(Overlay::WritePolicy {
            alias: "demo_beta".into()
        })
    );
    assert!(update(&mut s, key(KeyCode::Char('y'))).is_empty());
    // …with one, y writes.
    s.session.config_file = Some("/home/op/.config/mcp-harness/config.toml".into());
    assert_eq!(
        update(&mut s, key(KeyCode::Char('y'))),
        vec![Effect::Send(Command::WritePolicy("demo_beta".into()))]
    );
}

#[test]
fn tab_cycles_focus_and_question_mark_opens_help_unless_typed_into_text() {
    let mut s = AppState::new(Instant::now());
    update(&mut s, key(KeyCode::Tab));
    assert_eq!(s.focus, Focus::Conversation);
    update(&mut s, key(KeyCode::Char('?')));
    assert_eq!(s.overlay, Some(Overlay::Help { scroll: 0 }));
    update(&mut s, key(KeyCode::Esc));
    assert_eq!(s.overlay, None);
    // In the empty input box, as its placeholder says, ? opens help…
    s.focus = Focus::Input;
    update(&mut s, key(KeyCode::Char('?')));
    assert_eq!(s.overlay, Some(Overlay::Help { scroll: 0 }));
    update(&mut s, key(KeyCode::Esc));
    // …and in a message it is a question mark; F1 still opens help.
    typed(&mut s, "why?");
    assert_eq!(s.overlay, None);
    assert_eq!(s.input_text(), "why?");
    update(&mut s, key(KeyCode::F(1)));
    assert_eq!(s.overlay, Some(Overlay::Help { scroll: 0 }));
}

#[test]
fn ctrl_c_in_a_window_closes_it_and_neither_interrupts_nor_quits() {
    let mut s = AppState::new(Instant::now());
    s.busy = true;
    s.overlay = Some(Overlay::Help { scroll: 0 });
    assert!(update(&mut s, ctrl('c')).is_empty());
    assert_eq!(s.overlay, None);
    assert!(!s.quitting);
    // At the top level, with the turn running, it interrupts.
    assert_eq!(
        update(&mut s, ctrl('c')),
        vec![Effect::Send(Command::Interrupt)]
    );
    s.busy = false;
    // Nothing connected: it quits at once.
    assert_eq!(update(&mut s, ctrl('c')), vec![Effect::Send(Command::Quit)]);
}

#[test]
fn an_elicitation_form_is_prefilled_edited_checked_and_sent() {
    let mut s = AppState::new(Instant::now());
    backend(&mut s, BackendEvent::ElicitationRequested(elicitation(3)));
    use mcp_harness::ui::state::FieldValue;
    assert_eq!(
        s.elicitations[0].values,
        [
            FieldValue::One(Some(1)),
            FieldValue::Text("5".into()),
            FieldValue::Bool(None)
        ]
    );
    s.now += Duration::from_secs(2);
    // ← picks the other choice; ↓ moves to the shade; typing edits it.
    update(&mut s, key(KeyCode::Left));
    update(&mut s, key(KeyCode::Down));
    update(&mut s, key(KeyCode::Backspace));
    typed(&mut s, "x");
    assert!(
        update(&mut s, key(KeyCode::Enter)).is_empty(),
        "not a whole number: not sent"
    );
    assert_eq!(
        s.elicitations[0].problems[1].as_deref(),
        Some("a whole number"),
        "on its field"
    );
    assert_eq!(s.elicitations[0].selected, 1, "the focus goes to it");
    update(&mut s, key(KeyCode::Backspace));
    typed(&mut s, "7");
    update(&mut s, key(KeyCode::Down));
    update(&mut s, key(KeyCode::Char(' ')));
    let effects = update(&mut s, key(KeyCode::Enter));
    let expected = serde_json::json!({"colour": "red", "shade": 7, "bold": true});
    let Value::Object(content) = expected else {
        unreachable!()
    };
    assert_eq!(
        effects,
        vec![Effect::Send(Command::Elicitation {
            id: 3,
            answer: ElicitAnswer::Accept(content)
        })]
    );
    // It waits for the backend's word (which checks it once more).
    assert!(s.elicitations[0].sent);
    backend(&mut s, BackendEvent::ElicitationWithdrawn(3));
    assert!(s.elicitations.is_empty());
    // Esc cancels, Ctrl-D declines.
    backend(&mut s, BackendEvent::ElicitationRequested(elicitation(4)));
    s.now += Duration::from_secs(2);
    assert_eq!(
        update(&mut s, key(KeyCode::Esc)),
        vec![Effect::Send(Command::Elicitation {
            id: 4,
            answer: ElicitAnswer::Cancel
        })]
    );
    backend(&mut s, BackendEvent::ElicitationRequested(elicitation(5)));
    s.now += Duration::from_secs(2);
    assert_eq!(
        update(&mut s, ctrl('d')),
        vec![Effect::Send(Command::Elicitation {
            id: 5,
            answer: ElicitAnswer::Decline
        })]
    );
}

#[test]
fn a_form_that_arrives_while_the_operator_types_does_not_take_their_enter() {
    let mut s = AppState::new(Instant::now());
    typed(&mut s, "hel");
    backend(&mut s, BackendEvent::ElicitationRequested(elicitation(7)));
    // Still typing: the keys, Enter included, go to the input box.
    s.now += Duration::from_millis(300);
    typed(&mut s, "lo");
    s.now += Duration::from_millis(300);
    let effects = update(&mut s, key(KeyCode::Enter));
    assert!(
        effects
            .iter()
            .any(|e| matches!(e, Effect::Send(Command::Prompt(m)) if m.text == "hello")),
        "{effects:?}"
    );
    assert_eq!(s.elicitations.len(), 1, "the form is still waiting");
    // After a quiet second the form takes keys.
    s.now += Duration::from_secs(1);
    assert!(s.form_armed());
    let effects = update(&mut s, key(KeyCode::Enter));
    assert!(
        matches!(
            &effects[..],
            [Effect::Send(Command::Elicitation { id: 7, .. })]
        ),
        "{effects:?}"
    );
}
