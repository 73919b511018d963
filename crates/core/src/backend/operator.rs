//! The operator's own actions: connecting and reconnecting, writing a policy
//! block, calling a tool by hand.

use std::sync::Arc;

use super::records::CallRecord;
use super::{Backend, Inbound, convert};
use crate::agent::toolbox::{ToolRun, from_mcp};
use crate::config::ConfigSource;
use crate::mcp::{CallId, CallIdentity, Requester, ToolError, ToolErrorCode};
use crate::protocol::{BackendEvent, Target, ToolCallView};

impl Backend {
    pub(super) fn spawn_connect(&mut self, alias: String, reconnect: bool) {
        let (hub, events) = (self.hub.clone(), self.events.clone());
        self.jobs.spawn(async move {
            let text = connect(&hub, &alias, reconnect).await;
            let _ = events.send(BackendEvent::CommandResult(text));
        });
    }

    /// Lists `alias`'s resources off the loop; the answer is a `Resources` event.
    pub(super) fn spawn_list_resources(&mut self, alias: String) {
        let (hub, events) = (self.hub.clone(), self.events.clone());
        self.jobs.spawn(async move {
            let listed = hub.list_resources(&alias).await;
            let row = |r: &crate::mcp::Resource| crate::protocol::ResourceRow {
                uri: r.uri.clone(),
                name: r.name.clone(),
                mime: r.mime_type.clone(),
                size: r.size,
            };
            let view = match listed.result {
                Ok(list) => crate::protocol::ResourcesView {
                    resources: list.resources.iter().map(row).collect(),
                    templates: list
                        .templates
                        .iter()
                        .map(|t| crate::protocol::ResourceRow {
                            uri: t.uri_template.clone(),
                            name: t.name.clone(),
                            mime: t.mime_type.clone(),
                            size: None,
                        })
                        .collect(),
                    malformed: list.malformed,
                    read: super::convert::effect(list.read),
                    error: None,
                    alias,
                },
                Err(e) => crate::protocol::ResourcesView {
                    read: super::convert::effect(hub.resource_policy(&alias)),
                    alias,
                    resources: Vec::new(),
                    templates: Vec::new(),
                    malformed: 0,
                    error: Some(e.message),
                },
            };
            let _ = events.send(BackendEvent::Resources(view));
        });
    }

    /// Lists `alias`'s prompts off the loop; the answer is a `Prompts` event.
    pub(super) fn spawn_list_prompts(&mut self, alias: String) {
        let (hub, events) = (self.hub.clone(), self.events.clone());
        self.jobs.spawn(async move {
            let listed = hub.list_prompts(&alias).await;
            let (prompts, error) = match listed.result {
                Ok(prompts) => (prompts.iter().map(convert::prompt_row).collect(), None),
                Err(e) => (Vec::new(), Some(e.message)),
            };
            let view = crate::protocol::PromptsView {
                alias,
                prompts,
                error,
            };
            let _ = events.send(BackendEvent::Prompts(view));
        });
    }

    pub(super) fn write_policy(&mut self, alias: &str) {
        let source = self.config.source.clone();
        let text = match (&source, self.hub.last_report(alias), self.hub.spec(alias)) {
            (ConfigSource::Embedded, ..) => format!(
                "the embedded default config cannot be edited: create {} (start from config.example.toml)",
                crate::config::default_path()
                    .map(|p| p.display().to_string())
                    .unwrap_or_else(|| "a config file".into())
            ),
            (ConfigSource::File(path), Some(report), Ok(spec)) => {
                let published: Vec<String> =
                    report.published.iter().map(|t| t.name.clone()).collect();
                match crate::config::edit::write_policy(path, alias, &published, &spec.policy) {
                    Ok(policy) => {
                        let _ = self.hub.change_policy(alias, policy);
                        let wrote = format!("wrote [servers.{alias}.tools] to {}", path.display());
                        // Its result is the one notice of this act.
                        return self.pin_listed_and_reconnect(
                            alias.to_string(),
                            report.published,
                            wrote,
                        );
                    }
                    Err(e) => e.to_string(),
                }
            }
            _ => format!("connect `{alias}` first, so its published tools are known"),
        };
        self.tell(text);
    }

    /// A call the operator made by hand: the same pipeline as the Lead's calls
    /// (schema, policy, approval, timeout), counted in Health, and cancelled
    /// by Ctrl-C like a turn (dropping the call sends `notifications/cancelled`).
    pub(super) fn manual_call(&mut self, name: String, arguments: serde_json::Value) {
        let call = CallIdentity::new(CallId::mint("operator"), Requester::Operator);
        let id = call.id.clone();
        self.mcp_call_started(
            &id,
            Requester::Operator,
            name.clone(),
            Some(&name),
            arguments.clone(),
        );
        let (hub, inbound, cancel, approver) = (
            self.hub.clone(),
            self.inbound.clone(),
            self.hand_cancel.clone(),
            Arc::clone(&self.approver),
        );
        self.jobs.spawn(async move {
            let snapshot = hub.snapshot();
            let run = tokio::select! {
                outcome = hub.call_as(&snapshot, &name, arguments, approver.as_ref(), &call) => from_mcp(outcome),
                _ = cancel.cancelled() => {
                    let mut error = ToolError::new(
                        ToolErrorCode::Interrupted,
                        "interrupted by the operator; the call was cancelled",
                    );
                    error.tool = Some(name);
                    ToolRun::local(Err(error))
                }
            };
            let _ = inbound.send(Inbound::HandCallDone { id, run });
        });
    }

    /// An MCP call the backend makes or watches (by hand, an outside
    /// client's) started: remembered for Health and "explain", and shown as
    /// `by`'s row under the name `shown`. `exposed` is the registry's name of
    /// the tool, when it has one.
    pub(super) fn mcp_call_started(
        &mut self,
        id: &CallId,
        by: Requester,
        shown: String,
        exposed: Option<&str>,
        arguments: serde_json::Value,
    ) {
        let origin = exposed.and_then(|exposed| {
            self.hub.snapshot().resolve(exposed).map(|t| {
                (
                    t.alias.to_string(),
                    t.remote_name.clone(),
                    t.effect,
                    std::sync::Arc::clone(&t.suspicious),
                )
            })
        });
        if let Some((alias, ..)) = &origin {
            self.calls.insert(id.clone(), alias.clone());
        }
        self.records.started(
            id,
            CallRecord {
                name: exposed.unwrap_or(&shown).to_string(),
                alias: origin.as_ref().map(|(a, ..)| a.clone()),
                remote_name: origin.as_ref().map(|(_, r, ..)| r.clone()),
                builtin: false,
                effect: origin.as_ref().map(|(_, _, e, _)| *e),
                at: chrono::Utc::now().format("%H:%M:%S UTC").to_string(),
                decided: None,
                code: None,
                message: None,
                schema_errors: Vec::new(),
                elapsed_ms: None,
                redacted: Vec::new(),
                flow: None,
                suspicious: origin
                    .as_ref()
                    .map_or_else(|| Vec::new().into(), |(.., s)| std::sync::Arc::clone(s)),
            },
        );
        self.send(BackendEvent::ToolCallStarted(ToolCallView {
            id: id.clone(),
            by,
            name: shown,
            target: origin
                .as_ref()
                .map_or(Target::Unknown, |(a, r, ..)| Target::Mcp {
                    alias: a.clone(),
                    remote_name: r.clone(),
                }),
            effect: origin.as_ref().map(|(_, _, e, _)| convert::effect(*e)),
            arguments,
        }));
    }

    /// A result of the operator's command (the UI puts it in the status bar
    /// and, so it stays on record, in the conversation).
    pub(super) fn tell(&self, text: String) {
        self.send(BackendEvent::CommandResult(text));
    }
}

/// Connects `alias` (after disconnecting it, to reconnect) and says how it went.
pub(super) async fn connect(hub: &crate::mcp::Hub, alias: &str, reconnect: bool) -> String {
    if reconnect {
        let _ = hub.disconnect(alias);
    }
    match hub.connect(alias).await {
        Ok(report) => match report.outcome {
            Ok(tools) => format!("connected `{alias}`: {} tools exposed", tools.len()),
            Err(e) => format!(
                "`{alias}` {}: {}",
                e.code,
                crate::sanitize::inert_line(&e.message, 200)
            ),
        },
        Err(e) => e.to_string(),
    }
}
