//! The Anthropic provider against a loopback server speaking the Messages API
//! stream format byte for byte (tests/common/model_stub.rs).

mod errors;
pub mod wire;

use std::time::Duration;

use crate::common::model_run::{
    ask, round_trip_conversation, settings, started, texts, tool_inputs,
};
use crate::common::model_stub::{Framing, ModelStub, Reply, refused_url, split_at};
use mcp_harness::agent::conversation::{Block, Message, ToolCall, ToolDef};
use mcp_harness::agent::model::{
    AnthropicProvider, ModelError, ModelProvider, ModelReply, ModelRequest, StopReason,
    StreamEvent, Usage,
};
use serde_json::{Value, json};
use wire::*;

const KEY: &str = "sk-ant-test-key";

/// One request with a user question against `url`.
async fn ask_hi(url: &str) -> (Result<ModelReply, ModelError>, Vec<StreamEvent>) {
    ask_with(url, &[Message::user_text("hi")], &[]).await
}

async fn ask_with(
    url: &str,
    messages: &[Message],
    tools: &[ToolDef],
) -> (Result<ModelReply, ModelError>, Vec<StreamEvent>) {
    let provider = AnthropicProvider::new(settings(url.to_string(), Some(KEY), "claude-test"));
    ask(&provider, messages, tools).await
}

#[tokio::test]
async fn streams_text_deltas_in_order() {
    let stub = ModelStub::start(vec![Reply::sse(text_reply(&["Hel", "lo, ", "wörld 🦀"]))]).await;
    let (reply, events) = ask_hi(&stub.url()).await;
    let reply = reply.expect("reply");
    assert_eq!(texts(&events), ["Hel", "lo, ", "wörld 🦀"]);
    assert_eq!(
        reply.content,
        [Block::Text {
            text: "Hello, wörld 🦀".into()
        }]
    );
    assert_eq!(reply.stop_reason, StopReason::EndTurn);
    assert_eq!(
        reply.usage,
        Some(Usage {
            input_tokens: 25,
            output_tokens: 15
        })
    );
}

#[tokio::test]
async fn survives_awkward_byte_boundaries() {
    // CRLF line endings, cut inside a 4-byte and a 2-byte character, inside
    // `data:`, between `\r` and `\n`, and one whole event a byte at a time.
    let body = text_reply(&["crab 🦀 ", "naïve ", "end"])
        .concat()
        .replace('\n', "\r\n");
    let bytes = body.as_bytes();
    let crab = body.find('🦀').expect("crab");
    let i_umlaut = body.find('ï').expect("ï");
    let data = body.find("data:").expect("data");
    let crlf = body.find("\r\n").expect("crlf");
    let last = body
        .rfind("event: content_block_delta")
        .expect("last delta");
    let last_end = last + body[last..].find("\r\n\r\n").expect("event end") + 4;
    let mut cuts = vec![
        crab + 1,
        crab + 2,
        crab + 3,
        i_umlaut + 1,
        data + 2,
        crlf + 1,
    ];
    cuts.extend(last..=last_end);
    for framing in [Framing::Chunked, Framing::Close] {
        let stub =
            ModelStub::start(vec![Reply::sse(split_at(bytes, &cuts)).framing(framing)]).await;
        let (reply, events) = ask_hi(&stub.url()).await;
        let reply = reply.expect("reply");
        assert_eq!(texts(&events), ["crab 🦀 ", "naïve ", "end"], "{framing:?}");
        assert_eq!(
            reply.content,
            [Block::Text {
                text: "crab 🦀 naïve end".into()
            }]
        );
    }
}

#[tokio::test]
async fn several_tool_calls_with_split_arguments() {
    let mut events = vec![start(), text_start(0), text_delta(0, "Looking."), stop(0)];
    events.push(tool_start(1, "toolu_a", "mcp__alpha__lookup"));
    for piece in ["", "{\"ke", "y\": \"f", "ö", "o\", \"n\"", ": 4", "2}"] {
        events.push(json_delta(1, piece));
    }
    events.push(stop(1));
    events.push(tool_start(2, "toolu_b", "mcp__beta__set"));
    for piece in ["{\"v", "alues\": [1,", " 2]", "}"] {
        events.push(json_delta(2, piece));
    }
    events.push(stop(2));
    events.push(tool_start(3, "toolu_c", "mcp__beta__reset"));
    events.push(stop(3));
    events.extend(end("tool_use"));
    let stub = ModelStub::start(vec![Reply::sse(events)]).await;
    let (reply, events) = ask_hi(&stub.url()).await;
    let reply = reply.expect("reply");
    let pairs = [
        ("toolu_a", "mcp__alpha__lookup"),
        ("toolu_b", "mcp__beta__set"),
        ("toolu_c", "mcp__beta__reset"),
    ];
    let expected: Vec<_> = pairs.map(|(i, n)| (i.to_string(), n.to_string())).into();
    assert_eq!(started(&events), expected);
    let call = |id: &str, name: &str, input: Value| {
        Block::ToolUse(ToolCall {
            id: id.into(),
            name: name.into(),
            input,
        })
    };
    assert_eq!(
        reply.content,
        [
            Block::Text {
                text: "Looking.".into()
            },
            call(
                "toolu_a",
                "mcp__alpha__lookup",
                json!({"key": "föo", "n": 42})
            ),
            call("toolu_b", "mcp__beta__set", json!({"values": [1, 2]})),
            call("toolu_c", "mcp__beta__reset", json!({})),
        ]
    );
    assert_eq!(reply.stop_reason, StopReason::ToolUse);
}

#[tokio::test]
async fn tool_result_round_trip_sends_the_wire_format() {
    let stub = ModelStub::start(vec![Reply::sse(text_reply(&["done"]))]).await;
    let (messages, tools) = round_trip_conversation();
    let (reply, _) = ask_with(&stub.url(), &messages, &tools).await;
    assert_eq!(
        reply.expect("reply").content,
        [Block::Text {
            text: "done".into()
        }]
    );
    let requests = stub.requests();
    assert_eq!(requests.len(), 1);
    let request = &requests[0];
    assert_eq!(
        (request.method.as_str(), request.path.as_str()),
        ("POST", "/v1/messages")
    );
    assert_eq!(request.header("x-api-key"), Some(KEY));
    assert_eq!(request.header("anthropic-version"), Some("2023-06-01"));
    assert_eq!(request.header("content-type"), Some("application/json"));
    assert_eq!(request.header("authorization"), None);
    let expected = json!({
        "model": "claude-test",
        "max_tokens": 321,
        "system": "be brief",
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": "look it up"}]},
            {"role": "assistant", "content": [
                {"type": "text", "text": "Sure."},
                {"type": "tool_use", "id": "call_1", "name": "lookup", "input": {"key": "a"}},
                // Arguments that were not JSON cannot go back as such: an empty object.
                {"type": "tool_use", "id": "call_2", "name": "lookup", "input": {}},
            ]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "call_1", "is_error": false, "content": [
                    {"type": "text", "text": "found"},
                    {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}},
                ]},
                {"type": "tool_result", "tool_use_id": "call_2", "is_error": true, "content": [
                    {"type": "text", "text": "invalid arguments"},
                ]},
            ]},
        ],
        "tools": [{"name": "lookup", "description": "Looks a key up.",
            "input_schema": {"type": "object", "properties": {"key": {"type": "string"}}}}],
        "stream": true,
    });
    assert_eq!(request.body, expected);
}

#[tokio::test]
async fn arguments_that_are_not_json_stay_raw() {
    let mut events = vec![start(), tool_start(0, "toolu_x", "lookup")];
    events.push(json_delta(0, "{\"key\": "));
    events.push(json_delta(0, "oops}"));
    events.push(stop(0));
    events.extend(end("tool_use"));
    let stub = ModelStub::start(vec![Reply::sse(events)]).await;
    let reply = ask_hi(&stub.url()).await.0.expect("reply");
    assert_eq!(
        tool_inputs(&reply),
        [Value::String("{\"key\": oops}".into())]
    );
}

#[tokio::test]
async fn dropping_the_future_cancels_the_request() {
    // A slow reply: 400 deltas, 10 ms apart. Drop the future at the first text.
    let parts: Vec<String> = (0..400).map(|i| format!("{i} ")).collect();
    let parts: Vec<&str> = parts.iter().map(String::as_str).collect();
    let slow = Reply::sse(text_reply(&parts)).pause(Duration::from_millis(10));
    let stub = ModelStub::start(vec![slow]).await;
    let provider = AnthropicProvider::new(settings(stub.url(), Some(KEY), "claude-test"));
    let (first_tx, mut first_rx) = tokio::sync::mpsc::unbounded_channel();
    let mut on_event = move |e: StreamEvent| {
        let _ = first_tx.send(e);
    };
    let messages = [Message::user_text("hi")];
    let request = ModelRequest {
        system: "",
        messages: &messages,
        tools: &[],
        max_tokens: 10,
    };
    let future = provider.complete(request, &mut on_event);
    tokio::select! {
        reply = future => panic!("the slow reply finished first: {reply:?}"),
        first = first_rx.recv() => assert!(first.is_some()),
    }
    // The future is gone; the server's next writes fail once the socket closes.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
    while stub.abandoned() == 0 {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the connection stayed open"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}
