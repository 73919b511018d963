//! Chat Completions stream chunks as the servers write them, for the OpenAI tests.
#![allow(dead_code)] // shared by several test crates; each uses a part

use serde_json::{Value, json};

use crate::common::model_stub::{Reply, sse_event};

/// One `data:` chunk with a single choice.
pub fn chunk(delta: Value, finish: Option<&str>) -> String {
    let data = json!({"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1,
        "model": "gpt-test", "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]});
    sse_event(None, &data.to_string())
}

pub fn content(text: &str) -> String {
    chunk(json!({"content": text}), None)
}

pub fn tool_fragment(index: u64, id: Option<&str>, name: Option<&str>, arguments: &str) -> String {
    let mut call = json!({"index": index, "function": {"arguments": arguments}});
    if let Some(id) = id {
        call["id"] = json!(id);
        call["type"] = json!("function");
    }
    if let Some(name) = name {
        call["function"]["name"] = json!(name);
    }
    chunk(json!({"tool_calls": [call]}), None)
}

/// The finish chunk, the usage chunk and `[DONE]`.
pub fn end(reason: &str) -> Vec<String> {
    let usage = json!({"id": "chatcmpl-1", "object": "chat.completion.chunk", "choices": [],
        "usage": {"prompt_tokens": 9, "completion_tokens": 3, "total_tokens": 12}});
    vec![
        chunk(json!({}), Some(reason)),
        sse_event(None, &usage.to_string()),
        sse_event(None, "[DONE]"),
    ]
}

pub fn text_reply(parts: &[&str]) -> Vec<String> {
    let mut chunks = vec![chunk(json!({"role": "assistant", "content": ""}), None)];
    chunks.extend(parts.iter().map(|p| content(p)));
    chunks.extend(end("stop"));
    chunks
}

pub fn error_body(message: &str, kind: &str, code: Value) -> Value {
    json!({"error": {"message": message, "type": kind, "param": null, "code": code}})
}

/// A whole reply with these tool calls (name, arguments), ids `call_{i}_{name}`.
pub fn calls(list: &[(&str, Value)]) -> Reply {
    let mut chunks = vec![chunk(json!({"role": "assistant", "content": null}), None)];
    for (i, (name, args)) in list.iter().enumerate() {
        chunks.push(tool_fragment(
            i as u64,
            Some(&format!("call_{i}_{name}")),
            Some(name),
            &args.to_string(),
        ));
    }
    chunks.extend(end("tool_calls"));
    Reply::sse(chunks)
}

/// A whole reply of plain text.
pub fn text(t: &str) -> Reply {
    Reply::sse(text_reply(&[t]))
}
