//! Model providers behind one trait: `anthropic` (Messages API), `openai` (Chat
//! Completions and compatible servers), `scripted` (a replayed scenario).

pub mod anthropic;
mod api_error;
mod http;
pub mod openai;
pub mod pacing;
pub mod scripted;
pub mod select;
mod sse;
pub mod unconfigured;

pub use anthropic::AnthropicProvider;
pub use openai::OpenAiProvider;

use std::future::Future;
use std::pin::Pin;

use serde::Serialize;
use thiserror::Error;

use super::conversation::{Block, Message, ToolDef};

/// One model request: the conversation so far and the tools of one snapshot.
#[derive(Debug, Clone)]
pub struct ModelRequest<'a> {
    pub system: &'a str,
    pub messages: &'a [Message],
    pub tools: &'a [ToolDef],
    pub max_tokens: u32,
}

/// Why the model stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    /// It finished its turn.
    EndTurn,
    /// It wants the tool calls in its reply executed.
    ToolUse,
    /// It ran out of output tokens.
    MaxTokens,
    /// Anything else the provider reported (refusal, content filter, …).
    Other,
}

/// Token counts, when the provider reports them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Usage {
    pub input_tokens: u64,
    pub output_tokens: u64,
}

/// The whole reply, once the stream ended.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelReply {
    /// Text and tool-use blocks in the order the model produced them.
    pub content: Vec<Block>,
    pub stop_reason: StopReason,
    pub usage: Option<Usage>,
}

/// What arrives while the reply streams in.
#[derive(Debug, Clone, PartialEq)]
pub enum StreamEvent {
    /// More assistant text.
    TextDelta(String),
    /// The model started a tool call (its arguments follow in the final reply).
    ToolCallStarted { id: String, name: String },
}

/// Something the operator can act on; never a panic, never a hang.
#[derive(Debug, Clone, Error, PartialEq, Eq)]
pub enum ModelError {
    /// The key was refused (HTTP 401/403).
    #[error(
        "the {provider} API refused the key ({status}): {message}. Check the variable named by api_key_env"
    )]
    Auth {
        provider: &'static str,
        status: u16,
        message: String,
    },
    /// The model name is unknown to the endpoint (HTTP 404, or a not-found error).
    #[error(
        "the {provider} endpoint does not know model `{model}`: {message}. Check [model] model"
    )]
    UnknownModel {
        provider: &'static str,
        model: String,
        message: String,
    },
    /// The endpoint could not be reached at all.
    #[error("cannot reach {url}: {message}. Check [model] base_url and the network")]
    Unreachable { url: String, message: String },
    /// Still rate limited / overloaded / failing after the retries.
    #[error(
        "the {provider} API kept failing after {attempts} attempts (last: HTTP {status}: {message}); try again later"
    )]
    Exhausted {
        provider: &'static str,
        attempts: u32,
        status: u16,
        message: String,
    },
    /// Any other HTTP error.
    #[error("the {provider} API answered HTTP {status}: {message}")]
    Http {
        provider: &'static str,
        status: u16,
        message: String,
    },
    /// The stream or body did not follow the wire format, or stopped mid-event.
    #[error("the {provider} reply was malformed: {detail}; the turn was not saved, retry it")]
    Malformed {
        provider: &'static str,
        detail: String,
    },
    /// The scripted scenario has no more turns (or cannot be read).
    #[error("{0}")]
    Script(String),
    /// The session has no model (see [`unconfigured`]).
    #[error("{}", unconfigured::NO_MODEL)]
    NotConfigured,
}

/// A boxed future (object-safe trait methods).
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// A model provider.
pub trait ModelProvider: Send + Sync {
    /// `anthropic`, `openai` or `scripted`.
    fn name(&self) -> &'static str;
    /// The model as configured (shown in the status bar).
    fn model(&self) -> &str;
    /// Whether this is a replay rather than a live model (the UI says so).
    fn is_replay(&self) -> bool {
        false
    }
    /// False for the session without a model: turns are refused before they
    /// start, the rest of the session works.
    fn is_configured(&self) -> bool {
        true
    }
    /// The replay's pace, for providers that pause between acts (the scripted
    /// demo): the TUI enables it and ends a pause on the operator's key.
    fn pacing(&self) -> Option<&pacing::Pacing> {
        None
    }
    /// Sends one request and streams the reply. `on_event` sees text as it
    /// arrives; the returned reply is complete. Dropping the future cancels it.
    fn complete<'a>(
        &'a self,
        request: ModelRequest<'a>,
        on_event: &'a mut (dyn FnMut(StreamEvent) + Send),
    ) -> BoxFuture<'a, Result<ModelReply, ModelError>>;
}

/// How to reach an HTTP provider (resolved: the key is the secret itself, taken
/// from the environment variable the config names — never log or display it).
#[derive(Clone)]
pub struct HttpSettings {
    /// E.g. `https://api.anthropic.com` or `http://localhost:11434/v1`.
    pub base_url: String,
    /// `None` for local servers that need no key.
    pub api_key: Option<String>,
    pub model: String,
    pub retry: RetryPolicy,
}

impl std::fmt::Debug for HttpSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpSettings")
            .field("base_url", &self.base_url)
            .field("api_key", &self.api_key.as_ref().map(|_| "<set>"))
            .field("model", &self.model)
            .finish()
    }
}

/// Retries with exponential backoff on 429, 5xx and "overloaded".
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    pub max_attempts: u32,
    pub base_delay: std::time::Duration,
    pub max_delay: std::time::Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        Self {
            max_attempts: 4,
            base_delay: std::time::Duration::from_millis(500),
            max_delay: std::time::Duration::from_secs(8),
        }
    }
}
