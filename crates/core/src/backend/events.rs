//! Agent and MCP events → what the UI shows (and the audit log records), plus the
//! call statistics behind the health pane.

use crate::agent::conversation::ResultPart;
use crate::agent::events::{AgentEvent, AgentId, CallTarget};
use crate::agent::toolbox::ToolRun;
use crate::mcp::{
    AliasState, CallId, ConnectErrorCode, McpEvent, Requester, RevokeCause, ToolErrorCode,
};
use crate::protocol::{BackendEvent, Decided, ToolCallView, ToolOutcomeView};

use super::records::CallRecord;
use super::{Backend, convert};

impl Backend {
    pub(super) fn agent(&mut self, event: AgentEvent) {
        let ui = match event {
            AgentEvent::TextDelta { agent, text } => BackendEvent::AssistantDelta {
                agent: Requester::from(&agent),
                text,
            },
            AgentEvent::ToolCall {
                agent,
                id,
                name,
                arguments,
                origin,
                effect,
            } => {
                if let CallTarget::Mcp { alias, .. } = &origin {
                    self.calls.insert(id.clone(), alias.clone());
                }
                let (alias, remote_name) = match &origin {
                    CallTarget::Mcp { alias, remote_name } => {
                        (Some(alias.clone()), Some(remote_name.clone()))
                    }
                    _ => (None, None),
                };
                let suspicious = match &origin {
                    CallTarget::Mcp { .. } => self
                        .hub
                        .snapshot()
                        .resolve(&name)
                        .map(|t| std::sync::Arc::clone(&t.suspicious)),
                    _ => None,
                };
                self.records.started(
                    &id,
                    CallRecord {
                        name: name.clone(),
                        alias,
                        remote_name,
                        builtin: origin == CallTarget::Builtin,
                        effect,
                        at: chrono::Utc::now().format("%H:%M:%S UTC").to_string(),
                        decided: None,
                        code: None,
                        message: None,
                        schema_errors: Vec::new(),
                        elapsed_ms: None,
                        redacted: Vec::new(),
                        flow: None,
                        suspicious: suspicious.unwrap_or_else(|| Vec::new().into()),
                    },
                );
                BackendEvent::ToolCallStarted(ToolCallView {
                    id,
                    by: Requester::from(&agent),
                    name,
                    target: convert::target(origin),
                    effect: effect.map(convert::effect),
                    arguments,
                })
            }
            AgentEvent::ToolResult {
                id,
                outcome,
                decision,
                server_output,
                elapsed,
                dropped_nulls,
                redacted,
                ..
            } => {
                let run = ToolRun {
                    outcome: outcome.map(|text| vec![ResultPart::Text { text }]),
                    decision,
                    server_output,
                    elapsed,
                    dropped_nulls,
                    redacted,
                };
                self.call_finished(id, &run);
                return;
            }
            AgentEvent::Notice { agent, text } => BackendEvent::Notice(label(&agent, &text)),
            AgentEvent::Error { agent, message } => BackendEvent::Error(label(&agent, &message)),
            AgentEvent::Request { .. }
            | AgentEvent::AssistantText { .. }
            | AgentEvent::TurnDone { .. } => return,
        };
        self.send(ui);
    }

    /// Counts a call of `alias`'s tools in its Health: only calls that went to
    /// the server. One the operator or the policy refused, or that never left
    /// (bad arguments, gone, interrupted before an answer), says nothing about
    /// the server's health.
    pub(super) fn count(&mut self, alias: &str, run: &ToolRun) {
        let reached_server = match &run.outcome {
            Ok(_) => true,
            Err(e) => matches!(
                e.code,
                ToolErrorCode::McpRemoteError
                    | ToolErrorCode::McpTimeout
                    | ToolErrorCode::McpConnectionLost
            ),
        };
        if !reached_server {
            return;
        }
        let stats = self.stats.entry(alias.to_string()).or_default();
        stats.last_latency_ms = Some(run.elapsed.as_millis() as u64);
        match &run.outcome {
            Ok(_) => stats.ok += 1,
            Err(e) => {
                stats.failed += 1;
                stats.last_error = Some((
                    chrono::Utc::now().format("%H:%M:%S UTC").to_string(),
                    e.to_string(),
                ));
            }
        }
        self.servers();
    }

    pub(super) fn mcp(&mut self, event: McpEvent) {
        match &event {
            McpEvent::Registered { alias, .. } => {
                // A new connection: its Health counts its own calls, and it
                // was opened under the config in force.
                self.stats.remove(alias.as_str());
                self.builder.stale.remove(alias.as_str());
                self.connected_under_old_config(alias.as_str());
                self.records.connected(alias.as_str());
                self.approvals.registry_changed(&self.hub.snapshot());
            }
            McpEvent::Revoked {
                alias,
                connection,
                tools,
                cause,
                ..
            } => {
                self.approvals
                    .connection_ended(*connection, &cause.to_string());
                // Its next connection takes the config as it is.
                self.builder.stale.remove(alias.as_str());
                if let RevokeCause::PolicyViolation {
                    code: ConnectErrorCode::DefinitionChanged,
                    ..
                } = cause
                {
                    self.records.pin_violated(alias.as_str());
                }
                if let Some(last) = self.builder.last.get_mut(alias.as_str())
                    && last.connection.id() == *connection
                {
                    last.end(cause.to_string());
                }
                self.send(BackendEvent::ToolsRevoked {
                    alias: alias.to_string(),
                    tools: tools.clone(),
                    cause: convert::cause(cause),
                });
            }
            McpEvent::ToolsChanged {
                alias,
                added,
                removed,
                changed,
                ..
            } => {
                self.approvals.registry_changed(&self.hub.snapshot());
                let mut parts = Vec::new();
                for (label, names) in [("added", added), ("removed", removed), ("changed", changed)]
                {
                    if !names.is_empty() {
                        parts.push(format!("{label}: {}", names.join(", ")));
                    }
                }
                let text = format!(
                    "the tools of `{alias}` changed ({}); a changed tool is approved anew (\"always\" was for its old definition)",
                    parts.join("; ")
                );
                self.send(BackendEvent::Notice(text));
            }
            McpEvent::AliasState { alias, state } => {
                // A connect that failed or was cancelled leaves nothing to apply.
                if !matches!(state, AliasState::Connecting | AliasState::Ready { .. }) {
                    self.pending.remove(alias.as_str());
                }
            }
            McpEvent::Pins {
                alias,
                change,
                tools,
            } => {
                let names: Vec<String> = tools
                    .iter()
                    .map(|r| crate::sanitize::inert_line(&r.tool, 60))
                    .collect();
                let text = match change {
                    crate::mcp::PinChange::Created => Some(format!(
                        "pinned the definitions of {} tool{} of `{alias}` (first use): {}",
                        names.len(),
                        if names.len() == 1 { "" } else { "s" },
                        names.join(", ")
                    )),
                    // The operator's act (v then a, or p) says it in its own
                    // result, with the reconnect: one notice, not two.
                    crate::mcp::PinChange::Accepted => None,
                    // Without an old pin: new tools it may not trust on
                    // first use (suspicious, or unpinned under "required").
                    crate::mcp::PinChange::Violated
                        if tools.iter().all(|r| r.old_sha256.is_none()) =>
                    {
                        Some(format!(
                            "`{alias}` publishes tools without a pin that need your review: {}",
                            names.join(", ")
                        ))
                    }
                    crate::mcp::PinChange::Violated => Some(format!(
                        "`{alias}` publishes tools that differ from their pins: {}",
                        names.join(", ")
                    )),
                };
                if let Some(text) = text {
                    self.send(BackendEvent::Notice(text));
                }
            }
            McpEvent::Progress {
                call,
                progress,
                total,
                message,
                ..
            } => {
                // The call its progress token was given to (a token the server
                // made up names no call: nothing is guessed).
                if let Some(id) = call
                    && self.calls.contains_key(id)
                {
                    self.send(BackendEvent::CallProgress {
                        id: id.clone(),
                        progress: *progress,
                        total: *total,
                        message: message.clone(),
                    });
                }
                return;
            }
            McpEvent::OfferingsChanged {
                alias,
                what: crate::mcp::Offering::Resources,
                ..
            } => {
                self.send(BackendEvent::ResourcesChanged(alias.to_string()));
                return;
            }
            McpEvent::OfferingsChanged {
                alias,
                what: crate::mcp::Offering::Prompts,
                ..
            } => {
                self.send(BackendEvent::PromptsChanged(alias.to_string()));
                return;
            }
            // The call's row and its explanation learn it from its result.
            McpEvent::ToolListChanged { .. }
            | McpEvent::Redacted { .. }
            | McpEvent::ResourceUpdated { .. }
            | McpEvent::Suspicious { .. } => return,
            McpEvent::FlowEscalated {
                call,
                rule,
                tainted_by,
                ..
            }
            | McpEvent::FlowDenied {
                call,
                rule,
                tainted_by,
                ..
            } => {
                let escalated = matches!(event, McpEvent::FlowEscalated { .. });
                let reason = crate::mcp::flows::FlowReason {
                    rule: *rule,
                    tainted_by: tainted_by.clone(),
                };
                self.records.flow(call, escalated, reason);
                return;
            }
            McpEvent::Tainted { scope, taint } => {
                let view = crate::protocol::TaintView {
                    untrusted: taint.is_untrusted(),
                    private: taint.is_private(),
                };
                self.send(match scope {
                    crate::mcp::flows::FlowScope::Lead => BackendEvent::Taint(view),
                    crate::mcp::flows::FlowScope::Client(client) => BackendEvent::ClientTaint {
                        client: client.clone(),
                        taint: view,
                    },
                });
                return;
            }
            McpEvent::TaintCleared { scope, .. } => {
                let view = crate::protocol::TaintView::default();
                self.send(match scope {
                    crate::mcp::flows::FlowScope::Lead => BackendEvent::Taint(view),
                    crate::mcp::flows::FlowScope::Client(client) => BackendEvent::ClientTaint {
                        client: client.clone(),
                        taint: view,
                    },
                });
                return;
            }
            McpEvent::Task {
                alias,
                call,
                state,
                message,
                ..
            } => {
                if self.calls.contains_key(call) {
                    if self.task_calls.insert(call.clone()) {
                        // A new task: counted in its server's Health.
                        self.stats.entry(alias.to_string()).or_default().tasks += 1;
                    }
                    self.send(BackendEvent::CallTask {
                        id: call.clone(),
                        status: convert::task_status(*state),
                        message: message.clone(),
                    });
                }
            }
        }
        self.servers();
    }
}

pub(super) fn label(agent: &AgentId, text: &str) -> String {
    match agent {
        AgentId::Lead => text.to_string(),
        other => format!("{other}: {text}"),
    }
}

impl Backend {
    /// Call `id` ended (an agent's, or the operator's own): counted in its
    /// server's Health, remembered for "explain", shown.
    pub(super) fn call_finished(&mut self, id: CallId, run: &ToolRun) {
        self.task_calls.remove(&id);
        if let Some(alias) = self.calls.remove(&id) {
            self.count(&alias, run);
        }
        // Its prompt's answer (or grant) when it had one; else the decision
        // its outcome carries.
        let approval = self.approvals.take_decided(&id);
        let decided = self.records.finished(&id, run, approval).or(approval);
        if let (Some(store), Some(decided)) = (&self.store, decided) {
            store.audit_decided(&id, decided.key(), decided.grant());
        }
        let mut view = outcome_view(id, run, decided);
        view.flow = self
            .records
            .get(&view.id)
            .and_then(|r| r.flow.as_ref())
            .map(|(escalated, reason)| {
                let rule = match reason.rule {
                    crate::mcp::flows::FlowRule::Trifecta => "on_trifecta",
                    crate::mcp::flows::FlowRule::UntrustedSink => "untrusted_sink",
                };
                let did = if *escalated {
                    "asked because of flow control"
                } else {
                    "refused by flow control"
                };
                format!(
                    "{did} ([flows] {rule}): the session was tainted by {}",
                    reason.tainters()
                )
            });
        self.send(BackendEvent::ToolCallFinished(view));
    }
}

pub(super) fn outcome_view(id: CallId, run: &ToolRun, decided: Option<Decided>) -> ToolOutcomeView {
    let (ok, text, code) = match &run.outcome {
        Ok(parts) => (
            true,
            parts
                .iter()
                .map(|p| match p {
                    ResultPart::Text { text } => text.clone(),
                    ResultPart::Image { media_type, data } => {
                        format!("[image: {media_type}, {} bytes of base64]", data.len())
                    }
                })
                .collect::<Vec<_>>()
                .join("\n"),
            None,
        ),
        Err(e) => (false, e.message.clone(), Some(e.code.to_string())),
    };
    ToolOutcomeView {
        id,
        ok,
        text,
        code,
        server_output: run.server_output.clone(),
        elapsed_ms: run.elapsed.as_millis() as u64,
        decided,
        flow: None,
        dropped_nulls: run.dropped_nulls.clone(),
    }
}
