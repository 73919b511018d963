//! Whose call a 2025-11-25 `elicitation/create` came during, with two calls
//! in flight on one connection (an outside client's `slow`, another's
//! `guarded_set`, which asks): over Streamable HTTP the question arrives on
//! the response stream of the request that carries the call, and rmcp says
//! which, so the question names that call by its `CallId`; over stdio nothing
//! relates it to a request, so it names none rather than guess, and lists the
//! calls it may have come during (the form says it cannot tell which). The
//! demo server runs as a real process on both transports.

use std::sync::{Arc, Mutex};

use futures::future::BoxFuture;
use mcp_harness::mcp::{
    CallIdentity, ElicitationRequest, ElicitationResponse, Elicitor, FlagApprover, McpEvent,
};
use mcp_harness::protocol::{CallId, Requester};
use serde_json::json;

use crate::common::TestEnv;
use crate::common::hubs::{http_demo, hub_builder, wait_for};

const TOOLS: &str = "lookup = \"allow\"\nset = \"allow\"\nreset = \"allow\"\nfail = \"allow\"\n\
                     slow = \"allow\"\nresearch = \"allow\"\nguarded_set = \"allow\"\n";

/// Declines every question, keeping what it was asked.
#[derive(Default)]
struct Recording(Mutex<Vec<ElicitationRequest>>);

impl Elicitor for Recording {
    fn elicit(&self, request: ElicitationRequest) -> BoxFuture<'_, ElicitationResponse> {
        self.0.lock().unwrap().push(request);
        Box::pin(std::future::ready(ElicitationResponse::Decline))
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn over_http_a_question_names_the_call_whose_request_it_came_on() {
    let env = TestEnv::new();
    let (mut server, url) = http_demo(&env, "alpha", &["--protocol", "2025-11-25", "--extras"]);
    let config = format!("[servers.web]\nurl = \"{url}\"\n[servers.web.tools]\n{TOOLS}");
    let asked = asked_with_two_calls_in_flight(&env, &config).await;
    assert_eq!(
        asked.call.map(|c| (c.id, c.requester)),
        Some((
            CallId::from("asks"),
            Requester::Client("claude".to_string())
        ))
    );
    assert!(asked.may_be.is_empty(), "{:?}", asked.may_be);
    server.kill().unwrap();
    server.wait().unwrap();
    env.assert_no_leaks();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn over_stdio_a_question_with_two_calls_in_flight_names_none() {
    let env = TestEnv::new();
    let config = format!(
        "{}[servers.web.tools]\n{TOOLS}",
        env.demo("web", "alpha", &["--protocol", "2025-11-25", "--extras"])
    );
    let asked = asked_with_two_calls_in_flight(&env, &config).await;
    assert_eq!(asked.call, None, "a guess would be wrong half the time");
    // Both calls, by identity, in their ids' order.
    let may_be: Vec<(CallId, Requester)> = asked
        .may_be
        .into_iter()
        .map(|c| (c.id, c.requester))
        .collect();
    assert_eq!(
        may_be,
        [
            (
                CallId::from("asks"),
                Requester::Client("claude".to_string())
            ),
            (CallId::from("waits"), Requester::Client("ci".to_string())),
        ]
    );
    env.assert_no_leaks();
}

/// `ci`'s `slow` in flight (its progress has come), then `claude`'s
/// `guarded_set`, which asks a question: the question as the elicitor got it.
async fn asked_with_two_calls_in_flight(env: &TestEnv, config: &str) -> ElicitationRequest {
    let recording = Arc::new(Recording::default());
    let (builder, mut rx) = hub_builder(env, config);
    let hub = builder
        .elicitor(Arc::clone(&recording) as Arc<dyn Elicitor>)
        .build();
    hub.connect("web").await.unwrap().outcome.unwrap();
    let snapshot = hub.snapshot();
    let approver = FlagApprover { approve: true };
    let waits = CallIdentity::new("waits", Requester::Client("ci".to_string()));
    let asks = CallIdentity::new("asks", Requester::Client("claude".to_string()));
    let mut slow = Box::pin(hub.call_as(
        &snapshot,
        "mcp__web__slow",
        json!({"seconds": 60, "steps": 60}),
        &approver,
        &waits,
    ));
    let in_flight = wait_for(
        &mut rx,
        |e| matches!(e, McpEvent::Progress { call: Some(id), .. } if *id == waits.id),
    );
    tokio::select! {
        _ = in_flight => {}
        outcome = &mut slow => panic!("slow ended first: {:?}", outcome.result),
    }
    let guarded = hub.call_as(
        &snapshot,
        "mcp__web__guarded_set",
        json!({"key": "apple", "value": "gold"}),
        &approver,
        &asks,
    );
    let outcome = tokio::select! {
        outcome = guarded => outcome,
        outcome = &mut slow => panic!("slow ended first: {:?}", outcome.result),
    };
    let text = outcome.result.expect("guarded_set answers").content[0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(
        text.contains("decline"),
        "the server heard the decline: {text}"
    );
    // Giving up on `slow` cancels it.
    drop(slow);
    hub.shutdown().await;
    let mut asked = recording.0.lock().unwrap();
    assert_eq!(asked.len(), 1, "one question");
    asked.remove(0)
}
