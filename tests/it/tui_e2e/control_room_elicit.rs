//! A question an upstream asks during an outside client's call through the
//! control room (`--serve`) goes to the operator: the input form names the
//! client and the call, the operator answers it, and the client gets the
//! tool's result built from that answer. Headless `serve` declines instead
//! (`serve_elicit.rs`).

use serde_json::json;

use super::control_room::serve_room;
use crate::common::TestEnv;
use crate::common::interop::Interop;
use crate::serve::TsClient;
use crate::serve_elicit::config;

const TOKEN: &str = "token-for-the-elicit-room-0123";

#[cfg_attr(
    mcph_no_tmux,
    ignore = "tmux is not installed: install it (apt-get install tmux) to run the TUI tests"
)]
#[cfg_attr(
    mcph_no_interop,
    ignore = "npm or python3 is missing: the interop tests install the pinned servers with them (docs/src/testing.md)"
)]
#[test]
fn an_upstreams_question_during_a_clients_call_is_answered_by_the_operator() {
    let interop = Interop::get();
    let env = TestEnv::new();
    // A handshake upstream: its elicitation/create names no request, and the
    // form still names the call (the only one in flight on the connection).
    config(
        &env,
        "2025-11-25",
        "[serve.clients.claude]\ntoken_env = \"MCPH_TEST_EL_TOKEN\"\n",
    );
    let (tmux, port) = serve_room(&env, &[("MCPH_TEST_EL_TOKEN", TOKEN)], 120);
    tmux.keys(&["Tab", "Tab", "c"]);
    tmux.wait("demo_alpha ready", |s| s.contains("ready 7 tools"));

    let url = format!("http://127.0.0.1:{port}/mcp");
    let mut client = TsClient::start(&interop, &url, Some(TOKEN), None);
    assert_eq!(client.connect()["ok"], true);
    let asking = std::thread::spawn(move || {
        let answer = client.call(
            "demo_alpha__guarded_set",
            json!({"key": "apple", "value": "gold"}),
        );
        (client, answer)
    });
    let screen = tmux.wait("the form naming the client's call, armed", |s| {
        s.contains("Input requested")
            && s.contains("Store apple = gold?")
            && s.contains("F3 put aside")
            && !s.contains("arming:")
    });
    assert!(
        screen.contains("during outside client claude's call gw-"),
        "{screen}"
    );
    // The form comes filled with the server's default (confirm: true).
    tmux.keys(&["Enter"]);
    let (_client, answer) = asking.join().unwrap();
    assert_eq!(answer["isError"], false, "{answer}");
    assert!(
        answer.to_string().contains("stored apple = gold"),
        "the result built from the operator's answer: {answer}"
    );
    tmux.wait("the form gone", |s| !s.contains("Input requested"));

    tmux.keys(&["C-q"]);
    tmux.wait_gone();
    env.assert_no_leaks();
}
