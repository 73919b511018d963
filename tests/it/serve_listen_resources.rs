//! A 2026-07-28 client of `serve --http` subscribes to resources the way that
//! revision says: `resourceSubscriptions` on its `subscriptions/listen`. The
//! gateway acknowledges only the URIs the client is offered, subscribes
//! upstream, and sends `notifications/resources/updated` for them on that
//! stream; when the stream ends, nobody watches and the upstream is
//! unsubscribed. The client is the official Python SDK's at
//! `mode="2026-07-28"` (`fixtures/listen_resources.py`); the upstream
//! `demo-server conformance`, which changes the watched resource on
//! `touch_watched` and says how many sessions it told (asked through the
//! TypeScript SDK's client, a 2025-11-25 session).

use std::time::{Duration, Instant};

use serde_json::json;

use crate::common::TestEnv;
use crate::common::interop::Interop;
use crate::serve::{Gateway, TOKEN_A, TOKEN_B};
use crate::serve_listen::Listener;
use crate::serve_subscribe::{WATCHED, client, config, touch};

#[cfg_attr(
    mcph_no_interop,
    ignore = "npm or python3 is missing: the interop tests install the pinned servers with them (docs/src/testing.md)"
)]
#[test]
fn a_listen_streams_resource_subscriptions_to_a_handshake_upstream() {
    resources_on_the_listen_stream("2025-11-25");
}

#[cfg_attr(
    mcph_no_interop,
    ignore = "npm or python3 is missing: the interop tests install the pinned servers with them (docs/src/testing.md)"
)]
#[test]
fn a_listen_streams_resource_subscriptions_to_a_2026_07_28_upstream() {
    resources_on_the_listen_stream("2026-07-28");
}

fn resources_on_the_listen_stream(protocol: &str) {
    let interop = Interop::get();
    let env = TestEnv::new();
    config(&env, "allow", protocol);
    let gateway = Gateway::start(&env);
    let mut bystander = client(&interop, &gateway.url, TOKEN_B);

    // One URI offered, one not: only the first is acknowledged.
    let listener = Listener::spawn(
        &interop,
        "listen_resources.py",
        &[&gateway.url, TOKEN_A, WATCHED, "test://nowhere"],
    );
    let ready = listener.next("its acknowledged subscription");
    assert_eq!(ready["protocol"], "2026-07-28", "{ready}");
    assert_eq!(
        ready["honored"]["resourceSubscriptions"],
        json!([WATCHED]),
        "{ready}"
    );

    // The gateway subscribed upstream (one session there), and the change
    // comes on the listen stream, under the URI the client named.
    assert!(touch(&mut bystander).contains("; 1 subscribed sessions told"));
    let event = listener.next("the update");
    assert_eq!(event["event"], "ResourceUpdated", "{event}");
    assert_eq!(event["uri"], WATCHED, "{event}");

    // The client goes (its stream with it): nobody watches, the gateway
    // unsubscribes upstream.
    drop(listener);
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let said = touch(&mut bystander);
        if said.contains("; 0 subscribed sessions told") {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the upstream subscription outlived its listen stream: {said}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    gateway.stop();
}

#[cfg_attr(
    mcph_no_interop,
    ignore = "npm or python3 is missing: the interop tests install the pinned servers with them (docs/src/testing.md)"
)]
#[test]
fn a_listen_is_not_acknowledged_resources_the_read_policy_denies() {
    let interop = Interop::get();
    let env = TestEnv::new();
    config(&env, "deny", "both");
    let gateway = Gateway::start(&env);
    let mut bystander = client(&interop, &gateway.url, TOKEN_B);
    let listener = Listener::spawn(
        &interop,
        "listen_resources.py",
        &[&gateway.url, TOKEN_A, WATCHED],
    );
    let ready = listener.next("its acknowledged subscription");
    let honored = &ready["honored"]["resourceSubscriptions"];
    assert!(
        honored.is_null() || *honored == json!([]),
        "nothing honoured: {ready}"
    );
    assert!(touch(&mut bystander).contains("; 0 subscribed sessions told"));
    drop(listener);
    gateway.stop();
}
