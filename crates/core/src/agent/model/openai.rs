//! Chat Completions, streamed — OpenAI and the servers that speak its dialect
//! (Ollama, vLLM, llama.cpp): `POST {base_url}/chat/completions`, where
//! `base_url` includes `/v1`. This file builds the request; `openai/stream.rs`
//! reads the reply.

mod stream;

use reqwest::header::{AUTHORIZATION, HeaderMap};
use serde_json::{Map, Value, json};

use super::http::Endpoint;
use super::{
    BoxFuture, HttpSettings, ModelError, ModelProvider, ModelReply, ModelRequest, StreamEvent,
};
use crate::agent::conversation::{Block, Message, ResultPart, Role, ToolDef, ToolResult};

/// A model behind a Chat Completions endpoint.
pub struct OpenAiProvider {
    endpoint: Endpoint,
}

impl OpenAiProvider {
    /// Never fails: a client that cannot be built reports it on the first request.
    pub fn new(settings: HttpSettings) -> Self {
        Self {
            endpoint: Endpoint::new("openai", settings),
        }
    }
}

impl ModelProvider for OpenAiProvider {
    fn name(&self) -> &'static str {
        "openai"
    }

    fn model(&self) -> &str {
        &self.endpoint.settings.model
    }

    fn complete<'a>(
        &'a self,
        request: ModelRequest<'a>,
        on_event: &'a mut (dyn FnMut(StreamEvent) + Send),
    ) -> BoxFuture<'a, Result<ModelReply, ModelError>> {
        Box::pin(async move {
            let mut headers = HeaderMap::new();
            // Local servers usually take no key: then no Authorization at all.
            if let Some(key) = self.endpoint.key_header("Bearer ")? {
                headers.insert(AUTHORIZATION, key);
            }
            let body = request_body(&self.endpoint.settings.model, &request);
            let url = self.endpoint.url("/chat/completions");
            self.endpoint
                .stream(&url, headers, &body, stream::Decoder::default, on_event)
                .await
        })
    }
}

/// The JSON body. `max_tokens` rather than `max_completion_tokens`: the local
/// servers know only the former, and OpenAI still takes it for chat models.
fn request_body(model: &str, request: &ModelRequest<'_>) -> Value {
    let mut messages = Vec::new();
    if !request.system.is_empty() {
        messages.push(json!({ "role": "system", "content": request.system }));
    }
    for message in request.messages {
        push_message(&mut messages, message);
    }
    let mut body = Map::new();
    body.insert("model".into(), json!(model));
    body.insert("max_tokens".into(), json!(request.max_tokens));
    body.insert("messages".into(), Value::Array(messages));
    // OpenAI rejects an empty `tools` list.
    if !request.tools.is_empty() {
        let tools: Vec<Value> = request.tools.iter().map(tool).collect();
        body.insert("tools".into(), Value::Array(tools));
    }
    body.insert("stream".into(), json!(true));
    body.insert("stream_options".into(), json!({ "include_usage": true }));
    Value::Object(body)
}

fn tool(def: &ToolDef) -> Value {
    json!({
        "type": "function",
        "function": {
            "name": def.name,
            "description": def.description,
            "parameters": def.input_schema,
        },
    })
}

/// One of our turns as Chat Completions messages: a user turn becomes one
/// `tool` message per result (these must directly follow the assistant's
/// `tool_calls`) and then one `user` message with its text, if any; an
/// assistant turn becomes one `assistant` message with text and `tool_calls`.
/// A turn with neither text, calls nor results adds nothing: an empty message
/// is at best noise and some compatible servers reject it.
fn push_message(out: &mut Vec<Value>, message: &Message) {
    let text = message.text();
    if text.is_empty()
        && !message
            .content
            .iter()
            .any(|b| matches!(b, Block::ToolUse(_) | Block::ToolResult(_)))
    {
        return;
    }
    match message.role {
        Role::User => {
            for block in &message.content {
                if let Block::ToolResult(result) = block {
                    out.push(json!({
                        "role": "tool",
                        "tool_call_id": result.tool_use_id,
                        "content": result_text(result),
                    }));
                }
            }
            if !text.is_empty() {
                out.push(json!({ "role": "user", "content": text }));
            }
        }
        Role::Assistant => {
            let calls: Vec<Value> = message
                .tool_calls()
                .map(|call| {
                    // Arguments that were not valid JSON go back exactly as sent.
                    let arguments = match &call.input {
                        Value::String(raw) => raw.clone(),
                        input => input.to_string(),
                    };
                    json!({
                        "id": call.id,
                        "type": "function",
                        "function": { "name": call.name, "arguments": arguments },
                    })
                })
                .collect();
            let mut value = json!({ "role": "assistant" });
            if calls.is_empty() {
                value["content"] = json!(text);
            } else {
                value["content"] = if text.is_empty() {
                    Value::Null
                } else {
                    json!(text)
                };
                value["tool_calls"] = Value::Array(calls);
            }
            out.push(value);
        }
    }
}

/// A tool result as text: text parts joined by newlines, each image replaced by
/// a placeholder (this dialect takes only text in `tool` messages). An error
/// is marked as such, having no `is_error` field to go in.
fn result_text(result: &ToolResult) -> String {
    let parts: Vec<String> = result
        .content
        .iter()
        .map(|part| match part {
            ResultPart::Text { text } => text.clone(),
            ResultPart::Image { media_type, data } => format!(
                "[image: {media_type}, {} bytes, not shown: this provider takes text tool results]",
                base64_len(data)
            ),
        })
        .collect();
    let text = parts.join("\n");
    if result.is_error {
        format!("[error] {text}")
    } else {
        text
    }
}

/// The decoded size of base64 text, without decoding it.
fn base64_len(data: &str) -> usize {
    let symbols = data
        .bytes()
        .filter(|b| !b.is_ascii_whitespace() && *b != b'=')
        .count();
    symbols * 3 / 4
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn turns_without_content_add_no_message() {
        let mut out = Vec::new();
        push_message(&mut out, &Message::assistant(vec![]));
        push_message(&mut out, &Message::user_text(""));
        assert_eq!(out, Vec::<Value>::new());
    }

    #[test]
    fn image_placeholder_counts_decoded_bytes() {
        assert_eq!(base64_len("aGVsbG8="), 5);
        let result = ToolResult {
            tool_use_id: "c".into(),
            content: vec![
                ResultPart::Text { text: "see".into() },
                ResultPart::Image {
                    media_type: "image/png".into(),
                    data: "AAAA".into(),
                },
            ],
            is_error: false,
        };
        assert_eq!(
            result_text(&result),
            "see\n[image: image/png, 3 bytes, not shown: this provider takes text tool results]"
        );
    }
}
