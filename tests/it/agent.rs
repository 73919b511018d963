//! The agent loop with a model API on loopback (OpenAI wire format) and real
//! demo-server processes: snapshot semantics (SPEC rule 6), roles (rule 10),
//! interruption, provider failures and bad tool calls.

// Only the few Messages API events this file needs are used.
#[allow(dead_code)]
use crate::provider_anthropic::wire as anthropic_wire;
use crate::provider_openai::wire;

use std::sync::Arc;
use std::time::Duration;

use crate::common::TestEnv;
use crate::common::lead_session::{session, tool_names, tool_result};
use crate::common::model_stub::{ModelStub, Reply};
use mcp_harness::agent::events::{AgentEvent, TurnEnd};
use mcp_harness::agent::model::{AnthropicProvider, HttpSettings, RetryPolicy};
use mcp_harness::session::SessionEvent;
use serde_json::json;
use tokio_util::sync::CancellationToken;
use wire::{calls, text};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_connected_in_a_reply_is_offered_from_the_next_request() {
    let env = TestEnv::new();
    let stub = ModelStub::start(vec![
        calls(&[
            ("connect_mcp", json!({"alias": "demo_alpha"})),
            ("mcp__demo_alpha__lookup", json!({"key": "apple"})),
        ]),
        calls(&[
            ("mcp__demo_alpha__lookup", json!({"key": "apple"})),
            ("disconnect_mcp", json!({"alias": "demo_alpha"})),
            ("mcp__demo_alpha__lookup", json!({"key": "lime"})),
        ]),
        text("done"),
    ])
    .await;
    let mut s = session(&env, &stub, &[], "").await;
    let end = s
        .lead
        .send("connect alpha and look up apple", &CancellationToken::new())
        .await;
    assert_eq!(end, TurnEnd::Completed);
    let requests = stub.requests();
    assert_eq!(requests.len(), 3);
    assert!(!tool_names(&requests[0]).contains(&"mcp__demo_alpha__lookup".to_string()));
    assert!(
        tool_names(&requests[1]).contains(&"mcp__demo_alpha__lookup".to_string()),
        "the next request offers it"
    );
    // Same reply as the connect: not in that request's snapshot.
    let connected = tool_result(&requests[1], "call_0_connect_mcp");
    assert!(
        connected
            .as_str()
            .unwrap()
            .starts_with("connected `demo_alpha`"),
        "{connected}"
    );
    let early = &tool_result(&requests[1], "call_1_mcp__demo_alpha__lookup")["error"];
    assert_eq!(early["code"], "mcp_unknown_tool");
    let message = early["message"].as_str().unwrap();
    assert!(
        message.contains("not in this request's tool set") && message.contains("next request"),
        "{message}"
    );
    // Next reply: the call works; after a disconnect in the same reply, the
    // snapshot still names the tool but its connection is gone.
    assert!(
        tool_result(&requests[2], "call_0_mcp__demo_alpha__lookup")
            .as_str()
            .unwrap()
            .contains("apple = red")
    );
    let late = &tool_result(&requests[2], "call_2_mcp__demo_alpha__lookup")["error"];
    assert_eq!(late["code"], "mcp_not_connected", "{late}");
    assert!(!tool_names(&requests[2]).is_empty());
    s.hub.shutdown().await;
    env.assert_no_leaks();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn subagents_and_teammates_never_see_mcp_tools() {
    let env = TestEnv::new();
    let stub = ModelStub::start(vec![
        // Lead: connect beta, so there are MCP tools the others must not see.
        calls(&[("connect_mcp", json!({"alias": "demo_beta"}))]),
        calls(&[
            ("spawn_subagent", json!({"task": "count to three"})),
            (
                "ask_teammate",
                json!({"name": "reviewer", "message": "first"}),
            ),
        ]),
        // The subagent asks for MCP management anyway, then answers.
        calls(&[
            ("connect_mcp", json!({"alias": "demo_alpha"})),
            ("mcp__demo_beta__lookup", json!({"key": "oslo"})),
        ]),
        text("one two three"),
        // The teammate answers.
        text("noted: first"),
        text("all done"),
        // Second operator turn: the teammate remembers.
        calls(&[(
            "ask_teammate",
            json!({"name": "reviewer", "message": "second"}),
        )]),
        text("noted: second"),
        text("done again"),
    ])
    .await;
    let teammates = "[[teammates]]\nname = \"reviewer\"\nsystem_prompt = \"You review things.\"\n";
    let mut s = session(&env, &stub, &[], teammates).await;
    assert_eq!(
        s.lead.send("delegate", &CancellationToken::new()).await,
        TurnEnd::Completed
    );
    assert_eq!(
        s.lead.send("again", &CancellationToken::new()).await,
        TurnEnd::Completed
    );
    let r = stub.requests();
    assert_eq!(r.len(), 9);
    let read_only = ["read_file", "list_dir", "search_text"];
    // The Lead's pool has management and MCP tools.
    assert!(tool_names(&r[1]).contains(&"connect_mcp".to_string()));
    assert!(tool_names(&r[1]).contains(&"mcp__demo_beta__lookup".to_string()));
    for (i, role) in [
        (2, "subagent"),
        (3, "subagent"),
        (4, "teammate"),
        (7, "teammate"),
    ] {
        assert_eq!(
            tool_names(&r[i]),
            read_only,
            "request {i} ({role}) offered {:?}",
            tool_names(&r[i])
        );
    }
    let system = |i: usize| {
        r[i].body["messages"][0]["content"]
            .as_str()
            .unwrap_or_default()
            .to_string()
    };
    assert!(system(2).contains("You are a subagent"));
    assert!(system(4).contains("You review things."));
    // The subagent's request for MCP management and MCP tools was refused.
    assert_eq!(
        tool_result(&r[3], "call_0_connect_mcp")["error"]["code"],
        "mcp_unknown_tool"
    );
    assert_eq!(
        tool_result(&r[3], "call_1_mcp__demo_beta__lookup")["error"]["code"],
        "mcp_unknown_tool"
    );
    assert!(
        !s.hub
            .snapshot()
            .tools()
            .any(|t| t.alias.as_str() == "demo_alpha"),
        "the subagent connected nothing"
    );
    // Results flow back to the Lead.
    assert_eq!(
        tool_result(&r[5], "call_0_spawn_subagent"),
        json!("one two three")
    );
    assert_eq!(
        tool_result(&r[5], "call_1_ask_teammate"),
        json!("noted: first")
    );
    // The teammate kept its context: its second request holds the first exchange.
    let teammate_messages = r[7].body["messages"].to_string();
    assert!(
        teammate_messages.contains("first") && teammate_messages.contains("noted: first"),
        "{teammate_messages}"
    );
    // A subagent starts fresh every time.
    assert!(!r[2].body["messages"].to_string().contains("delegate"));
    s.hub.shutdown().await;
    env.assert_no_leaks();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_interrupted_turn_cancels_its_call_and_keeps_the_conversation_well_formed() {
    let env = TestEnv::new();
    let record = env.path("record.jsonl");
    let record_arg = record.to_string_lossy().into_owned();
    let stub = ModelStub::start(vec![
        calls(&[("connect_mcp", json!({"alias": "demo_alpha"}))]),
        calls(&[
            ("mcp__demo_alpha__slow", json!({"seconds": 30, "steps": 30})),
            ("list_mcp_servers", json!({})),
        ]),
        text("after the interruption"),
    ])
    .await;
    let mut s = session(&env, &stub, &["--record", &record_arg], "").await;
    let cancel = CancellationToken::new();
    let mut events = std::mem::replace(&mut s.events, tokio::sync::mpsc::unbounded_channel().1);
    let trigger = cancel.clone();
    let (elapsed_tx, mut elapsed_rx) = tokio::sync::mpsc::unbounded_channel();
    let (ran_tx, ran_rx) = tokio::sync::oneshot::channel();
    let seen_by_server = record.clone();
    tokio::spawn(async move {
        let mut ran_tx = Some(ran_tx);
        while let Some(event) = events.recv().await {
            let SessionEvent::Agent(event) = event else {
                continue;
            };
            if matches!(&event, AgentEvent::ToolCall { name, .. } if name == "mcp__demo_alpha__slow")
            {
                // Once the server has the call, the harness's clock for it runs:
                // let it run a while, and know for how long at least.
                wait_for_record(&seen_by_server, |r| {
                    r["event"] == "call" && r["name"] == "slow"
                })
                .await;
                let since = std::time::Instant::now();
                tokio::time::sleep(Duration::from_millis(300)).await;
                trigger.cancel();
                if let Some(tx) = ran_tx.take() {
                    let _ = tx.send(since.elapsed());
                }
            }
            if let AgentEvent::ToolResult { name, elapsed, .. } = &event {
                let _ = elapsed_tx.send((name.clone(), *elapsed));
            }
        }
    });
    assert_eq!(s.lead.send("go slow", &cancel).await, TurnEnd::Interrupted);
    // The cancelled call reports how long it ran, not zero.
    let (name, elapsed) = loop {
        let (name, elapsed) = elapsed_rx.recv().await.expect("a tool result event");
        if name == "mcp__demo_alpha__slow" {
            break (name, elapsed);
        }
    };
    let ran_at_least = ran_rx.await.expect("the cancel fired");
    assert!(
        elapsed >= ran_at_least,
        "{name}: {elapsed:?} < {ran_at_least:?}"
    );
    let last = s.lead.conversation.last().unwrap();
    let results: Vec<String> = last
        .content
        .iter()
        .map(|b| serde_json::to_string(b).unwrap())
        .collect();
    assert_eq!(results.len(), 2, "every call has a result: {results:?}");
    assert!(
        results.iter().all(|r| r.contains("interrupted")),
        "{results:?}"
    );
    // The server was told.
    wait_for_record(&record, |r| r["event"] == "cancelled").await;
    // The conversation can continue.
    assert_eq!(
        s.lead.send("continue", &CancellationToken::new()).await,
        TurnEnd::Completed
    );
    s.hub.shutdown().await;
    env.assert_no_leaks();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn provider_failures_leave_the_conversation_intact_and_retryable() {
    let env = TestEnv::new();
    let cut = Reply::sse(vec![wire::content("half a ")])
        .framing(crate::common::model_stub::Framing::ChunkedCutOff);
    let stub = ModelStub::start(vec![
        Reply::json(
            401,
            &wire::error_body(
                "Incorrect API key provided",
                "invalid_request_error",
                json!("invalid_api_key"),
            ),
        ),
        cut,
        text("finally"),
    ])
    .await;
    let mut s = session(&env, &stub, &[], "").await;
    let cancel = CancellationToken::new();
    let TurnEnd::Failed { message } = s.lead.send("hello", &cancel).await else {
        panic!("expected a failure")
    };
    assert!(message.contains("Incorrect API key provided"), "{message}");
    assert_eq!(
        s.lead.conversation.len(),
        1,
        "only the question; no half turn"
    );
    let TurnEnd::Failed { message } = s.lead.retry(&cancel).await else {
        panic!("expected a malformed stream")
    };
    assert!(message.contains("malformed"), "{message}");
    assert_eq!(s.lead.retry(&cancel).await, TurnEnd::Completed);
    assert_eq!(s.lead.conversation.len(), 2);
    assert_eq!(s.lead.conversation[1].text(), "finally");
    s.hub.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_tool_calls_get_envelopes_not_panics() {
    let env = TestEnv::new();
    std::fs::write(env.path("notes.txt"), "hello").unwrap();
    let stub = ModelStub::start(vec![
        calls(&[
            ("no_such_tool", json!({})),
            ("read_file", json!([1, 2])),
            ("read_file", json!({"path": "../../etc/passwd"})),
            ("read_file", json!({"path": "notes.txt"})),
        ]),
        text("ok"),
    ])
    .await;
    let mut s = session(&env, &stub, &[], "").await;
    assert_eq!(
        s.lead.send("try things", &CancellationToken::new()).await,
        TurnEnd::Completed
    );
    let r = &stub.requests()[1];
    assert_eq!(
        tool_result(r, "call_0_no_such_tool")["error"]["code"],
        "mcp_unknown_tool"
    );
    assert_eq!(
        tool_result(r, "call_1_read_file")["error"]["code"],
        "invalid_arguments"
    );
    assert_eq!(
        tool_result(r, "call_2_read_file")["error"]["code"],
        "tool_failed"
    );
    assert_eq!(tool_result(r, "call_3_read_file"), json!("hello"));
    s.hub.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_empty_reply_is_not_stored_and_the_next_request_has_no_empty_turn() {
    let env = TestEnv::new();
    // A Messages API reply that ends the turn with no content blocks at all.
    let mut empty = vec![anthropic_wire::start()];
    empty.extend(anthropic_wire::end("end_turn"));
    let stub = ModelStub::start(vec![
        Reply::sse(empty),
        Reply::sse(anthropic_wire::text_reply(&["here now"])),
    ])
    .await;
    let mut s = session(&env, &stub, &[], "").await;
    let settings = HttpSettings {
        base_url: stub.url(),
        api_key: Some("sk-ant-test".into()),
        model: "claude-test".into(),
        retry: RetryPolicy::default(),
    };
    s.lead.model = Arc::new(AnthropicProvider::new(settings));
    let cancel = CancellationToken::new();
    assert_eq!(s.lead.send("hello", &cancel).await, TurnEnd::Completed);
    assert_eq!(s.lead.send("anyone?", &cancel).await, TurnEnd::Completed);
    assert!(
        s.lead.conversation.iter().all(|m| !m.content.is_empty()),
        "{:?}",
        s.lead.conversation
    );
    let requests = stub.requests();
    assert_eq!(requests.len(), 2);
    let messages = requests[1].body["messages"].as_array().unwrap().clone();
    assert!(
        messages
            .iter()
            .all(|m| m["content"].as_array().is_some_and(|c| !c.is_empty())),
        "an empty turn was sent: {messages:?}"
    );
    let text = requests[1].body["messages"].to_string();
    assert!(text.contains("hello") && text.contains("anyone?"), "{text}");
    s.hub.shutdown().await;
}

/// Waits (generously) until the server's `--record` file has a matching line.
async fn wait_for_record(path: &std::path::Path, pred: impl Fn(&serde_json::Value) -> bool) {
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while !crate::common::records(path).iter().any(&pred) {
        assert!(
            std::time::Instant::now() < deadline,
            "never recorded by the server: {:?}",
            crate::common::records(path)
        );
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
}
