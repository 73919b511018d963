//! The keys of issue 13, one by one: Ctrl-C by layer, the double Ctrl-C, the
//! pane keys 1–4, letters in list panes, undo/redo, hints that follow the
//! selection, the rules and explain windows, Ctrl-R after a resume, and Enter
//! on a paused replay.

use std::sync::Arc;
use std::time::{Duration, Instant};

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use mcp_harness::protocol::{
    BackendEvent, Command, Decision, ElicitAnswer, ExplainView, GrantView, HistoryItem, Rule, Views,
};
use mcp_harness::ui::keymap::Action;
use mcp_harness::ui::msg::{Effect, Msg};
use mcp_harness::ui::state::{AppState, Cell, Focus, Overlay};
use mcp_harness::ui::update::update;

use super::{backend, ctrl, key, typed};
use crate::fixtures::{approval, call_started, elicitation, servers, views};

fn alt(c: char) -> Msg {
    Msg::Key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::ALT))
}

fn connected() -> AppState {
    let mut s = AppState::new(Instant::now());
    update(&mut s, views(servers()));
    s
}

#[test]
fn ctrl_c_closes_the_topmost_window_first() {
    let mut s = connected();
    // A prompt: Ctrl-C closes it as a denial, armed or not.
    backend(
        &mut s,
        BackendEvent::ApprovalRequested(approval(4, "mcp__demo_alpha__set")),
    );
    assert_eq!(
        update(&mut s, ctrl('c')),
        vec![Effect::Send(Command::Approval {
            id: 4,
            decision: Decision::Deny
        })]
    );
    assert!(s.approvals.is_empty());
    // A form: cancelled.
    backend(&mut s, BackendEvent::ElicitationRequested(elicitation(5)));
    assert_eq!(
        update(&mut s, ctrl('c')),
        vec![Effect::Send(Command::Elicitation {
            id: 5,
            answer: ElicitAnswer::Cancel
        })]
    );
    assert!(s.elicitations.is_empty());
    // The call editor: closed, nothing else (it used to quit the whole app).
    s.focus = Focus::Registry;
    update(&mut s, key(KeyCode::Char('x')));
    assert!(matches!(s.overlay, Some(Overlay::CallTool(_))));
    assert!(update(&mut s, ctrl('c')).is_empty());
    assert_eq!(s.overlay, None);
    assert!(!s.quitting);
    // The filter being typed: cleared.
    update(&mut s, key(KeyCode::Char('/')));
    typed(&mut s, "se");
    assert!(update(&mut s, ctrl('c')).is_empty());
    assert_eq!(s.filter, None);
}

#[test]
fn quitting_with_servers_connected_takes_a_second_ctrl_c_within_a_second() {
    let mut s = connected();
    assert!(
        update(&mut s, ctrl('c')).is_empty(),
        "demo_alpha is connected"
    );
    assert!(!s.quitting);
    assert!(s.status.as_ref().unwrap().0.contains("press Ctrl-C again"));
    // Too late: it asks again.
    s.now += Duration::from_millis(1500);
    assert!(update(&mut s, ctrl('c')).is_empty());
    // In time: it quits, closing every server.
    s.now += Duration::from_millis(400);
    assert_eq!(update(&mut s, ctrl('c')), vec![Effect::Send(Command::Quit)]);
    assert!(s.quitting);
    // Ctrl-Q quits at once, whatever is connected.
    let mut s = connected();
    assert_eq!(update(&mut s, ctrl('q')), vec![Effect::Send(Command::Quit)]);
}

#[test]
fn digits_go_to_the_panes_from_a_list_and_alt_digits_from_anywhere() {
    let mut s = connected();
    // In the input box a digit is text…
    typed(&mut s, "2");
    assert_eq!(s.input_text(), "2");
    // …Alt-2 goes to Servers from there.
    update(&mut s, alt('2'));
    assert_eq!(s.focus, Focus::Servers);
    for (c, focus) in [
        ('3', Focus::Registry),
        ('4', Focus::Health),
        ('1', Focus::Conversation),
        ('2', Focus::Servers),
    ] {
        update(&mut s, key(KeyCode::Char(c)));
        assert_eq!(s.focus, focus, "{c}");
    }
    assert_eq!(s.input_text(), "2", "no digit reached the input box");
}

#[test]
fn letters_in_any_list_pane_never_reach_the_input_box() {
    for focus in [
        Focus::Conversation,
        Focus::Servers,
        Focus::Registry,
        Focus::Health,
    ] {
        let mut s = connected();
        s.focus = focus;
        // Keys no list pane binds.
        for c in ['w', 'b', 'z', 'v', 'Q'] {
            update(&mut s, key(KeyCode::Char(c)));
        }
        assert_eq!(s.input_text(), "", "{focus:?}");
        assert_eq!(s.focus, focus, "{focus:?}");
        assert!(
            s.status.as_ref().unwrap().0.contains("is not a key in"),
            "it says so: {:?}",
            s.status
        );
        // i (or Esc) goes to the input box.
        update(&mut s, key(KeyCode::Char('i')));
        assert_eq!(s.focus, Focus::Input);
    }
}

#[test]
fn undo_and_redo_are_ctrl_z_and_ctrl_y_in_the_editor_and_the_input_box() {
    let mut s = connected();
    typed(&mut s, "abc");
    update(&mut s, ctrl('z'));
    assert_ne!(s.input_text(), "abc");
    update(&mut s, ctrl('y'));
    assert_eq!(s.input_text(), "abc");
    s.focus = Focus::Registry;
    update(&mut s, key(KeyCode::Char('x')));
    let text = |s: &AppState| match &s.overlay {
        Some(Overlay::CallTool(editor)) => editor.text(),
        _ => panic!("no editor"),
    };
    let before = text(&s);
    typed(&mut s, "q");
    assert_ne!(text(&s), before);
    update(&mut s, ctrl('z'));
    assert_eq!(text(&s), before);
    update(&mut s, ctrl('y'));
    assert_ne!(text(&s), before);
}

#[test]
fn hints_follow_the_selections_state() {
    let mut s = connected();
    s.focus = Focus::Servers;
    // demo_alpha is ready: no connect; disconnect, reconnect, kill.
    assert!(!s.offers(Action::Connect));
    assert!(s.offers(Action::Disconnect) && s.offers(Action::Reconnect) && s.offers(Action::Kill));
    assert!(!s.offers(Action::WritePolicy));
    // demo_beta was rejected: connect and write the policy; nothing to kill.
    update(&mut s, key(KeyCode::Down));
    assert!(s.offers(Action::Connect) && s.offers(Action::WritePolicy));
    assert!(!s.offers(Action::Disconnect) && !s.offers(Action::Kill));
    // The registry: a denied tool has details but cannot be called by hand.
    s.focus = Focus::Registry;
    s.selected_server = 0;
    s.selected_tool = 2;
    assert!(
        s.offers(Action::Detail) && !s.offers(Action::CallByHand),
        "reset: denied"
    );
    s.selected_tool = 1;
    assert!(s.offers(Action::CallByHand), "set: exposed");
}

#[test]
fn explain_takes_the_footer_from_an_older_message() {
    let mut s = connected();
    backend(
        &mut s,
        BackendEvent::ToolCallStarted(call_started("c7", "mcp__demo_alpha__lookup")),
    );
    s.focus = Focus::Conversation;
    // A message from before (here: e on no call) is still up when e opens it.
    s.cells.push(Cell::Notice("a notice".into()));
    update(&mut s, key(KeyCode::Char('G')));
    update(&mut s, key(KeyCode::Down));
    update(&mut s, key(KeyCode::Char('e')));
    assert!(s.status.is_some(), "e on a notice says what e is for");
    update(&mut s, key(KeyCode::Up));
    update(&mut s, key(KeyCode::Char('e')));
    assert!(matches!(s.overlay, Some(Overlay::Explain { .. })));
    assert_eq!(
        s.status, None,
        "the window's keys are the footer, not the old message"
    );
    update(&mut s, key(KeyCode::Esc));
    assert_eq!(s.status, None, "and it does not come back when it closes");
}

#[test]
fn explain_asks_the_backend_about_the_selected_call_and_shows_its_answer() {
    let mut s = connected();
    backend(
        &mut s,
        BackendEvent::ToolCallStarted(call_started("c7", "mcp__demo_alpha__lookup")),
    );
    s.focus = Focus::Conversation;
    assert_eq!(
        update(&mut s, key(KeyCode::Char('e'))),
        vec![Effect::Send(Command::Explain("c7".into()))]
    );
    let view = ExplainView {
        call_id: "c7".into(),
        tool: "mcp__demo_alpha__lookup".into(),
        lines: vec![(Rule::Policy, "lookup = \"allow\"".into())],
    };
    backend(&mut s, BackendEvent::Explained(view.clone()));
    assert!(matches!(&s.overlay, Some(Overlay::Explain { view: Some(v), .. }) if *v == view));
    update(&mut s, key(KeyCode::Esc));
    assert_eq!(s.overlay, None);
    // On an entry that is not a call, e says what it is for.
    s.cells.push(Cell::Notice("a notice".into()));
    update(&mut s, key(KeyCode::Char('G')));
    update(&mut s, key(KeyCode::Down));
    assert!(update(&mut s, key(KeyCode::Char('e'))).is_empty());
}

#[test]
fn rules_revoke_a_grant_and_save_one_after_a_confirmation() {
    let mut s = connected();
    let grant = GrantView {
        id: 3,
        tool: "mcp__demo_alpha__set".into(),
        alias: Some("demo_alpha".into()),
        remote_name: Some("set".into()),
        given_at: "12:00:00 UTC".into(),
        uses: 2,
        client: None,
    };
    update(
        &mut s,
        Msg::Views(Views {
            servers: Arc::from(servers()),
            snapshot: 4,
            grants: Arc::from(vec![grant]),
            serving: None,
        }),
    );
    update(&mut s, key(KeyCode::F(2)));
    assert!(matches!(s.overlay, Some(Overlay::Rules { .. })));
    assert_eq!(
        update(&mut s, key(KeyCode::Char('d'))),
        vec![Effect::Send(Command::RevokeGrant(3))]
    );
    // No config file (the embedded default): nothing to save into.
    assert!(update(&mut s, key(KeyCode::Char('s'))).is_empty());
    assert!(s.status.as_ref().unwrap().0.contains("no config file"));
    // With one, s asks first, and y writes.
    s.session.config_file = Some("/home/op/.config/mcp-harness/config.toml".into());
    assert!(update(&mut s, key(KeyCode::Char('s'))).is_empty());
    assert!(matches!(
        s.overlay,
        Some(Overlay::Rules {
            saving: Some(3),
            ..
        })
    ));
    assert_eq!(
        update(&mut s, key(KeyCode::Char('y'))),
        vec![Effect::Send(Command::SaveGrant(3))]
    );
    // n cancels the question, Esc then closes the window.
    update(&mut s, key(KeyCode::Char('s')));
    update(&mut s, key(KeyCode::Char('n')));
    assert!(matches!(
        s.overlay,
        Some(Overlay::Rules { saving: None, .. })
    ));
    update(&mut s, key(KeyCode::Esc));
    assert_eq!(s.overlay, None);
}

#[test]
fn a_resumed_session_is_on_screen_and_ctrl_r_reconnects_its_servers() {
    let mut s = AppState::new(Instant::now());
    let mut call = call_started("c1", "mcp__demo_alpha__lookup");
    call.arguments = serde_json::json!({"key": "apple"});
    backend(
        &mut s,
        BackendEvent::Resumed {
            history: vec![
                HistoryItem::User("show me".into()),
                HistoryItem::Assistant {
                    agent: mcp_harness::protocol::Requester::Lead,
                    text: "Looking it up.".into(),
                },
                HistoryItem::Call(Box::new((call, None))),
            ],
            connected: vec!["demo_alpha".into(), "demo_beta".into()],
        },
    );
    assert!(s.cells.iter().any(|c| *c == Cell::User("show me".into())));
    assert!(s.cells.iter().any(|c| matches!(c, Cell::ToolCall(_))));
    assert!(matches!(s.cells.last(), Some(Cell::Notice(n)) if n.contains("Ctrl-R")));
    assert_eq!(
        update(&mut s, ctrl('r')),
        vec![
            Effect::Send(Command::Connect("demo_alpha".into())),
            Effect::Send(Command::Connect("demo_beta".into()))
        ]
    );
    assert!(update(&mut s, ctrl('r')).is_empty(), "once");
}

#[test]
fn enter_on_an_empty_input_box_goes_on_with_a_paused_replay() {
    let mut s = connected();
    backend(&mut s, BackendEvent::ReplayPaused { seconds: 10 });
    assert_eq!(
        update(&mut s, key(KeyCode::Enter)),
        vec![Effect::Send(Command::Continue)]
    );
    // With text in the box, Enter still sends it (and says a turn runs).
    backend(&mut s, BackendEvent::ReplayResumed);
    assert!(
        update(&mut s, key(KeyCode::Enter)).is_empty(),
        "nothing to send"
    );
}

#[test]
fn a_stray_character_in_the_box_of_a_paused_replay_says_to_clear_it() {
    let mut s = connected();
    s.busy = true;
    backend(&mut s, BackendEvent::ReplayPaused { seconds: 10 });
    typed(&mut s, "x");
    // Enter neither goes on nor sends; it says what does (not "a turn is
    // running", a dead end while the replay waits for an empty Enter).
    assert!(update(&mut s, key(KeyCode::Enter)).is_empty());
    let said = &s.status.as_ref().unwrap().0;
    assert!(
        said.contains("clear the input box, then Enter goes on"),
        "{said}"
    );
    assert_eq!(s.input_text(), "x", "the text stays");
    update(&mut s, key(KeyCode::Backspace));
    assert_eq!(
        update(&mut s, key(KeyCode::Enter)),
        vec![Effect::Send(Command::Continue)]
    );
}

#[test]
fn a_prompt_under_the_call_editor_leaves_the_editor_its_keys() {
    // The editor is open when a prompt arrives: Ctrl-S (no prompt key) sends
    // the hand-made call, and the prompt still waits for y/a/n.
    let mut s = connected();
    s.focus = Focus::Registry;
    update(&mut s, key(KeyCode::Down));
    update(&mut s, key(KeyCode::Char('x')));
    backend(
        &mut s,
        BackendEvent::ApprovalRequested(approval(9, "mcp__demo_alpha__set")),
    );
    s.now += Duration::from_secs(2);
    let effects = update(&mut s, ctrl('s'));
    assert!(
        matches!(&effects[..], [Effect::Send(Command::CallTool { name, .. })] if name == "mcp__demo_alpha__set"),
        "{effects:?}"
    );
    assert_eq!(s.approvals.len(), 1);
}
