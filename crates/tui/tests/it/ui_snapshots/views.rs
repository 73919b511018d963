//! Snapshots of issue 13's views at 80×24, 120×40 and a narrow 60×20: the
//! registry's filter, the rules (and "save to config?"), an explanation, a form
//! with every field type, a resumed session, a withdrawn prompt, "kill?", a
//! paused replay, and call rows that say how they were decided.

use std::sync::Arc;
use std::time::Duration;

use crossterm::event::KeyCode;
use mcp_harness::protocol::{
    BackendEvent, Decided, ExplainView, GrantView, HistoryItem, PolicyEffect, Requester, Rule,
    Views, Withdrawal,
};
use mcp_harness::ui::msg::Msg;
use mcp_harness::ui::state::{AppState, Focus, Overlay};
use mcp_harness::ui::update::update;

use super::{backend, finished, session, snapshot_at};
use crate::fixtures::{approval_for, call_started, servers, servers_at};

/// Three sizes: the two common ones and a narrow one.
const SIZES: [(u16, u16); 3] = [(80, 24), (120, 40), (60, 20)];

fn snapshot3(name: &str, state: &mut AppState) {
    snapshot_at(name, state, &SIZES);
}

fn key(code: KeyCode) -> Msg {
    Msg::Key(crossterm::event::KeyEvent::from(code))
}

fn typed(s: &mut AppState, text: &str) {
    for c in text.chars() {
        update(s, key(KeyCode::Char(c)));
    }
}

fn grants(s: &mut AppState) {
    let opened = s.now - Duration::from_secs(60);
    let grant = |id, tool: &str, uses| GrantView {
        id,
        tool: tool.into(),
        alias: Some("demo_alpha".into()),
        remote_name: tool.rsplit("__").next().map(Into::into),
        given_at: "12:01:00 UTC".into(),
        uses,
        client: None,
    };
    update(
        s,
        Msg::Views(Views {
            servers: Arc::from(servers_at(opened)),
            snapshot: 4,
            grants: Arc::from(vec![
                grant(1, "mcp__demo_alpha__set", 2),
                grant(2, "mcp__demo_alpha__reset", 0),
            ]),
            serving: None,
        }),
    );
}

#[test]
fn the_registry_filtered() {
    let mut s = session();
    s.focus = Focus::Registry;
    update(&mut s, key(KeyCode::Char('/')));
    typed(&mut s, "o");
    snapshot3("filter", &mut s);
    typed(&mut s, "nothing-like-it");
    snapshot3("filter_empty", &mut s);
}

#[test]
fn the_rules_and_saving_a_grant() {
    let mut s = session();
    grants(&mut s);
    s.session.config_file = Some("/home/op/.config/mcp-harness/config.toml".into());
    update(&mut s, key(KeyCode::F(2)));
    snapshot3("rules", &mut s);
    update(&mut s, key(KeyCode::Char('s')));
    snapshot3("rules_save", &mut s);
    let mut empty = session();
    update(&mut empty, key(KeyCode::F(2)));
    snapshot3("rules_empty", &mut empty);
}

#[test]
fn an_explanation() {
    let mut s = session();
    s.overlay = Some(Overlay::Explain {
        call_id: "c3".into(),
        view: Some(ExplainView {
            call_id: "c3".into(),
            tool: "mcp__demo_alpha__set".into(),
            lines: vec![
                (
                    Rule::Policy,
                    "[servers.demo_alpha.tools] set = \"confirm\" — /home/op/.config/mcp-harness/config.toml:14"
                        .into(),
                ),
                (
                    Rule::Schema,
                    "the arguments satisfied the tool's input schema (checked before anything was sent)"
                        .into(),
                ),
                (
                    Rule::Approval,
                    "not asked: a session grant covers this exact definition on this connection (grant #1, given 12:01:00 UTC)"
                        .into(),
                ),
                (Rule::Outcome, "called at 12:02:00 UTC; ok in 3 ms".into()),
            ],
        }),
        scroll: 0,
    });
    snapshot3("explain", &mut s);
}

#[test]
fn a_form_with_every_field_type() {
    let mut s = session();
    backend(
        &mut s,
        BackendEvent::ElicitationRequested(crate::ui_reducer::forms::every_field(1)),
    );
    s.now += Duration::from_secs(2);
    // A refused send: the problems on their fields.
    update(&mut s, key(KeyCode::Enter));
    snapshot3("form_every_field", &mut s);
}

#[test]
fn a_resumed_session() {
    let s = session();
    let mut call = call_started("r1", "mcp__demo_alpha__lookup");
    call.by = Requester::Lead;
    let mut outcome = match finished("r1", true, "apple = red (demo-alpha)", None, None) {
        BackendEvent::ToolCallFinished(o) => o,
        _ => unreachable!(),
    };
    // What the audit log kept: each row keeps its decision word.
    outcome.decided = Some(Decided::AllowedByPolicy);
    let mut granted = call_started("r2", "mcp__demo_alpha__set");
    granted.effect = Some(PolicyEffect::Confirm);
    // A long result, cut: the harness's note (where all of it is) ends it.
    let cut = format!(
        "{}\n[mcp-harness: the result has 300000 bytes of text; 8000 are shown \
         (max_result_bytes). All of it is saved as results/r2.txt; read_result \
         {{\"call_id\": \"r2\", \"offset\": 8000}} reads on from where this stops.]",
        crate::fixtures::long_text(12)
    );
    let mut granted_outcome = match finished("r2", true, &cut, None, None) {
        BackendEvent::ToolCallFinished(o) => o,
        _ => unreachable!(),
    };
    granted_outcome.decided = Some(Decided::SessionGrant(1));
    let mut fresh = AppState::new(s.now);
    fresh.session = s.session.clone();
    update(&mut fresh, crate::fixtures::views(servers()));
    backend(
        &mut fresh,
        BackendEvent::Resumed {
            history: vec![
                HistoryItem::User("what colour is an apple?".into()),
                HistoryItem::Assistant {
                    agent: Requester::Lead,
                    text: "Asking demo_alpha.".into(),
                },
                HistoryItem::Call(Box::new((call, Some(outcome)))),
                HistoryItem::Call(Box::new((granted, Some(granted_outcome)))),
                HistoryItem::Assistant {
                    agent: Requester::Lead,
                    text: "Red.".into(),
                },
            ],
            connected: vec!["demo_alpha".into()],
        },
    );
    snapshot3("resumed", &mut fresh);
}

#[test]
fn a_withdrawn_prompt_and_decided_call_rows() {
    let mut s = session();
    // Rows that say how they were decided.
    for (id, decided, ok) in [
        ("d1", Decided::ApprovedOnce, true),
        ("d2", Decided::SessionGrant(1), true),
        ("d3", Decided::DeniedByOperator, false),
        ("d4", Decided::RefusedBySchema, false),
    ] {
        backend(
            &mut s,
            BackendEvent::ToolCallStarted(call_started(id, "mcp__demo_alpha__set")),
        );
        let mut done = match finished(
            id,
            ok,
            "done",
            (!ok).then_some("mcp_permission_denied"),
            None,
        ) {
            BackendEvent::ToolCallFinished(o) => o,
            _ => unreachable!(),
        };
        done.decided = Some(decided);
        backend(&mut s, BackendEvent::ToolCallFinished(done));
    }
    // A prompt withdrawn because its server died: off the screen, with a notice.
    backend(
        &mut s,
        BackendEvent::ToolCallStarted(call_started("w1", "mcp__demo_alpha__set")),
    );
    backend(
        &mut s,
        BackendEvent::ApprovalRequested(approval_for(7, "mcp__demo_alpha__set", "w1")),
    );
    backend(
        &mut s,
        BackendEvent::ApprovalWithdrawn {
            id: 7,
            why: Withdrawal::Revoked("connection lost: killed by signal 9".into()),
        },
    );
    backend(
        &mut s,
        BackendEvent::Notice(
            "withdrew the approval prompt for `mcp__demo_alpha__set`: its tools were revoked (connection lost: killed by signal 9)".into(),
        ),
    );
    snapshot3("withdrawn", &mut s);
}

#[test]
fn kill_asks_and_a_paused_replay_says_so() {
    let mut s = session();
    s.focus = Focus::Servers;
    update(&mut s, key(KeyCode::Char('K')));
    snapshot3("confirm_kill", &mut s);
    let mut s = session();
    backend(&mut s, BackendEvent::ReplayPaused { seconds: 10 });
    snapshot3("paused", &mut s);
}
