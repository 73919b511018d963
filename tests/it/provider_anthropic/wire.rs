//! Messages API stream events as the API writes them, for the Anthropic tests.

use serde_json::{Value, json};

use crate::common::model_stub::sse_event;

pub fn ev(name: &str, data: Value) -> String {
    sse_event(Some(name), &data.to_string())
}

pub fn start() -> String {
    ev(
        "message_start",
        json!({"type": "message_start", "message": {"id": "msg_1", "type": "message",
        "role": "assistant", "content": [], "model": "claude-test", "stop_reason": null,
        "usage": {"input_tokens": 25, "output_tokens": 1}}}),
    )
}

pub fn text_start(index: u64) -> String {
    ev(
        "content_block_start",
        json!({"type": "content_block_start", "index": index,
        "content_block": {"type": "text", "text": ""}}),
    )
}

pub fn text_delta(index: u64, text: &str) -> String {
    ev(
        "content_block_delta",
        json!({"type": "content_block_delta", "index": index,
        "delta": {"type": "text_delta", "text": text}}),
    )
}

pub fn tool_start(index: u64, id: &str, name: &str) -> String {
    ev(
        "content_block_start",
        json!({"type": "content_block_start", "index": index,
        "content_block": {"type": "tool_use", "id": id, "name": name, "input": {}}}),
    )
}

pub fn json_delta(index: u64, partial: &str) -> String {
    ev(
        "content_block_delta",
        json!({"type": "content_block_delta", "index": index,
        "delta": {"type": "input_json_delta", "partial_json": partial}}),
    )
}

pub fn stop(index: u64) -> String {
    ev(
        "content_block_stop",
        json!({"type": "content_block_stop", "index": index}),
    )
}

pub fn end(reason: &str) -> Vec<String> {
    vec![
        ev(
            "message_delta",
            json!({"type": "message_delta",
            "delta": {"stop_reason": reason, "stop_sequence": null}, "usage": {"output_tokens": 15}}),
        ),
        ev("message_stop", json!({"type": "message_stop"})),
    ]
}

pub fn ping() -> String {
    ev("ping", json!({"type": "ping"}))
}

/// A whole text reply, one event per write.
pub fn text_reply(parts: &[&str]) -> Vec<String> {
    let mut events = vec![start(), text_start(0), ping()];
    events.extend(parts.iter().map(|p| text_delta(0, p)));
    events.push(stop(0));
    events.extend(end("end_turn"));
    events
}

pub fn error_body(kind: &str, message: &str) -> Value {
    json!({"type": "error", "error": {"type": kind, "message": message}})
}
