//! The call path: snapshot lookup → argument validation (nothing is sent when
//! invalid) → policy and approval → the call with its timeout → result or a
//! locally built error envelope.

use std::sync::Arc;
use std::time::{Duration, Instant};

use rmcp::model::{CustomResult, ServerResult};
use serde_json::{Map, Value, json};

use super::approver::{ApprovalDecision, ApprovalRequest, Approver};
use super::connection::RequestError;
use super::envelope::{ToolError, ToolErrorCode as Code};
use super::events::RevokeCause;
use super::hub::Hub;
use super::names::exposed_name;
use super::policy::Effect;
use super::registry::{ExposedTool, Snapshot};
use super::schema;

/// What the model gets back from a successful call.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolOutput {
    /// MCP content blocks as the server sent them (text possibly truncated).
    pub content: Vec<Value>,
    pub structured_content: Option<Value>,
    /// Whether `max_result_bytes` cut anything (a notice block says so too).
    pub truncated: bool,
}

/// The whole outcome of one call.
#[derive(Debug, Clone)]
pub struct CallOutcome {
    pub result: Result<ToolOutput, ToolError>,
    /// What the server said that the model must not see (an `isError` text, a
    /// JSON-RPC error message). For the operator, shown as server output.
    pub server_output: Option<String>,
    /// Time spent on the wire (zero when nothing was sent).
    pub elapsed: Duration,
}

impl CallOutcome {
    fn local(error: ToolError) -> Self {
        Self {
            result: Err(error),
            server_output: None,
            elapsed: Duration::ZERO,
        }
    }
}

impl Hub {
    /// Runs one call of `name` (an exposed name) against `snapshot`, the tool set
    /// of the model request this call belongs to.
    pub async fn call(
        &self,
        snapshot: &Snapshot,
        name: &str,
        arguments: Value,
        approver: &dyn Approver,
    ) -> CallOutcome {
        let Some(tool) = snapshot.resolve(name) else {
            return CallOutcome::local(self.unresolved(snapshot, name));
        };
        let tool = Arc::clone(tool);
        let envelope = |code, message: String| {
            ToolError::new(code, message).for_tool(tool.alias.as_str(), &tool.name)
        };
        let arguments = if arguments.is_null() {
            Value::Object(Map::new())
        } else {
            arguments
        };
        let errors = schema::validate(&tool.validator, &arguments);
        if !errors.is_empty() {
            let mut error = envelope(
                Code::McpInvalidArguments,
                format!(
                    "the arguments do not match the input schema of `{}`; nothing was sent",
                    tool.name
                ),
            );
            error.errors = errors;
            return CallOutcome::local(error);
        }
        if tool.effect == Effect::Confirm {
            let request = ApprovalRequest {
                tool: tool.name.clone(),
                alias: tool.alias.clone(),
                remote_name: tool.remote_name.clone(),
                arguments: arguments.clone(),
                effect: tool.effect,
            };
            if let ApprovalDecision::Denied { reason } = approver.approve(request).await {
                return CallOutcome::local(envelope(Code::McpPermissionDenied, reason));
            }
        }
        if let Some(error) = self.gone(&tool) {
            return CallOutcome::local(error);
        }
        let Value::Object(arguments) = arguments else {
            // Unreachable: the schema requires an object.
            return CallOutcome::local(envelope(
                Code::McpInvalidArguments,
                "arguments must be an object".into(),
            ));
        };
        self.send(&tool, arguments).await
    }

    async fn send(&self, tool: &ExposedTool, arguments: Map<String, Value>) -> CallOutcome {
        let envelope = |code, message: String| {
            ToolError::new(code, message).for_tool(tool.alias.as_str(), &tool.name)
        };
        let conn = &tool.connection;
        let started = Instant::now();
        let params = json!({ "name": tool.remote_name, "arguments": arguments });
        let response = conn
            .request("tools/call", params, conn.call_timeout())
            .await;
        let elapsed = started.elapsed();
        let (result, server_output) = match response {
            Ok(result) => match parse_result(result) {
                Ok(parsed) if parsed.is_error => (
                    Err(envelope(
                        Code::McpRemoteError,
                        format!(
                            "`{}` reported an error. Its error text is withheld from the model; \
                             the operator can see it. The connection is kept.",
                            tool.name
                        ),
                    )),
                    Some(text_of(&parsed.content)),
                ),
                Ok(parsed) => (Ok(truncate(parsed, self.limits().max_result_bytes)), None),
                Err(problem) => (
                    Err(envelope(
                        Code::McpRemoteError,
                        format!("`{}` returned a malformed result", tool.name),
                    )),
                    Some(problem),
                ),
            },
            Err(RequestError::Remote { code, message }) => (
                Err(envelope(
                    Code::McpRemoteError,
                    format!(
                        "the server rejected the call to `{}` (JSON-RPC error {code}); the connection is kept",
                        tool.name
                    ),
                )),
                Some(message),
            ),
            Err(RequestError::Timeout(after)) => {
                self.drop_connection(
                    conn,
                    RevokeCause::Timeout {
                        tool: tool.name.clone(),
                    },
                );
                let message = format!(
                    "`{}` did not answer within {} ms; the call was cancelled, the connection to `{}` dropped \
                     and its tools revoked",
                    tool.name,
                    after.as_millis(),
                    tool.alias
                );
                (Err(envelope(Code::McpTimeout, message)), None)
            }
            Err(RequestError::Lost(detail)) => {
                self.drop_connection(
                    conn,
                    RevokeCause::ConnectionLost {
                        detail: detail.clone(),
                    },
                );
                let message = format!(
                    "the connection to `{}` was lost during the call ({detail}); its tools were revoked",
                    tool.alias
                );
                (Err(envelope(Code::McpConnectionLost, message)), None)
            }
        };
        CallOutcome {
            result,
            server_output,
            elapsed,
        }
    }

    /// Why `name` is not callable in this snapshot.
    fn unresolved(&self, snapshot: &Snapshot, name: &str) -> ToolError {
        for entry in snapshot.connections() {
            let denied = entry.published.iter().any(|t| {
                exposed_name(entry.alias(), &t.name) == name
                    && !entry.exposed.iter().any(|e| e.name == name)
            });
            if denied {
                return ToolError::new(
                    Code::McpPermissionDenied,
                    format!("`{name}` is denied by local policy"),
                )
                .for_tool(entry.alias().as_str(), name);
            }
        }
        if self.snapshot().resolve(name).is_some() {
            return ToolError::new(
                Code::McpUnknownTool,
                format!(
                    "`{name}` is not in this request's tool set (snapshot v{}); it was connected after this \
                     request was built and will be offered on the next request",
                    snapshot.version()
                ),
            );
        }
        ToolError::new(
            Code::McpUnknownTool,
            format!("there is no tool named `{name}` in this request's tool set"),
        )
    }

    /// The tool's connection ended or was revoked after the snapshot was taken.
    fn gone(&self, tool: &ExposedTool) -> Option<ToolError> {
        let registered = self
            .snapshot()
            .connections()
            .any(|e| e.connection.id() == tool.connection.id());
        if registered && !tool.connection.is_ended() {
            return None;
        }
        let why = tool
            .connection
            .end_reason()
            .map(|r| format!(" ({r})"))
            .unwrap_or_default();
        Some(
            ToolError::new(
                Code::McpNotConnected,
                format!(
                    "`{}` is no longer connected{why}; its tools were revoked",
                    tool.alias
                ),
            )
            .for_tool(tool.alias.as_str(), &tool.name),
        )
    }
}

struct Parsed {
    is_error: bool,
    content: Vec<Value>,
    structured: Option<Value>,
}

/// Reads a `tools/call` result leniently: unknown content block types are kept
/// as they are instead of failing the whole result.
fn parse_result(result: ServerResult) -> Result<Parsed, String> {
    let raw = match result {
        ServerResult::CallToolResult(r) => serde_json::to_value(r).map_err(|e| e.to_string())?,
        ServerResult::CustomResult(CustomResult(raw)) => raw,
        ServerResult::EmptyResult(_) => json!({}),
        other => {
            return Err(format!(
                "unexpected result type: {}",
                serde_json::to_string(&other).unwrap_or_default()
            ));
        }
    };
    let content = match raw.get("content") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(blocks)) => blocks.clone(),
        Some(_) => return Err("`content` is not an array".into()),
    };
    Ok(Parsed {
        is_error: raw.get("isError").and_then(Value::as_bool).unwrap_or(false),
        content,
        structured: raw
            .get("structuredContent")
            .filter(|v| !v.is_null())
            .cloned(),
    })
}

fn text_of(content: &[Value]) -> String {
    content
        .iter()
        .filter_map(|b| b.get("text").and_then(Value::as_str))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Caps the text of a result at `max_bytes`, with an explicit notice block.
fn truncate(parsed: Parsed, max_bytes: usize) -> ToolOutput {
    let total: usize = parsed
        .content
        .iter()
        .filter_map(|b| b.get("text").and_then(Value::as_str))
        .map(str::len)
        .sum();
    let structured_len = parsed
        .structured
        .as_ref()
        .map(|v| v.to_string().len())
        .unwrap_or(0);
    if total <= max_bytes && structured_len <= max_bytes {
        return ToolOutput {
            content: parsed.content,
            structured_content: parsed.structured,
            truncated: false,
        };
    }
    let mut shown = 0;
    let mut cut_done = false;
    let mut content = Vec::with_capacity(parsed.content.len() + 1);
    for mut block in parsed.content {
        let Some(text) = block.get("text").and_then(Value::as_str) else {
            content.push(block);
            continue;
        };
        if cut_done {
            continue;
        }
        let remaining = max_bytes - shown;
        if text.len() <= remaining {
            shown += text.len();
        } else {
            let mut cut = remaining;
            while !text.is_char_boundary(cut) {
                cut -= 1;
            }
            shown += cut;
            block["text"] = Value::String(text[..cut].to_string());
            cut_done = true;
        }
        content.push(block);
    }
    let mut notice =
        format!("[mcp-harness: result truncated: {shown} of {total} bytes of text shown");
    let structured = if structured_len > max_bytes {
        notice.push_str(&format!(
            "; structuredContent of {structured_len} bytes omitted"
        ));
        None
    } else {
        parsed.structured
    };
    notice.push_str(" (max_result_bytes)]");
    content.push(json!({ "type": "text", "text": notice }));
    ToolOutput {
        content,
        structured_content: structured,
        truncated: true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn truncation_cuts_text_on_char_boundaries_and_says_so() {
        let parsed = Parsed {
            is_error: false,
            content: vec![
                json!({"type":"text","text":"ééééé"}),
                json!({"type":"text","text":"more"}),
            ],
            structured: None,
        };
        let out = truncate(parsed, 5);
        assert!(out.truncated);
        assert_eq!(out.content[0]["text"], "éé");
        assert_eq!(out.content.len(), 2, "{:?}", out.content);
        assert!(
            out.content[1]["text"]
                .as_str()
                .unwrap()
                .contains("4 of 14 bytes")
        );
    }

    #[test]
    fn small_results_are_untouched() {
        let parsed = Parsed {
            is_error: false,
            content: vec![json!({"type":"text","text":"ok"})],
            structured: None,
        };
        let out = truncate(parsed, 100);
        assert!(!out.truncated);
        assert_eq!(out.content, vec![json!({"type":"text","text":"ok"})]);
    }

    #[test]
    fn unknown_content_blocks_survive_parsing() {
        let raw =
            json!({"content":[{"type":"text","text":"hello"},{"type":"hologram","data":"?"}]});
        let parsed = parse_result(ServerResult::CustomResult(CustomResult(raw))).unwrap();
        assert_eq!(parsed.content.len(), 2);
        assert!(!parsed.is_error);
    }
}
