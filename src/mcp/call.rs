//! The call path: snapshot lookup → argument validation (nothing is sent when
//! invalid) → policy and approval → the call with its timeout → result or a
//! locally built error envelope.

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Map, Value, json};

use super::approver::{ApprovalDecision, ApprovalRequest, Approver};
use super::connection::RequestError;
use super::envelope::{ToolError, ToolErrorCode as Code};
use super::events::RevokeCause;
use super::hub::Hub;
use super::names::exposed_name;
use super::policy::Effect;
use super::registry::{ExposedTool, Snapshot};
pub use super::result::ToolOutput;
use super::result::{Saver, finish, parse_result, text_of};
use super::schema;

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
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let id = format!("call-{}-{n}", chrono::Utc::now().format("%H%M%S"));
        self.call_as(snapshot, name, arguments, approver, &id).await
    }

    /// [`Hub::call`] for the call `call_id` (the model's tool-use id): a result
    /// over `max_result_bytes` is saved as `results/CALL_ID.txt`, and progress
    /// events name this id.
    pub async fn call_as(
        &self,
        snapshot: &Snapshot,
        name: &str,
        arguments: Value,
        approver: &dyn Approver,
        call_id: &str,
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
        // Never ask the operator about a call that cannot happen.
        if let Some(error) = self.gone(&tool) {
            return CallOutcome::local(error);
        }
        if tool.effect == Effect::Confirm {
            let request = ApprovalRequest {
                tool: tool.name.clone(),
                alias: Some(tool.alias.clone()),
                remote_name: Some(tool.remote_name.clone()),
                arguments: arguments.clone(),
                effect: tool.effect,
                requested_by: approver.requester(),
            };
            if let ApprovalDecision::Denied { reason } = approver.approve(request).await {
                return CallOutcome::local(envelope(Code::McpPermissionDenied, reason));
            }
        }
        // The connection may have ended while the operator was deciding.
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
        self.send(&tool, arguments, call_id).await
    }

    async fn send(
        &self,
        tool: &ExposedTool,
        arguments: Map<String, Value>,
        call_id: &str,
    ) -> CallOutcome {
        let envelope = |code, message: String| {
            ToolError::new(code, message).for_tool(tool.alias.as_str(), &tool.name)
        };
        let conn = &tool.connection;
        let started = Instant::now();
        let params = json!({ "name": tool.remote_name, "arguments": arguments });
        let response = conn.request_long("tools/call", params, Some(call_id)).await;
        let elapsed = started.elapsed();
        let (result, server_output) = match response {
            Ok((result, spilled)) => match parse_result(result) {
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
                Ok(parsed) => {
                    // Saving a large result is file work: off the async workers.
                    let (max, dir, id) = (
                        self.limits().max_result_bytes,
                        self.results_dir(),
                        call_id.to_string(),
                    );
                    let finished = tokio::task::spawn_blocking(move || {
                        let saver = Saver {
                            dir: dir.as_deref(),
                            call_id: &id,
                        };
                        finish(parsed, spilled, max, saver)
                    })
                    .await;
                    match finished {
                        Ok(output) => (Ok(output), None),
                        Err(e) => (
                            Err(envelope(
                                Code::McpRemoteError,
                                format!("the result of `{}` could not be read", tool.name),
                            )),
                            Some(format!("mcp-harness: {e}")),
                        ),
                    }
                }
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
                let message = if after >= conn.max_call() {
                    format!(
                        "`{}` was still running after {} ms (max_call_ms), however much progress it reported; \
                         the call was cancelled, the connection to `{}` dropped and its tools revoked",
                        tool.name,
                        after.as_millis(),
                        tool.alias
                    )
                } else {
                    format!(
                        "`{}` did not answer within {} ms{}; the call was cancelled, the connection to `{}` \
                         dropped and its tools revoked",
                        tool.name,
                        after.as_millis(),
                        if conn.resets_on_progress() {
                            " (nor reported progress)"
                        } else {
                            ""
                        },
                        tool.alias
                    )
                };
                (Err(envelope(Code::McpTimeout, message)), None)
            }
            Err(lost @ (RequestError::Lost(_) | RequestError::Unauthorized)) => {
                let detail = lost.lost_detail().unwrap_or_default();
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
        // The name of a configured server that is not connected now.
        let offline = self.aliases().into_iter().find(|(alias, _)| {
            name.starts_with(&format!(
                "{}{}__",
                super::names::EXPOSED_PREFIX,
                alias.normalized()
            )) && snapshot.connection_for(alias).is_none()
        });
        if let Some((alias, state)) = offline {
            return ToolError::new(
                Code::McpUnknownTool,
                format!(
                    "there is no tool named `{name}` in this request's tool set: `{alias}` is {} (its tools \
                     were revoked or never exposed); connect_mcp can connect it again",
                    state.label()
                ),
            )
            .for_tool(alias.as_str(), name);
        }
        ToolError::new(
            Code::McpUnknownTool,
            format!("there is no tool named `{name}` in this request's tool set"),
        )
    }

    /// The tool's connection ended or was revoked after the snapshot was taken,
    /// or the server re-published the tool differently (or not at all) since.
    fn gone(&self, tool: &Arc<ExposedTool>) -> Option<ToolError> {
        let current = self.snapshot();
        let registered = current
            .connections()
            .any(|e| e.connection.id() == tool.connection.id());
        if registered && !tool.connection.is_ended() {
            // Unchanged tools keep their identity across a re-list.
            return match current.resolve(&tool.name) {
                Some(now) if Arc::ptr_eq(now, tool) => None,
                now => Some(
                    ToolError::new(
                        Code::McpUnknownTool,
                        format!(
                            "`{}` {} since this request's tool set was built (the server re-published its \
                             tools); nothing was sent{}",
                            tool.name,
                            if now.is_some() { "changed" } else { "was withdrawn" },
                            if now.is_some() {
                                "; its new definition is offered from the next request"
                            } else {
                                ""
                            }
                        ),
                    )
                    .for_tool(tool.alias.as_str(), &tool.name),
                ),
            };
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
