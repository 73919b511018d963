//! The Anthropic Messages API, streamed: `POST {base_url}/v1/messages` with
//! `stream: true`. This file builds the request; `anthropic/stream.rs` reads
//! the reply.

mod stream;

use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use serde_json::{Map, Value, json};

use super::http::Endpoint;
use super::{
    BoxFuture, HttpSettings, ModelError, ModelProvider, ModelReply, ModelRequest, StreamEvent,
};
use crate::agent::conversation::{Block, Message, ResultPart, Role, ToolDef};
use crate::agent::image;

/// The API version every request pins (the stream format below is this one's).
const API_VERSION: &str = "2023-06-01";

/// A model behind the Anthropic Messages API.
pub struct AnthropicProvider {
    endpoint: Endpoint,
}

impl AnthropicProvider {
    /// Never fails: a client that cannot be built reports it on the first request.
    pub fn new(settings: HttpSettings) -> Self {
        Self {
            endpoint: Endpoint::new("anthropic", settings),
        }
    }
}

impl ModelProvider for AnthropicProvider {
    fn name(&self) -> &'static str {
        "anthropic"
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
            headers.insert(
                HeaderName::from_static("anthropic-version"),
                HeaderValue::from_static(API_VERSION),
            );
            if let Some(key) = self.endpoint.key_header("")? {
                headers.insert(HeaderName::from_static("x-api-key"), key);
            }
            let body = request_body(&self.endpoint.settings.model, &request);
            let url = self.endpoint.url("/v1/messages");
            self.endpoint
                .stream(&url, headers, &body, stream::Decoder::default, on_event)
                .await
        })
    }
}

/// The JSON body. `system` and `tools` are left out when empty.
fn request_body(model: &str, request: &ModelRequest<'_>) -> Value {
    let mut body = Map::new();
    body.insert("model".into(), json!(model));
    body.insert("max_tokens".into(), json!(request.max_tokens));
    if !request.system.is_empty() {
        body.insert("system".into(), json!(request.system));
    }
    let messages: Vec<Value> = request.messages.iter().filter_map(message).collect();
    body.insert("messages".into(), Value::Array(messages));
    if !request.tools.is_empty() {
        let tools: Vec<Value> = request.tools.iter().map(tool).collect();
        body.insert("tools".into(), Value::Array(tools));
    }
    body.insert("stream".into(), json!(true));
    Value::Object(body)
}

fn tool(def: &ToolDef) -> Value {
    json!({
        "name": def.name,
        "description": def.description,
        "input_schema": def.input_schema,
    })
}

/// One turn. In user turns the tool results go first (the API requires them
/// ahead of any text); otherwise the order is kept. Empty text blocks are
/// dropped: the API rejects them. A turn left with no content at all is left
/// out (the API rejects that too; it merges the same-role turns around it).
fn message(message: &Message) -> Option<Value> {
    let mut blocks: Vec<&Block> = message.content.iter().collect();
    if message.role == Role::User {
        blocks.sort_by_key(|b| !matches!(b, Block::ToolResult(_)));
    }
    let content: Vec<Value> = blocks.into_iter().filter_map(block).collect();
    if content.is_empty() {
        return None;
    }
    let role = match message.role {
        Role::User => "user",
        Role::Assistant => "assistant",
    };
    Some(json!({ "role": role, "content": content }))
}

fn block(block: &Block) -> Option<Value> {
    Some(match block {
        Block::Text { text } if text.is_empty() => return None,
        Block::Text { text } => json!({ "type": "text", "text": text }),
        Block::ToolUse(call) => {
            // The API wants an object here. Arguments that were not valid JSON
            // were rejected before reaching any tool; `{}` keeps the history valid.
            let input = match &call.input {
                Value::Object(_) => call.input.clone(),
                _ => json!({}),
            };
            json!({ "type": "tool_use", "id": call.id, "name": call.name, "input": input })
        }
        Block::ToolResult(result) => {
            let mut value = json!({
                "type": "tool_result",
                "tool_use_id": result.tool_use_id,
                "is_error": result.is_error,
            });
            let parts: Vec<Value> = result.content.iter().filter_map(result_part).collect();
            // `content` is optional; an empty list is left out rather than risked.
            if !parts.is_empty() {
                value["content"] = Value::Array(parts);
            }
            value
        }
    })
}

/// Images are checked again here: a transcript from before the check existed
/// may be resumed, and one refused image would fail every request.
fn result_part(part: &ResultPart) -> Option<Value> {
    Some(match part {
        ResultPart::Text { text } if text.is_empty() => return None,
        ResultPart::Text { text } => json!({ "type": "text", "text": text }),
        ResultPart::Image { media_type, data } => match image::problem(media_type, data) {
            None => json!({
                "type": "image",
                "source": { "type": "base64", "media_type": media_type, "data": data },
            }),
            Some(reason) => {
                json!({ "type": "text", "text": image::placeholder(media_type, data, reason) })
            }
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::conversation::{ToolCall, ToolResult};

    #[test]
    fn results_go_first_and_bad_input_becomes_an_object() {
        let messages = [
            Message::assistant(vec![Block::ToolUse(ToolCall {
                id: "t1".into(),
                name: "f".into(),
                input: Value::String("{oops".into()),
            })]),
            Message {
                role: Role::User,
                content: vec![
                    Block::Text { text: "and".into() },
                    Block::ToolResult(ToolResult {
                        tool_use_id: "t1".into(),
                        content: vec![],
                        is_error: true,
                    }),
                ],
            },
        ];
        let request = ModelRequest {
            system: "",
            messages: &messages,
            tools: &[],
            max_tokens: 5,
        };
        let body = request_body("m", &request);
        assert!(body.get("system").is_none() && body.get("tools").is_none());
        assert_eq!(body["messages"][0]["content"][0]["input"], json!({}));
        let user = &body["messages"][1]["content"];
        assert_eq!(
            user[0],
            json!({"type": "tool_result", "tool_use_id": "t1", "is_error": true})
        );
        assert_eq!(user[1], json!({"type": "text", "text": "and"}));
    }

    #[test]
    fn images_the_api_would_refuse_go_as_placeholders() {
        let good = ResultPart::Image {
            media_type: "image/png".into(),
            data: "iVBORw0KGgo=".into(),
        };
        assert_eq!(result_part(&good).unwrap()["type"], "image");
        let bad = ResultPart::Image {
            media_type: "image/bmp".into(),
            data: "Qk0=".into(),
        };
        let value = result_part(&bad).unwrap();
        assert_eq!(value["type"], "text");
        assert!(
            value["text"]
                .as_str()
                .unwrap()
                .starts_with("[image: image/bmp, 4 bytes"),
            "{value}"
        );
    }

    #[test]
    fn turns_without_content_are_left_out() {
        let messages = [
            Message::user_text("hi"),
            Message::assistant(vec![]),
            Message::assistant(vec![Block::Text { text: "".into() }]),
            Message::user_text("again"),
        ];
        let request = ModelRequest {
            system: "",
            messages: &messages,
            tools: &[],
            max_tokens: 5,
        };
        let body = request_body("m", &request);
        let roles: Vec<&str> = body["messages"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["role"].as_str().unwrap())
            .collect();
        assert_eq!(roles, ["user", "user"], "{body}");
    }
}
