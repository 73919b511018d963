//! The conversation in a provider-neutral shape. Providers translate it to their
//! wire format; the store writes it as JSON lines; the UI renders it.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Who said it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    User,
    Assistant,
}

/// One turn.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Message {
    pub role: Role,
    pub content: Vec<Block>,
}

impl Message {
    pub fn user_text(text: impl Into<String>) -> Self {
        Self {
            role: Role::User,
            content: vec![Block::Text { text: text.into() }],
        }
    }

    pub fn assistant(content: Vec<Block>) -> Self {
        Self {
            role: Role::Assistant,
            content,
        }
    }

    /// The concatenated text blocks.
    pub fn text(&self) -> String {
        self.content
            .iter()
            .filter_map(|b| match b {
                Block::Text { text } => Some(text.as_str()),
                _ => None,
            })
            .collect::<Vec<_>>()
            .join("")
    }

    pub fn tool_calls(&self) -> impl Iterator<Item = &ToolCall> {
        self.content.iter().filter_map(|b| match b {
            Block::ToolUse(call) => Some(call),
            _ => None,
        })
    }
}

/// A piece of a turn.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Block {
    Text {
        text: String,
    },
    /// The model asks for a tool call (assistant turns only).
    ToolUse(ToolCall),
    /// The result of a tool call (user turns only).
    ToolResult(ToolResult),
}

/// A tool call as the model made it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    /// The provider's id, echoed back in the result.
    pub id: String,
    pub name: String,
    /// The arguments. When the model sent something that is not valid JSON,
    /// this is `Value::String` with the raw text, and the call fails validation.
    pub input: Value,
}

/// What goes back to the model for one call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolResult {
    pub tool_use_id: String,
    pub content: Vec<ResultPart>,
    pub is_error: bool,
}

/// One part of a tool result, as the model sees it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ResultPart {
    Text {
        text: String,
    },
    /// An image the provider may pass through (base64). Providers that cannot
    /// take images send a text placeholder instead.
    Image {
        media_type: String,
        data: String,
    },
}

/// A tool as offered to the model in one request.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ToolDef {
    pub name: String,
    pub description: String,
    /// Shared with the exposed tool: a request's tool list copies no schema.
    pub input_schema: std::sync::Arc<Value>,
}
