//! Claude Code attached to the control room (`mcp-harness --serve` in tmux):
//! its `confirm` call waits in the operator's approval prompt, naming the
//! client, and `y` sends the upstream's answer back to Claude Code's model.
//! The captures in docs/src/serve.md are of such a run. The room's helpers
//! serve the other hosts' tests too.

use serde_json::{Value, json};

use super::{Model, claude_print, messages_api, over_http, tool_calls, tool_result, two_requests};
use crate::common::interop::Interop;
use crate::common::model_stub::Reply;
use crate::common::tmux::Tmux;
use crate::common::{BIN, TestEnv};
use crate::provider_anthropic::wire::text_reply;
use crate::serve::{TOKEN_A, audit_records, client_calls};
use crate::tui_e2e::control_room::serve_room;

/// The control room on a free port, serving demo_alpha (`set` confirm,
/// `reset` deny, connected by the operator) to `client`, whose token is
/// `TOKEN_A`; and the URL it serves at.
pub(crate) fn open_room(env: &TestEnv, client: &str) -> (Tmux, String) {
    env.config(&format!(
        "{}[servers.demo_alpha.tools]\nlookup = \"allow\"\nset = \"confirm\"\nreset = \"deny\"\n\
         fail = \"allow\"\nslow = \"allow\"\n\
         [serve.clients.{client}]\ntoken_env = \"MCPH_TEST_TOKEN_A\"\n",
        env.demo("demo_alpha", "alpha", &[]),
    ));
    let (tmux, port) = serve_room(env, &[("MCPH_TEST_TOKEN_A", TOKEN_A)], 120);
    // The operator connects demo_alpha (the first alias); only then is it offered.
    tmux.keys(&["Tab", "Tab", "c"]);
    tmux.wait("demo_alpha ready", |s| s.contains("ready 4 tools"));
    (tmux, format!("http://127.0.0.1:{port}/mcp"))
}

/// Waits for `client`'s call of `set` to apple = green in the prompt, armed,
/// and approves it once.
pub(crate) fn approve_green(tmux: &Tmux, client: &str) {
    let screen = tmux.wait("the host's call in the prompt, armed", |s| {
        s.contains("Approval needed")
            && s.contains(r#""value": "green""#)
            && s.contains("F3 put aside")
            && !s.contains("arming:")
    });
    assert!(
        screen.contains(&format!("requested by client {client}")),
        "{screen}"
    );
    assert!(
        screen.contains("tool         mcp__demo_alpha__set"),
        "{screen}"
    );
    // One host is one client in the status bar, whatever its revision: a
    // 2026-07-28 host's requests are not sessions (its listen stream is).
    assert!(screen.contains("· 1 client "), "{screen}");
    tmux.keys(&["y"]);
}

/// After the host's run: both of its calls are rows (lookup, then the
/// approved set), the TUI quits, and the audit log has them and the approval.
pub(crate) fn close_room(tmux: &Tmux, env: &TestEnv, client: &str) {
    // (A row's tool name is cut to fit its width, so the rows are told apart
    // by their results.)
    tmux.wait("both of the host's calls as its rows", |s| {
        s.matches(&format!("✓ client {client} → demo_alp")).count() == 2
            && s.contains("apple = red (demo-alpha)")
            && s.contains("approved once")
            && s.contains("stored apple = green")
    });
    tmux.keys(&["C-q"]);
    tmux.wait_gone();
    env.assert_no_leaks();
    let decisions: Vec<String> = client_calls(env)
        .iter()
        .map(|r| format!("{} {} {}", r["client"], r["tool"], r["decision"]))
        .collect();
    assert_eq!(
        decisions,
        [
            format!(r#""{client}" "demo_alpha__lookup" "allow""#),
            format!(r#""{client}" "demo_alpha__set" "approved""#),
        ]
    );
    let approvals = audit_records(env, "approval");
    assert_eq!(approvals.len(), 1, "{approvals:?}");
    assert_eq!(approvals[0]["requested_by"], format!("client {client}"));
}

/// Claude Code's run against the room, `server` its entry for `h`: it looks
/// apple up and sets it to green, which the operator approves.
fn approved_in_the_room(server: impl FnOnce(&TestEnv, &str) -> Value) {
    let interop = Interop::get();
    let env = TestEnv::new();
    let (tmux, url) = open_room(&env, "claude");
    let model = Model::start(vec![
        tool_calls(&[
            ("mcp__h__demo_alpha__lookup", json!({"key": "apple"})),
            (
                "mcp__h__demo_alpha__set",
                json!({"key": "apple", "value": "green"}),
            ),
        ]),
        Reply::sse(text_reply(&["done"])),
    ]);
    let server = server(&env, &url);
    let output = std::thread::scope(|scope| {
        let claude = scope.spawn(|| claude_print(&interop, &env, &model, server));
        approve_green(&tmux, "claude");
        claude.join().unwrap()
    });
    let (_, answered) = two_requests(&model, &output, "claude -p", messages_api);
    let (is_error, text) = tool_result(&answered, "toolu_0");
    assert!(!is_error, "{text}");
    assert_eq!(text, "apple = red (demo-alpha)");
    let (is_error, text) = tool_result(&answered, "toolu_1");
    assert!(!is_error, "{text}");
    assert_eq!(text, "stored apple = green");
    close_room(&tmux, &env, "claude");
}

#[cfg_attr(
    mcph_no_tmux,
    ignore = "tmux is not installed: install it (apt-get install tmux) to run the TUI tests"
)]
#[cfg_attr(
    mcph_no_interop,
    ignore = "npm or python3 is missing: the interop tests install the pinned servers with them (docs/src/testing.md)"
)]
#[test]
fn claude_codes_confirm_call_is_approved_in_the_control_room() {
    approved_in_the_room(|_, url| over_http(url));
}

/// Claude Code spawning `mcp-harness serve --stdio --client claude` (a
/// `.mcp.json` entry), which relays to the control room of the same config:
/// the same rows, the same prompt.
#[cfg_attr(
    mcph_no_tmux,
    ignore = "tmux is not installed: install it (apt-get install tmux) to run the TUI tests"
)]
#[cfg_attr(
    mcph_no_interop,
    ignore = "npm or python3 is missing: the interop tests install the pinned servers with them (docs/src/testing.md)"
)]
#[test]
fn claude_code_over_stdio_is_relayed_to_the_control_room() {
    approved_in_the_room(|env, _| {
        let dir = env.path("");
        json!({
            "command": BIN,
            "args": ["--config", env.path("config.toml"), "serve", "--stdio", "--client", "claude"],
            // The room's dirs (tui_command's): its relay socket is in xdg-run.
            "env": {
                "XDG_CONFIG_HOME": dir.join("xdg-config"),
                "XDG_DATA_HOME": dir.join("xdg-data"),
                "XDG_RUNTIME_DIR": dir.join("xdg-run"),
            },
        })
    });
}
