//! A client's resource subscription through the control room ends with the
//! connection it was made on: the operator kills the upstream (its
//! subscriptions go with it) and connects it again; the new connection's
//! changes do not reach the client, and the upstream is not subscribed, until
//! the client subscribes again. The client is the TypeScript SDK's; the
//! upstream `demo-server conformance`, which changes the watched resource on
//! `touch_watched` and says how many sessions it told.

use serde_json::json;

use super::control_room::serve_room;
use crate::common::TestEnv;
use crate::common::interop::Interop;
use crate::common::tmux::Tmux;
use crate::serve_subscribe::{WATCHED, client, conformance_tools, touch, updated};

const TOKEN: &str = "token-for-the-subscribe-room-01";

fn room(env: &TestEnv, protocol: &str) -> (Tmux, String) {
    env.config(&format!(
        "{}[servers.conf.tools]\n{}[servers.conf.resources]\nread = \"allow\"\n\
         [serve]\nnames = \"bare\"\n\
         [serve.clients.claude]\ntoken_env = \"MCPH_TEST_SUB_TOKEN\"\n",
        env.demo("conf", "conformance", &["--protocol", protocol]),
        conformance_tools(),
    ));
    let (tmux, port) = serve_room(env, &[("MCPH_TEST_SUB_TOKEN", TOKEN)], 120);
    (tmux, format!("http://127.0.0.1:{port}/mcp"))
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
fn a_subscription_ends_with_its_connection_and_a_reconnect_does_not_revive_it() {
    ends_with_its_connection("2025-11-25");
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
fn a_2026_07_28_subscription_ends_with_its_connection_and_a_reconnect_does_not_revive_it() {
    ends_with_its_connection("2026-07-28");
}

fn ends_with_its_connection(protocol: &str) {
    let interop = Interop::get();
    let env = TestEnv::new();
    let (tmux, url) = room(&env, protocol);
    // Input → Conversation → Servers; conf is selected; c connects it.
    tmux.keys(&["Tab", "Tab", "c"]);
    tmux.wait("conf ready", |s| s.contains("ready"));

    let mut claude = client(&interop, &url, TOKEN);
    let answer = claude.ask(json!({"op": "subscribe", "uri": WATCHED}));
    assert_eq!(answer["ok"], true, "{answer}");
    assert!(touch(&mut claude).contains("; 1 subscribed sessions told"));
    let answer = claude.ask(json!({"op": "wait_updated", "count": 1}));
    assert_eq!(answer["updated"], json!([WATCHED]), "{answer}");

    // The operator kills the server: the client's resources come from
    // another connection now (none), and it is told so.
    tmux.keys(&["K"]);
    tmux.wait("the question", |s| s.contains("Kill conf?"));
    tmux.wait("the question to arm", |s| !s.contains("arming:"));
    tmux.keys(&["y"]);
    tmux.wait("the revocation", |s| s.contains("lost"));
    let changed = claude.ask(json!({"op": "wait_list_changed", "of": "resources"}));
    assert!(changed["list_changed"].as_u64().unwrap() >= 1, "{changed}");

    // Connected again: a new connection, to which the old subscription does
    // not carry over — the gateway did not subscribe it upstream, and what
    // changes there does not reach the client.
    tmux.keys(&["c"]);
    // v1 the first connect, v2 the revocation, v3 this one.
    tmux.wait("conf ready again", |s| {
        s.contains("Registry v3") && s.contains("ready")
    });
    let said = touch(&mut claude);
    assert!(said.contains("; 0 subscribed sessions told"), "{said}");
    // Another session subscribes on the new connection: its updates reach
    // that session, not claude's old subscription.
    let mut other = client(&interop, &url, TOKEN);
    let answer = other.ask(json!({"op": "subscribe", "uri": WATCHED}));
    assert_eq!(answer["ok"], true, "{answer}");
    assert!(touch(&mut claude).contains("; 1 subscribed sessions told"));
    let answer = other.ask(json!({"op": "wait_updated", "count": 1}));
    assert_eq!(answer["updated"], json!([WATCHED]), "{answer}");
    // Sent in the same pass as other's: nothing came to claude.
    assert_eq!(updated(&mut claude).len(), 1);

    // Subscribing again is what brings it back (the gateway is still one
    // session upstream).
    let answer = claude.ask(json!({"op": "subscribe", "uri": WATCHED}));
    assert_eq!(answer["ok"], true, "{answer}");
    assert!(touch(&mut claude).contains("; 1 subscribed sessions told"));
    let answer = claude.ask(json!({"op": "wait_updated", "count": 2}));
    assert_eq!(answer["updated"], json!([WATCHED, WATCHED]), "{answer}");

    tmux.keys(&["C-q"]);
    tmux.wait_gone();
    env.assert_no_leaks();
}
