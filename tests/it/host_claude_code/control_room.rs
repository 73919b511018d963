//! Claude Code attached to the control room (`mcp-harness --serve` in tmux):
//! its `confirm` call waits in the operator's approval prompt, naming the
//! client, and `y` sends the upstream's answer back to Claude Code's model.
//! The capture in docs/src/serve.md is this run's screen.

use serde_json::json;

use super::{Model, claude_print, tool_calls, tool_result, two_requests};
use crate::common::TestEnv;
use crate::common::interop::Interop;
use crate::common::model_stub::Reply;
use crate::common::tmux::{Tmux, tui_command};
use crate::provider_anthropic::wire::text_reply;
use crate::serve::{TOKEN_A, audit_records, client_calls};

/// A free loopback port (released at once: the TUI binds it).
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
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
    let interop = Interop::get();
    let env = TestEnv::new();
    // demo_alpha: `set` confirm, `reset` deny; Claude Code is the client `claude`.
    env.config(&format!(
        "{}[servers.demo_alpha.tools]\nlookup = \"allow\"\nset = \"confirm\"\nreset = \"deny\"\n\
         fail = \"allow\"\nslow = \"allow\"\n\
         [serve.clients.claude]\ntoken_env = \"MCPH_TEST_TOKEN_A\"\n",
        env.demo("demo_alpha", "alpha", &[]),
    ));
    let port = free_port();
    let command = format!(
        "env MCPH_TEST_TOKEN_A={TOKEN_A} {} --serve 127.0.0.1:{port}",
        tui_command(&env)
    );
    let tmux = Tmux::start(&env, &command, 120, 40);
    tmux.wait("the gateway serving", |s| {
        s.contains(&format!("serving MCP at http://127.0.0.1:{port}/mcp"))
    });
    // The operator connects demo_alpha (the first alias); only then is it offered.
    tmux.keys(&["Tab", "Tab", "c"]);
    tmux.wait("demo_alpha ready", |s| s.contains("ready 4 tools"));

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
    let url = format!("http://127.0.0.1:{port}/mcp");
    let output = std::thread::scope(|scope| {
        let claude = scope.spawn(|| claude_print(&interop, &env, &model, &url));
        let screen = tmux.wait("Claude Code's call in the prompt, armed", |s| {
            s.contains("Approval needed")
                && s.contains(r#""value": "green""#)
                && s.contains("F3 put aside")
                && !s.contains("arming:")
        });
        assert!(screen.contains("requested by client claude"), "{screen}");
        assert!(
            screen.contains("tool         mcp__demo_alpha__set"),
            "{screen}"
        );
        tmux.keys(&["y"]);
        claude.join().unwrap()
    });
    let (_, answered) = two_requests(&model, &output);
    let (is_error, text) = tool_result(&answered, "toolu_0");
    assert!(!is_error, "{text}");
    assert_eq!(text, "apple = red (demo-alpha)");
    let (is_error, text) = tool_result(&answered, "toolu_1");
    assert!(!is_error, "{text}");
    assert_eq!(text, "stored apple = green");
    // (A row's tool name is cut to fit its width, so the rows are told apart
    // by their results.)
    tmux.wait("both of Claude Code's calls as its rows", |s| {
        s.matches("✓ client claude → demo_alp").count() == 2
            && s.contains("apple = red (demo-alpha)")
            && s.contains("approved once")
            && s.contains("stored apple = green")
    });

    tmux.keys(&["C-q"]);
    tmux.wait_gone();
    env.assert_no_leaks();
    let decisions: Vec<String> = client_calls(&env)
        .iter()
        .map(|r| format!("{} {} {}", r["client"], r["tool"], r["decision"]))
        .collect();
    assert_eq!(
        decisions,
        [
            r#""claude" "demo_alpha__lookup" "allow""#,
            r#""claude" "demo_alpha__set" "approved""#,
        ]
    );
    let approvals = audit_records(&env, "approval");
    assert_eq!(approvals.len(), 1, "{approvals:?}");
}
