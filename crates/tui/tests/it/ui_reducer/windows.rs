//! A window the operator opens keeps its keys until it closes (issue 21, item
//! 7): a prompt or form that waits meanwhile is put aside with a badge and
//! comes back, arming anew, when the window closes — or on F3. While a prompt
//! is shown, the panes under it get no keys (issue 20, deliverable 6).

use std::time::{Duration, Instant};

use crossterm::event::{KeyCode, KeyModifiers};
use mcp_harness::protocol::{BackendEvent, Command, Decision};
use mcp_harness::ui::keymap::Scope;
use mcp_harness::ui::msg::{Effect, Msg};
use mcp_harness::ui::state::{AppState, Focus, Overlay};
use mcp_harness::ui::update::update;

use super::{backend, ctrl, key, typed};
use crate::fixtures::{approval, elicitation, servers, views};

fn connected() -> AppState {
    let mut s = AppState::new(Instant::now());
    update(&mut s, views(servers()));
    s
}

fn approvals_sent(effects: &[Effect]) -> usize {
    effects
        .iter()
        .filter(|e| matches!(e, Effect::Send(Command::Approval { .. })))
        .count()
}

/// The call-by-hand editor of the registry's second row (`set`).
fn open_editor(s: &mut AppState) {
    s.focus = Focus::Registry;
    update(s, key(KeyCode::Down));
    update(s, key(KeyCode::Char('x')));
    assert!(matches!(s.overlay, Some(Overlay::CallTool(_))));
}

#[test]
fn a_prompt_behind_the_call_editor_waits_aside_and_esc_is_the_editors() {
    let mut s = connected();
    open_editor(&mut s);
    backend(
        &mut s,
        BackendEvent::ApprovalRequested(approval(1, "mcp__demo_alpha__set")),
    );
    assert!(s.aside, "it waits behind the window");
    assert!(!s.prompt_shown());
    assert_eq!(s.scope(), Scope::CallTool, "the editor keeps its keys");
    // Long after the quiet second, Esc is still the editor's: it closes it
    // (on main it denied the Lead's call).
    s.now += Duration::from_secs(3);
    assert!(!s.prompt_armed(), "a prompt aside never arms");
    assert_eq!(approvals_sent(&update(&mut s, key(KeyCode::Esc))), 0);
    assert_eq!(s.overlay, None);
    // The window closed: the prompt is back, and arms anew.
    assert!(s.prompt_shown());
    assert_eq!(s.scope(), Scope::Approval);
    assert!(!s.prompt_armed(), "it comes back arming");
    assert_eq!(approvals_sent(&update(&mut s, key(KeyCode::Char('y')))), 0);
    s.now += Duration::from_secs(1);
    assert_eq!(
        update(&mut s, key(KeyCode::Char('y'))),
        vec![Effect::Send(Command::Approval {
            id: 1,
            decision: Decision::Once
        })]
    );
}

#[test]
fn help_opened_over_a_prompt_takes_esc_and_gives_the_prompt_back() {
    let mut s = connected();
    backend(
        &mut s,
        BackendEvent::ApprovalRequested(approval(2, "mcp__demo_alpha__set")),
    );
    s.now += Duration::from_secs(2);
    assert!(s.prompt_armed());
    // F1 opens help (a window of the operator's): the prompt steps aside.
    assert!(update(&mut s, key(KeyCode::F(1))).is_empty());
    assert!(matches!(s.overlay, Some(Overlay::Help { .. })));
    assert!(s.aside);
    s.now += Duration::from_secs(2);
    // Esc closes help; it does not deny.
    assert_eq!(approvals_sent(&update(&mut s, key(KeyCode::Esc))), 0);
    assert_eq!(s.overlay, None);
    assert!(s.prompt_shown() && !s.prompt_armed());
    s.now += Duration::from_secs(1);
    assert_eq!(
        update(&mut s, key(KeyCode::Esc)),
        vec![Effect::Send(Command::Approval {
            id: 2,
            decision: Decision::Deny
        })]
    );
}

#[test]
fn f3_puts_a_prompt_aside_and_brings_it_over_a_window_and_back() {
    let mut s = connected();
    backend(
        &mut s,
        BackendEvent::ApprovalRequested(approval(3, "mcp__demo_alpha__set")),
    );
    s.now += Duration::from_secs(2);
    // Aside: the panes have their keys again.
    update(&mut s, key(KeyCode::F(3)));
    assert!(s.aside && !s.prompt_shown());
    open_editor(&mut s);
    typed(&mut s, " ");
    // F3 from the editor: the prompt comes over it, arming anew.
    update(&mut s, key(KeyCode::F(3)));
    assert!(s.prompt_shown());
    assert_eq!(s.scope(), Scope::Approval);
    assert_eq!(approvals_sent(&update(&mut s, key(KeyCode::Char('y')))), 0);
    // Under the prompt, the editor gets nothing (Ctrl-S does not send).
    assert!(
        update(
            &mut s,
            Msg::Key(crossterm::event::KeyEvent::new(
                KeyCode::Char('s'),
                KeyModifiers::CONTROL
            ))
        )
        .is_empty()
    );
    s.now += Duration::from_secs(1);
    assert_eq!(approvals_sent(&update(&mut s, key(KeyCode::Char('y')))), 1);
    // Answered: the editor has its keys again, what was typed still in it.
    assert_eq!(s.scope(), Scope::CallTool);
    let effects = update(&mut s, ctrl('s'));
    assert!(
        matches!(&effects[..], [Effect::Send(Command::CallTool { name, .. })] if name == "mcp__demo_alpha__set"),
        "{effects:?}"
    );
    // Nothing waits: F3 says so.
    update(&mut s, key(KeyCode::F(3)));
    assert!(s.status.as_ref().unwrap().0.contains("nothing waits"));
}

#[test]
fn an_armed_prompt_gives_the_servers_pane_under_it_no_keys() {
    let mut s = connected();
    s.focus = Focus::Servers;
    backend(
        &mut s,
        BackendEvent::ApprovalRequested(approval(4, "mcp__demo_alpha__set")),
    );
    s.now += Duration::from_secs(2);
    assert!(s.prompt_armed());
    // Disconnect, connect, reconnect, kill, write policy, sign in, resources,
    // Tab: none reaches the pane hidden under the prompt (on main `d`
    // disconnected demo_alpha).
    for c in ['d', 'c', 'r', 'K', 'p', 's', 'R'] {
        assert!(update(&mut s, key(KeyCode::Char(c))).is_empty(), "{c}");
    }
    update(&mut s, key(KeyCode::Tab));
    assert_eq!(s.overlay, None, "K asked nothing");
    assert_eq!(s.focus, Focus::Servers);
    let (said, _) = s.status.clone().expect("it says what the prompt wants");
    assert!(said.contains("y approve once"), "{said}");
    // The prompt's own keys still work (after a pause: those were keys).
    s.now += Duration::from_secs(1);
    assert_eq!(
        update(&mut s, key(KeyCode::Char('y'))),
        vec![Effect::Send(Command::Approval {
            id: 4,
            decision: Decision::Once
        })]
    );
    // Answered: the pane has its keys again.
    assert!(matches!(
        &update(&mut s, key(KeyCode::Char('d')))[..],
        [Effect::Send(Command::Disconnect(_))]
    ));
}

#[test]
fn a_form_behind_a_window_waits_aside_and_esc_closes_the_window() {
    let mut s = connected();
    open_editor(&mut s);
    backend(&mut s, BackendEvent::ElicitationRequested(elicitation(5)));
    assert!(s.aside && !s.form_shown());
    s.now += Duration::from_secs(3);
    // On main the armed form took Esc as its cancel.
    assert!(update(&mut s, key(KeyCode::Esc)).is_empty());
    assert_eq!(s.overlay, None);
    assert!(s.form_shown() && !s.form_armed(), "back, arming anew");
    s.now += Duration::from_secs(1);
    assert_eq!(
        update(&mut s, key(KeyCode::Esc)),
        vec![Effect::Send(Command::Elicitation {
            id: 5,
            answer: mcp_harness::protocol::ElicitAnswer::Cancel
        })]
    );
}
