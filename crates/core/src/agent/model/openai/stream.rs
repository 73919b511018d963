//! Reads a Chat Completions stream: `data:` chunks whose `choices[0].delta`
//! carries `content` and `tool_calls` fragments (keyed by `index`), a chunk
//! with the `finish_reason`, with `stream_options.include_usage` a last chunk
//! with `usage` and no choices, then `data: [DONE]`.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::Value;
use sse_stream::Sse;

use super::super::api_error::{ApiError, clip};
use super::super::http::{self, Flow, StreamError};
use super::super::{ModelReply, StopReason, StreamEvent, Usage};
use crate::agent::conversation::{Block, ToolCall};

#[derive(Debug, Deserialize)]
struct Chunk {
    #[serde(default)]
    choices: Vec<Choice>,
    #[serde(default)]
    usage: Option<WireUsage>,
    /// Some servers (OpenAI, vLLM) report a failure inside the stream.
    #[serde(default)]
    error: Option<Value>,
}

#[derive(Debug, Deserialize)]
struct Choice {
    #[serde(default)]
    index: u32,
    #[serde(default)]
    delta: Option<Delta>,
    #[serde(default)]
    finish_reason: Option<String>,
}

#[derive(Debug, Deserialize)]
struct Delta {
    #[serde(default)]
    content: Option<String>,
    #[serde(default)]
    tool_calls: Option<Vec<ToolDelta>>,
}

#[derive(Debug, Deserialize)]
struct ToolDelta {
    /// Which call this fragment belongs to; servers that leave it out send
    /// whole calls, so their position in the list stands in.
    #[serde(default)]
    index: Option<u64>,
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    function: Option<FunctionDelta>,
}

#[derive(Debug, Deserialize)]
struct FunctionDelta {
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    arguments: Option<String>,
}

#[derive(Debug, Deserialize)]
struct WireUsage {
    #[serde(default)]
    prompt_tokens: u64,
    #[serde(default)]
    completion_tokens: u64,
}

/// A tool call as its fragments arrive.
#[derive(Debug, Default)]
struct PendingCall {
    id: Option<String>,
    name: String,
    arguments: String,
    announced: bool,
}

/// The state of one streamed reply.
#[derive(Debug, Default)]
pub(super) struct Decoder {
    text: String,
    /// By the wire's `index`, so several calls come out in index order.
    calls: BTreeMap<u64, PendingCall>,
    finish_reason: Option<String>,
    usage: Option<Usage>,
    events: usize,
}

/// What an OpenAI-compatible stream ended without.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum Incomplete {
    #[error("`[DONE]` arrived before any `finish_reason`")]
    DoneBeforeFinish,
    #[error("the stream ended before a `finish_reason` and `[DONE]` (after {0} chunks)")]
    NoFinish(usize),
}

impl http::Decoder for Decoder {
    type Incomplete = Incomplete;

    fn feed(&mut self, event: &Sse, out: &mut dyn FnMut(StreamEvent)) -> Result<Flow, StreamError> {
        let Some(data) = event.data.as_deref() else {
            return Ok(Flow::More);
        };
        self.events += 1;
        if data.trim() == "[DONE]" {
            return Ok(Flow::Done);
        }
        let chunk: Chunk = serde_json::from_str(data).map_err(|e| {
            StreamError::Malformed(format!(
                "a chunk is not valid JSON of its kind ({e}): {}",
                clip(data, 120)
            ))
        })?;
        if let Some(error) = chunk.error {
            return Err(StreamError::Api(api_error(&error)));
        }
        if let Some(usage) = chunk.usage {
            self.usage = Some(Usage {
                input_tokens: usage.prompt_tokens,
                output_tokens: usage.completion_tokens,
            });
        }
        // We ask for one choice; a server that sends more gets its first read.
        for choice in chunk.choices.into_iter().filter(|c| c.index == 0) {
            if let Some(delta) = choice.delta {
                self.delta(delta, out);
            }
            if let Some(reason) = choice.finish_reason {
                self.finish_reason = Some(reason);
            }
        }
        Ok(Flow::More)
    }

    /// Without `[DONE]`, a stream that got as far as a `finish_reason` is
    /// accepted (it is complete but for the usage chunk); one that did not is
    /// cut off.
    fn finish(self, done: bool) -> Result<ModelReply, Incomplete> {
        let Some(reason) = self.finish_reason else {
            return Err(if done {
                Incomplete::DoneBeforeFinish
            } else {
                Incomplete::NoFinish(self.events)
            });
        };
        let mut content = Vec::new();
        if !self.text.is_empty() {
            content.push(Block::Text { text: self.text });
        }
        let has_calls = !self.calls.is_empty();
        for (index, call) in self.calls {
            let arguments = call.arguments;
            let input = if arguments.trim().is_empty() {
                Value::Object(Default::default())
            } else {
                // Not valid JSON: the raw text, for the harness to reject.
                serde_json::from_str(&arguments).unwrap_or(Value::String(arguments))
            };
            content.push(Block::ToolUse(ToolCall {
                id: call.id.unwrap_or_else(|| fallback_id(index)),
                name: call.name,
                input,
            }));
        }
        Ok(ModelReply {
            content,
            stop_reason: stop_reason(&reason, has_calls),
            usage: self.usage,
        })
    }
}

impl Decoder {
    fn delta(&mut self, delta: Delta, out: &mut dyn FnMut(StreamEvent)) {
        if let Some(text) = delta.content.filter(|t| !t.is_empty()) {
            self.text.push_str(&text);
            out(StreamEvent::TextDelta(text));
        }
        for (position, fragment) in delta.tool_calls.into_iter().flatten().enumerate() {
            let index = fragment.index.unwrap_or(position as u64);
            let call = self.calls.entry(index).or_default();
            if let Some(id) = fragment.id.filter(|id| !id.is_empty()) {
                call.id.get_or_insert(id);
            }
            if let Some(function) = fragment.function {
                // The name comes whole in the first fragment; some servers
                // repeat it later, which must not double it.
                if let Some(name) = function.name.filter(|n| !n.is_empty())
                    && call.name.is_empty()
                {
                    call.name = name;
                }
                if let Some(arguments) = function.arguments {
                    call.arguments.push_str(&arguments);
                }
            }
            if !call.announced && !call.name.is_empty() {
                call.announced = true;
                out(StreamEvent::ToolCallStarted {
                    id: call.id.clone().unwrap_or_else(|| fallback_id(index)),
                    name: call.name.clone(),
                });
            }
        }
    }
}

/// For servers that send no call ids; the id only has to match within the
/// conversation.
fn fallback_id(index: u64) -> String {
    format!("call_{index}")
}

/// `stop` with tool calls counts as tool use: some local servers report it so.
fn stop_reason(reason: &str, has_calls: bool) -> StopReason {
    match reason {
        "tool_calls" | "function_call" => StopReason::ToolUse,
        "stop" if has_calls => StopReason::ToolUse,
        "stop" => StopReason::EndTurn,
        "length" => StopReason::MaxTokens,
        _ => StopReason::Other,
    }
}

/// An in-stream error; its `code` is the HTTP status when numeric (vLLM,
/// llama.cpp), otherwise it is taken as a server error.
fn api_error(error: &Value) -> ApiError {
    let status = match error.get("code") {
        Some(Value::Number(n)) => n.as_u64().and_then(|n| u16::try_from(n).ok()),
        Some(Value::String(s)) => s.parse().ok(),
        _ => None,
    }
    .filter(|s| (400..600).contains(s))
    .unwrap_or(500);
    let wrapped = serde_json::json!({ "error": error });
    ApiError::from_json(status, &wrapped).unwrap_or_else(|| ApiError {
        status,
        message: clip(&error.to_string(), 200),
        not_found: status == 404,
        retry_after: None,
    })
}
