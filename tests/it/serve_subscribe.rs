//! `resources/subscribe` through `serve --http`: the official TypeScript SDK's
//! client (`fixtures/serve_client.mjs`) subscribes to a resource of
//! `demo-server conformance`, which changes it on `touch_watched` and tells
//! its subscribers. Only the subscribed sessions hear of it, each under the
//! URI it subscribed with; an unsubscribe or a session that ends stops it,
//! and once nobody watches, the gateway unsubscribes upstream (the upstream
//! says how many sessions it told: 0).

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::common::TestEnv;
use crate::common::interop::Interop;
use crate::serve::{Gateway, TOKEN_A, TOKEN_B, TsClient};

pub(crate) const WATCHED: &str = "test://watched-resource";

/// The policy of `demo-server conformance`'s tools: the two the tests call
/// `allow`, the rest `deny`.
pub(crate) fn conformance_tools() -> String {
    crate::serve_conformance::conformance_policy(|t| match t {
        "test_simple_text" | "touch_watched" => "allow",
        _ => "deny",
    })
}

pub(crate) fn config(env: &TestEnv, read: &str, protocol: &str) {
    env.config(&format!(
        "{}[servers.conf.tools]\n{}[servers.conf.resources]\nread = \"{read}\"\n\
         [serve]\nnames = \"bare\"\n\
         [serve.clients.claude]\ntoken_env = \"MCPH_TEST_TOKEN_A\"\n\
         [serve.clients.ci]\ntoken_env = \"MCPH_TEST_TOKEN_B\"\n",
        env.demo("conf", "conformance", &["--protocol", protocol]),
        conformance_tools(),
    ));
}

pub(crate) fn client(interop: &Interop, url: &str, token: &str) -> TsClient {
    let mut client = TsClient::start(interop, url, Some(token), None);
    let connected = client.connect();
    assert_eq!(connected["ok"], true, "{connected}");
    client
}

pub(crate) fn updated(client: &mut TsClient) -> Vec<Value> {
    let answer = client.ask(json!({"op": "updated"}));
    answer["updated"].as_array().cloned().unwrap_or_default()
}

/// How many sessions the upstream told when the resource changed.
pub(crate) fn touch(client: &mut TsClient) -> String {
    let result = client.call("touch_watched", json!({}));
    result["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("{result}"))
        .to_string()
}

#[cfg_attr(
    mcph_no_interop,
    ignore = "npm or python3 is missing: the interop tests install the pinned servers with them (docs/src/testing.md)"
)]
#[test]
fn a_subscription_reaches_the_subscribed_session_only_and_ends_upstream_when_nobody_watches() {
    // 2026-07-28 upstream: a subscriptions/listen per resource.
    subscribed_through_the_gateway("2026-07-28");
}

#[cfg_attr(
    mcph_no_interop,
    ignore = "npm or python3 is missing: the interop tests install the pinned servers with them (docs/src/testing.md)"
)]
#[test]
fn a_subscription_to_a_handshake_upstream_is_its_resources_subscribe() {
    subscribed_through_the_gateway("2025-11-25");
}

fn subscribed_through_the_gateway(protocol: &str) {
    let interop = Interop::get();
    let env = TestEnv::new();
    config(&env, "allow", protocol);
    let gateway = Gateway::start(&env);
    let mut claude = client(&interop, &gateway.url, TOKEN_A);
    let mut ci = client(&interop, &gateway.url, TOKEN_B);
    let mut bystander = client(&interop, &gateway.url, TOKEN_B);

    let capabilities = claude.ask(json!({"op": "capabilities"}));
    assert_eq!(
        capabilities["capabilities"]["resources"]["subscribe"], true,
        "{capabilities}"
    );
    // A URI that is not offered is refused as a read would be.
    let refused = claude.ask(json!({"op": "subscribe", "uri": "test://nowhere"}));
    assert_eq!(refused["code"], -32002, "{refused}");

    for c in [&mut claude, &mut ci] {
        let answer = c.ask(json!({"op": "subscribe", "uri": WATCHED}));
        assert_eq!(answer["ok"], true, "{answer}");
    }
    // The gateway is one session upstream, however many clients subscribe.
    assert!(touch(&mut bystander).contains("; 1 subscribed sessions told"));
    for c in [&mut claude, &mut ci] {
        let answer = c.ask(json!({"op": "wait_updated", "count": 1}));
        assert_eq!(answer["updated"], json!([WATCHED]), "{answer}");
    }
    // Sent in the same pass as the others': a session that did not
    // subscribe heard nothing.
    assert_eq!(updated(&mut bystander), Vec::<Value>::new());

    // claude unsubscribes; ci still hears, claude does not.
    let answer = claude.ask(json!({"op": "unsubscribe", "uri": WATCHED}));
    assert_eq!(answer["ok"], true, "{answer}");
    assert!(touch(&mut bystander).contains("; 1 subscribed sessions told"));
    let answer = ci.ask(json!({"op": "wait_updated", "count": 2}));
    assert_eq!(answer["updated"], json!([WATCHED, WATCHED]), "{answer}");
    assert_eq!(updated(&mut claude).len(), 1);

    // ci's session ends (DELETE): nobody watches, the gateway unsubscribes
    // upstream.
    let closed = ci.ask(json!({"op": "end_session"}));
    assert_eq!(closed["ok"], true, "{closed}");
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let said = touch(&mut bystander);
        if said.contains("; 0 subscribed sessions told") {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the upstream subscription outlived its last watcher: {said}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    assert_eq!(updated(&mut claude).len(), 1);
    gateway.stop();
}

#[cfg_attr(
    mcph_no_interop,
    ignore = "npm or python3 is missing: the interop tests install the pinned servers with them (docs/src/testing.md)"
)]
#[test]
fn a_subscription_is_refused_where_the_read_policy_denies_and_nothing_is_sent() {
    let interop = Interop::get();
    let env = TestEnv::new();
    config(&env, "deny", "both");
    let gateway = Gateway::start(&env);
    let mut claude = client(&interop, &gateway.url, TOKEN_A);
    let refused = claude.ask(json!({"op": "subscribe", "uri": WATCHED}));
    assert_eq!(refused["code"], -32002, "{refused}");
    assert!(touch(&mut claude).contains("; 0 subscribed sessions told"));
    gateway.stop();
}
