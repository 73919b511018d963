//! When a call cannot be made or its request fails: the locally built
//! envelopes of rule 8 (the connection lost, timed out, revoked, the tool
//! gone or changed since the snapshot), in the harness's words.

use super::*;

impl Hub {
    /// A request of the call failed: rule 8's transitions.
    pub(super) fn request_failed(
        &self,
        tool: &ExposedTool,
        error: RequestError,
    ) -> (Result<ToolOutput, ToolError>, Option<String>) {
        let envelope = |code, message: String| {
            ToolError::new(code, message).for_tool(tool.alias.as_str(), &tool.name)
        };
        let conn = &tool.connection;
        match error {
            RequestError::Remote { code, message } => (
                Err(envelope(
                    Code::McpRemoteError,
                    format!(
                        "the server rejected the call to `{}` (JSON-RPC error {code}); the connection is kept",
                        tool.name
                    ),
                )),
                Some(message),
            ),
            RequestError::Timeout(after) => {
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
            RequestError::Unauthorized(denial) if denial.more_scope => {
                // Only this operation needs more permission: the connection stays.
                let message = format!(
                    "`{}` needs more permission than the current sign-in to `{}` grants; \
                     the operator has to sign in again ({}). The connection is kept.",
                    tool.name, tool.alias, denial.hint
                );
                (
                    Err(envelope(Code::McpAuthRequired, message)),
                    server_words(&denial),
                )
            }
            RequestError::Unauthorized(denial) => {
                self.drop_connection(
                    conn,
                    RevokeCause::AuthRequired {
                        detail: denial.message.clone(),
                    },
                );
                let message = format!(
                    "`{}` refused the call for want of a valid sign-in; its tools were revoked \
                     until the operator signs in again",
                    tool.alias
                );
                (
                    Err(envelope(Code::McpAuthRequired, message)),
                    server_words(&denial),
                )
            }
            lost @ RequestError::Lost(_) => {
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
        }
    }

    /// Why `name` is not callable in this snapshot, in words for who asked:
    /// the model is told of `connect_mcp`, an outside client to list its tools
    /// again, the operator of the Servers panel.
    pub(super) fn unresolved(
        &self,
        snapshot: &Snapshot,
        name: &str,
        requester: &Requester,
    ) -> ToolError {
        let (tool_set, reconnect) = match requester {
            Requester::Client(_) => (
                "the tools offered now",
                "the operator can connect it again; then list the tools again",
            ),
            Requester::Operator => (
                "the registry",
                "connect it in the Servers panel (c) or with `connect`",
            ),
            Requester::Lead | Requester::Subagent(_) | Requester::Teammate(_) => (
                "this request's tool set",
                "connect_mcp can connect it again",
            ),
        };
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
                crate::mcp::names::EXPOSED_PREFIX,
                alias.normalized()
            )) && snapshot.connection_for(alias).is_none()
        });
        if let Some((alias, state)) = offline {
            return ToolError::new(
                Code::McpUnknownTool,
                format!(
                    "there is no tool named `{name}` in {tool_set}: `{alias}` is {} (its tools \
                     were revoked or never exposed); {reconnect}",
                    state.label()
                ),
            )
            .for_tool(alias.as_str(), name);
        }
        ToolError::new(
            Code::McpUnknownTool,
            format!("there is no tool named `{name}` in {tool_set}"),
        )
    }

    /// The tool's connection ended or was revoked after the snapshot was taken,
    /// or the server re-published the tool differently (or not at all) since.
    pub(super) fn gone(&self, tool: &Arc<ExposedTool>) -> Option<ToolError> {
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

/// What the authorization server said about a refusal (operator-only).
fn server_words(denial: &crate::mcp::connection::AuthDenial) -> Option<String> {
    (!denial.server_output.is_empty()).then(|| denial.server_output.join("\n"))
}
