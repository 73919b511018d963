//! Driving a provider in the provider tests: settings with tiny retry delays,
//! one request under a generous timeout, and what came out of it.

use std::time::Duration;

use mcp_harness::agent::conversation::{
    Block, Message, ResultPart, Role, ToolCall, ToolDef, ToolResult,
};
use mcp_harness::agent::model::{
    HttpSettings, ModelError, ModelProvider, ModelReply, ModelRequest, RetryPolicy, StreamEvent,
};
use serde_json::{Value, json};

/// The system prompt and token limit every test request carries.
pub const SYSTEM: &str = "be brief";
pub const MAX_TOKENS: u32 = 321;

/// Three attempts, milliseconds apart: retries are exercised, not waited for.
pub fn settings(base_url: String, key: Option<&str>, model: &str) -> HttpSettings {
    HttpSettings {
        base_url,
        api_key: key.map(str::to_string),
        model: model.to_string(),
        retry: RetryPolicy {
            max_attempts: 3,
            base_delay: Duration::from_millis(1),
            max_delay: Duration::from_millis(20),
        },
    }
}

/// One request; the reply and every event `on_event` saw. The timeout is only
/// a guard against a hang: a loaded machine may be slow, never wrong.
pub async fn ask(
    provider: &dyn ModelProvider,
    messages: &[Message],
    tools: &[ToolDef],
) -> (Result<ModelReply, ModelError>, Vec<StreamEvent>) {
    let mut events = Vec::new();
    let mut on_event = |e: StreamEvent| events.push(e);
    let request = ModelRequest {
        system: SYSTEM,
        messages,
        tools,
        max_tokens: MAX_TOKENS,
    };
    let reply = tokio::time::timeout(
        Duration::from_secs(60),
        provider.complete(request, &mut on_event),
    )
    .await
    .expect("the provider answered within 60 s");
    (reply, events)
}

/// The text deltas, in order.
pub fn texts(events: &[StreamEvent]) -> Vec<String> {
    events
        .iter()
        .filter_map(|e| match e {
            StreamEvent::TextDelta(t) => Some(t.clone()),
            _ => None,
        })
        .collect()
}

/// The `(id, name)` of each tool call start, in order.
pub fn started(events: &[StreamEvent]) -> Vec<(String, String)> {
    events
        .iter()
        .filter_map(|e| match e {
            StreamEvent::ToolCallStarted { id, name } => Some((id.clone(), name.clone())),
            _ => None,
        })
        .collect()
}

/// The inputs of the reply's tool calls.
pub fn tool_inputs(reply: &ModelReply) -> Vec<Value> {
    reply
        .content
        .iter()
        .filter_map(|b| match b {
            Block::ToolUse(call) => Some(call.input.clone()),
            _ => None,
        })
        .collect()
}

/// A conversation with everything a request maps: text, two tool calls (one
/// whose arguments were not JSON), their results (text, an image, an error)
/// and one tool definition.
pub fn round_trip_conversation() -> (Vec<Message>, Vec<ToolDef>) {
    let messages = vec![
        Message::user_text("look it up"),
        Message::assistant(vec![
            Block::Text {
                text: "Sure.".into(),
            },
            Block::ToolUse(ToolCall {
                id: "call_1".into(),
                name: "lookup".into(),
                input: json!({"key": "a"}),
            }),
            Block::ToolUse(ToolCall {
                id: "call_2".into(),
                name: "lookup".into(),
                input: Value::String("{not json".into()),
            }),
        ]),
        Message {
            role: Role::User,
            content: vec![
                Block::ToolResult(ToolResult {
                    tool_use_id: "call_1".into(),
                    content: vec![
                        ResultPart::Text {
                            text: "found".into(),
                        },
                        ResultPart::Image {
                            media_type: "image/png".into(),
                            data: "iVBORw0KGgo=".into(),
                        },
                    ],
                    is_error: false,
                }),
                Block::ToolResult(ToolResult {
                    tool_use_id: "call_2".into(),
                    content: vec![ResultPart::Text {
                        text: "invalid arguments".into(),
                    }],
                    is_error: true,
                }),
            ],
        },
    ];
    let tools = vec![ToolDef {
        name: "lookup".into(),
        description: "Looks a key up.".into(),
        input_schema: std::sync::Arc::new(
            json!({"type": "object", "properties": {"key": {"type": "string"}}}),
        ),
    }];
    (messages, tools)
}
