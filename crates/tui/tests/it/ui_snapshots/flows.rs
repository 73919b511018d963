//! Flow control on screen (issue 24): the status bar's `flow:` taint, the
//! rules view that clears it, the approval prompt of an escalated sink (its
//! `flow` line naming the tainting calls), and an explanation with the flow
//! and redaction lines.

use crossterm::event::KeyCode;
use mcp_harness::protocol::{BackendEvent, ExplainView, Rule, TaintView};
use mcp_harness::ui::msg::Msg;
use mcp_harness::ui::state::{AppState, Overlay};
use mcp_harness::ui::update::update;

use super::{backend, session, snapshot_at};
use crate::fixtures::{call_started, flow_approval};

const SIZES: [(u16, u16); 3] = [(80, 24), (120, 40), (60, 20)];

fn tainted() -> AppState {
    let mut s = session();
    backend(
        &mut s,
        BackendEvent::Taint(TaintView {
            untrusted: true,
            private: true,
        }),
    );
    s
}

#[test]
fn the_status_bar_and_the_rules_view_show_the_taint() {
    let mut s = tainted();
    snapshot_at("flow_status", &mut s, &SIZES);
    update(&mut s, Msg::Key(KeyCode::F(2).into()));
    snapshot_at("flow_rules", &mut s, &SIZES);
}

#[test]
fn an_escalated_sink_says_why_in_its_prompt() {
    let mut s = tainted();
    backend(
        &mut s,
        BackendEvent::ToolCallStarted(call_started("c9", "mcp__demo_alpha__set")),
    );
    let mut prompt = flow_approval(1, "mcp__demo_alpha__set");
    prompt.call_id = "c9".into();
    backend(&mut s, BackendEvent::ApprovalRequested(prompt));
    s.now += std::time::Duration::from_secs(2);
    snapshot_at("flow_approval", &mut s, &SIZES);
}

#[test]
fn an_explanation_names_the_flow_rule_and_the_redaction() {
    let mut s = tainted();
    s.overlay = Some(Overlay::Explain {
        call_id: "c9".into(),
        view: Some(ExplainView {
            call_id: "c9".into(),
            tool: "mcp__demo_alpha__set".into(),
            lines: vec![
                (
                    Rule::Policy,
                    "[servers.demo_alpha.tools] set = \"allow\" — /home/op/.config/mcp-harness/config.toml:14"
                        .into(),
                ),
                (
                    Rule::Flow,
                    "escalated to your approval whatever its policy says: flow rule on_trifecta: this tool is \
                     an external_sink and the session holds untrusted content and private data, from \
                     call_0_mcp__demo_beta__lookup (mcp__demo_beta__lookup), call_0_read_file (read_file)"
                        .into(),
                ),
                (
                    Rule::Redaction,
                    "credentials in the result were replaced for the model by [redacted: KIND] \
                     (aws_access_key); you see them as server output, the audit log names their kinds only"
                        .into(),
                ),
                (Rule::Outcome, "called at 12:02:00 UTC; ok in 3 ms".into()),
            ],
        }),
        scroll: 0,
    });
    snapshot_at("flow_explain", &mut s, &SIZES);
}

#[test]
fn a_sink_refused_by_flow_control_says_so_on_its_row() {
    use mcp_harness::protocol::{Decided, ToolOutcomeView};
    let mut s = tainted();
    backend(
        &mut s,
        BackendEvent::ToolCallStarted(call_started("c9", "mcp__demo_alpha__set")),
    );
    backend(
        &mut s,
        BackendEvent::ToolCallFinished(ToolOutcomeView {
            id: "c9".into(),
            ok: false,
            text: "`mcp__demo_alpha__set` was refused by local flow control; nothing was sent"
                .into(),
            code: Some("mcp_flow_denied".into()),
            server_output: None,
            elapsed_ms: 0,
            decided: Some(Decided::DeniedByFlow),
            flow: Some(
                "refused by flow control ([flows] on_trifecta): the session was tainted by \
                 c1 (mcp__demo_beta__lookup), c2 (read_file)"
                    .into(),
            ),
            dropped_nulls: Vec::new(),
        }),
    );
    snapshot_at("flow_refused_row", &mut s, &SIZES);
}

#[test]
fn a_clients_taint_shows_beside_the_serving_view_and_in_the_rules_view() {
    let mut s = session();
    s.serving = Some(mcp_harness::protocol::ServingView {
        addr: "127.0.0.1:8765".parse().unwrap(),
        sessions: 2,
    });
    backend(
        &mut s,
        BackendEvent::ClientTaint {
            client: "ide".into(),
            taint: TaintView {
                untrusted: true,
                private: true,
            },
        },
    );
    snapshot_at("flow_client_status", &mut s, &SIZES);
    update(&mut s, Msg::Key(KeyCode::F(2).into()));
    snapshot_at("flow_client_rules", &mut s, &SIZES);
}
