//! Reads the Messages API event stream: `message_start`, then per content block
//! `content_block_start` / `content_block_delta`* / `content_block_stop`, then
//! `message_delta` (stop reason, usage) and `message_stop`; `ping` any time;
//! `error` instead of the rest when the API gives up (e.g. overloaded).

use std::collections::HashMap;

use serde::Deserialize;
use serde_json::Value;
use sse_stream::Sse;

use super::super::api_error::{ApiError, clip};
use super::super::http::{self, Flow, StreamError};
use super::super::{ModelReply, StopReason, StreamEvent, Usage};
use crate::agent::conversation::{Block, ToolCall};

/// The events we act on; unknown ones are skipped, as the API asks of clients.
#[derive(Debug, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Event {
    MessageStart {
        message: MessageStart,
    },
    ContentBlockStart {
        index: u64,
        content_block: BlockStart,
    },
    ContentBlockDelta {
        index: u64,
        delta: Delta,
    },
    ContentBlockStop {
        index: u64,
    },
    MessageDelta {
        delta: MessageDelta,
        #[serde(default)]
        usage: Option<WireUsage>,
    },
    MessageStop,
    Ping,
    Error {
        error: Value,
    },
    #[serde(other)]
    Unknown,
}

#[derive(Debug, Deserialize)]
struct MessageStart {
    #[serde(default)]
    usage: Option<WireUsage>,
}

#[derive(Debug, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum BlockStart {
    Text {
        #[serde(default)]
        text: String,
    },
    ToolUse {
        id: String,
        name: String,
        #[serde(default)]
        input: Value,
    },
    /// Thinking, server tools and whatever comes next: not ours to show.
    #[serde(other)]
    Other,
}

#[derive(Debug, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Delta {
    #[serde(rename = "text_delta")]
    Text { text: String },
    #[serde(rename = "input_json_delta")]
    InputJson { partial_json: String },
    /// Thinking, signatures, citations: not ours to show.
    #[serde(other)]
    Other,
}

#[derive(Debug, Deserialize)]
struct MessageDelta {
    #[serde(default)]
    stop_reason: Option<String>,
}

/// Input counts come in three parts (uncached, cache writes, cache reads); we
/// report their sum as the input.
#[derive(Debug, Default, Deserialize)]
struct WireUsage {
    input_tokens: Option<u64>,
    output_tokens: Option<u64>,
    cache_creation_input_tokens: Option<u64>,
    cache_read_input_tokens: Option<u64>,
}

/// A content block as it accumulates.
#[derive(Debug)]
enum Slot {
    Text(String),
    Tool {
        id: String,
        name: String,
        /// The `input` of `content_block_start` (normally `{}`), used when no
        /// `input_json_delta` follows.
        initial: Value,
        json: String,
    },
    Ignored,
}

/// The state of one streamed reply.
#[derive(Debug, Default)]
pub(super) struct Decoder {
    /// Blocks in the order they started.
    slots: Vec<Slot>,
    /// The wire's block index → position in `slots`.
    by_index: HashMap<u64, usize>,
    stop_reason: Option<StopReason>,
    usage: Option<Usage>,
    events: usize,
}

/// What an Anthropic stream ended without.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum Incomplete {
    #[error("the stream ended before `message_stop` (after {0} events)")]
    NoMessageStop(usize),
    #[error("`message_stop` arrived without a `stop_reason` in any `message_delta`")]
    NoStopReason,
}

impl http::Decoder for Decoder {
    type Incomplete = Incomplete;

    fn feed(&mut self, event: &Sse, out: &mut dyn FnMut(StreamEvent)) -> Result<Flow, StreamError> {
        // An event with no data carries nothing (a bare `event: ping`, say).
        let Some(data) = event.data.as_deref() else {
            return Ok(Flow::More);
        };
        self.events += 1;
        let name = event.event.as_deref().unwrap_or("message");
        let parsed: Event = serde_json::from_str(data).map_err(|e| {
            StreamError::Malformed(format!(
                "event `{name}` is not valid JSON of its kind ({e}): {}",
                clip(data, 120)
            ))
        })?;
        match parsed {
            Event::MessageStart { message } => {
                self.add_usage(message.usage.unwrap_or_default());
            }
            Event::ContentBlockStart {
                index,
                content_block,
            } => {
                let slot = match content_block {
                    BlockStart::Text { text } => {
                        if !text.is_empty() {
                            out(StreamEvent::TextDelta(text.clone()));
                        }
                        Slot::Text(text)
                    }
                    BlockStart::ToolUse { id, name, input } => {
                        out(StreamEvent::ToolCallStarted {
                            id: id.clone(),
                            name: name.clone(),
                        });
                        Slot::Tool {
                            id,
                            name,
                            initial: input,
                            json: String::new(),
                        }
                    }
                    BlockStart::Other => Slot::Ignored,
                };
                if self.by_index.insert(index, self.slots.len()).is_some() {
                    return Err(malformed(format!("content block {index} started twice")));
                }
                self.slots.push(slot);
            }
            Event::ContentBlockDelta { index, delta } => {
                let slot = self
                    .by_index
                    .get(&index)
                    .and_then(|&at| self.slots.get_mut(at))
                    .ok_or_else(|| {
                        malformed(format!(
                            "a delta for content block {index}, which never started"
                        ))
                    })?;
                match (slot, delta) {
                    (Slot::Text(text), Delta::Text { text: more }) => {
                        text.push_str(&more);
                        out(StreamEvent::TextDelta(more));
                    }
                    (Slot::Tool { json, .. }, Delta::InputJson { partial_json }) => {
                        json.push_str(&partial_json);
                    }
                    (Slot::Ignored, _) | (_, Delta::Other) => {}
                    (_, delta) => {
                        return Err(malformed(format!(
                            "content block {index} got a delta of the wrong kind ({delta:?})"
                        )));
                    }
                }
            }
            // Blocks are assembled in `finish`; a stop only confirms the block.
            Event::ContentBlockStop { index } => {
                if !self.by_index.contains_key(&index) {
                    return Err(malformed(format!(
                        "content block {index} stopped but never started"
                    )));
                }
            }
            Event::MessageDelta { delta, usage } => {
                if let Some(reason) = delta.stop_reason {
                    self.stop_reason = Some(stop_reason(&reason));
                }
                self.add_usage(usage.unwrap_or_default());
            }
            Event::MessageStop => return Ok(Flow::Done),
            Event::Ping | Event::Unknown => {}
            Event::Error { error } => return Err(StreamError::Api(api_error(&error))),
        }
        Ok(Flow::More)
    }

    fn finish(self, done: bool) -> Result<ModelReply, Incomplete> {
        if !done {
            return Err(Incomplete::NoMessageStop(self.events));
        }
        let stop_reason = self.stop_reason.ok_or(Incomplete::NoStopReason)?;
        let content = self.slots.into_iter().filter_map(block).collect();
        Ok(ModelReply {
            content,
            stop_reason,
            usage: self.usage,
        })
    }
}

impl Decoder {
    /// `message_start` carries the input count, `message_delta` the (cumulative)
    /// output count and sometimes the input again: the latest value wins.
    fn add_usage(&mut self, wire: WireUsage) {
        let input = [
            wire.input_tokens,
            wire.cache_creation_input_tokens,
            wire.cache_read_input_tokens,
        ];
        if input.iter().all(Option::is_none) && wire.output_tokens.is_none() {
            return;
        }
        let usage = self.usage.get_or_insert_with(Usage::default);
        if input.iter().any(Option::is_some) {
            usage.input_tokens = input.iter().flatten().sum();
        }
        if let Some(output) = wire.output_tokens {
            usage.output_tokens = output;
        }
    }
}

/// A finished block; empty text and ignored blocks are dropped. Arguments that
/// are not valid JSON stay as the raw text, for the harness to reject.
fn block(slot: Slot) -> Option<Block> {
    match slot {
        Slot::Text(text) if text.is_empty() => None,
        Slot::Text(text) => Some(Block::Text { text }),
        Slot::Tool {
            id,
            name,
            initial,
            json,
        } => {
            let input = if json.trim().is_empty() {
                if initial.is_null() {
                    Value::Object(Default::default())
                } else {
                    initial
                }
            } else {
                serde_json::from_str(&json).unwrap_or(Value::String(json))
            };
            Some(Block::ToolUse(ToolCall { id, name, input }))
        }
        Slot::Ignored => None,
    }
}

fn stop_reason(reason: &str) -> StopReason {
    match reason {
        // We send no stop sequences; should one match, the turn ended normally.
        "end_turn" | "stop_sequence" => StopReason::EndTurn,
        "tool_use" => StopReason::ToolUse,
        "max_tokens" => StopReason::MaxTokens,
        _ => StopReason::Other,
    }
}

/// An `error` event, with the status its type stands for in the API docs, so
/// it is judged like the same error arriving as an HTTP status.
fn api_error(error: &Value) -> ApiError {
    let kind = error.get("type").and_then(Value::as_str).unwrap_or("");
    let status = match kind {
        "invalid_request_error" => 400,
        "authentication_error" => 401,
        "permission_error" => 403,
        "not_found_error" => 404,
        "request_too_large" => 413,
        "rate_limit_error" => 429,
        "overloaded_error" => 529,
        _ => 500,
    };
    let wrapped = serde_json::json!({ "error": error });
    ApiError::from_json(status, &wrapped).unwrap_or_else(|| ApiError {
        status,
        message: if kind.is_empty() {
            "an error event without a message".into()
        } else {
            kind.to_string()
        },
        not_found: status == 404,
        retry_after: None,
    })
}

fn malformed(detail: String) -> StreamError {
    StreamError::Malformed(detail)
}
