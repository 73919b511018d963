//! The gateway's MCP side: an rmcp `ServerHandler` whose `tools/list` is the
//! asking client's [`View`] and whose `tools/call` is the hub's call path
//! (`Hub::call_as`) with `Requester::Client` — the one chokepoint. Who asks
//! comes from the front door (the bearer token's profile, put in the request's
//! extensions), never from anything the client sends in the body or headers.

use std::sync::Arc;

use rmcp::{
    ErrorData as McpError, RoleServer, ServerHandler,
    model::{
        CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
        JsonObject, ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig,
        Tool,
    },
    service::{NotificationContext, RequestContext},
};
use serde_json::{Map, Value};

use super::super::envelope::{ToolError, ToolErrorCode};
use super::super::names::EXPOSED_PREFIX;
use super::super::observe::Decision;
use super::settings::{ClientProfile, Naming};
use super::view::{View, valid_name};
use super::{AuthedClient, ClientCallRecord, ClientCallStart, Shared};
use crate::mcp::call::{CallIdentity, CallOutcome};
use crate::protocol::{CallId, Requester};

/// One per session (rmcp makes one per session); they all share the gateway.
#[derive(Clone)]
pub(super) struct GatewayHandler {
    pub(super) shared: Arc<Shared>,
    /// Over stdio, the one client (its host spawned the harness); over HTTP
    /// `None`: each request's client is the one the front door let in.
    pub(super) stdio_client: Option<String>,
}

impl GatewayHandler {
    /// The profile of who asks: the stdio client, or the one the front door
    /// found for this request.
    fn client_of(&self, extensions: &rmcp::model::Extensions) -> Result<&ClientProfile, McpError> {
        let name = match &self.stdio_client {
            Some(name) => Some(name.as_str()),
            None => extensions
                .get::<http::request::Parts>()
                .and_then(|parts| parts.extensions.get::<AuthedClient>())
                .map(|c| c.0.as_str()),
        };
        let clients = &self.shared.settings.clients;
        name.and_then(|name| clients.iter().find(|c| c.name == name))
            .ok_or_else(|| McpError::invalid_request("no authenticated client", None))
    }
}

impl ServerHandler for GatewayHandler {
    fn get_info(&self) -> ServerConfig {
        let capabilities = ServerCapabilities::builder()
            .enable_tools()
            .enable_tool_list_changed()
            .build();
        ServerConfig::new(capabilities).with_server_info(Implementation::new(
            "mcp-harness gateway",
            env!("CARGO_PKG_VERSION"),
        ))
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        // The session's peer, kept to tell this client when its tool set changes.
        if let Ok(client) = self.client_of(&context.extensions) {
            self.shared.peers.add(&client.name, context.peer);
        }
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        let client = self.client_of(&context.extensions)?;
        let view = View::of(&self.shared.hub.snapshot(), &self.shared.settings, client);
        let tools = view
            .tools
            .iter()
            .map(|(name, tool)| {
                let schema = match tool.model_schema.as_ref() {
                    Value::Object(map) => map.clone(),
                    _ => JsonObject::new(),
                };
                // The server's annotations and title are claims: not passed on
                // (a host could auto-approve a `readOnlyHint` tool on its word).
                Tool::new_with_raw(
                    name.clone(),
                    tool.description.clone().map(Into::into),
                    Arc::new(schema),
                )
            })
            .collect();
        Ok(ListToolsResult::with_all_items(tools))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let client = self.client_of(&context.extensions)?;
        let arguments = request.arguments.map_or(Value::Null, Value::Object);
        Ok(self
            .call(client, &request.name, arguments, &context.ct)
            .await
            .into())
    }
}

impl GatewayHandler {
    /// One outside call: resolved against the client's view of one snapshot,
    /// then through the hub's call path with the client as requester.
    /// `cancelled`: the client sent `notifications/cancelled` for this call
    /// (or its session ended); the call is dropped then, which withdraws its
    /// prompt and cancels what was sent upstream.
    async fn call(
        &self,
        client: &ClientProfile,
        name: &str,
        arguments: Value,
        cancelled: &tokio_util::sync::CancellationToken,
    ) -> CallToolResult {
        let shared = &self.shared;
        let snapshot = shared.hub.snapshot();
        let view = View::of(&snapshot, &shared.settings, client);
        let call = CallIdentity::new(CallId::mint("gw"), Requester::Client(client.name.clone()));
        let exposed = match view.tools.get(name) {
            Some(tool) => Some(tool.name.clone()),
            // Not offered to this client: a name of an alias it sees goes
            // through the call path anyway, which refuses it in its own words
            // (a `deny` tool, a server gone); anything else is refused here,
            // without saying whether another client's alias has such a tool.
            None => self.internal_name(client, &view, name),
        };
        shared.watcher.started(&ClientCallStart {
            call: &call.id,
            client: &client.name,
            tool: name,
            exposed: exposed.as_deref(),
            arguments: &arguments,
        });
        let internal = exposed.clone();
        let (mut outcome, alias) = match exposed {
            Some(exposed) => {
                let calling = shared.hub.call_as(
                    &snapshot,
                    &exposed,
                    arguments,
                    shared.approver.as_ref(),
                    &call,
                );
                let outcome = tokio::select! {
                    outcome = calling => outcome,
                    () = cancelled.cancelled() => not_run(&call.id, ToolError::new(
                        ToolErrorCode::Interrupted,
                        format!(
                            "client `{}` cancelled the call before it finished; its approval \
                             prompt, if any, was withdrawn, and a request already sent was \
                             cancelled upstream",
                            client.name
                        ),
                    )),
                };
                let alias = snapshot
                    .resolve(&exposed)
                    .map(|t| t.alias.as_str().to_string())
                    .or_else(|| outcome.result.as_ref().err().and_then(|e| e.alias.clone()));
                (outcome, alias)
            }
            None => {
                let error = ToolError::new(
                    ToolErrorCode::McpUnknownTool,
                    format!(
                        "there is no tool named `{}` in the tool set offered to client `{}`; list the tools again",
                        if valid_name(name) {
                            name
                        } else {
                            "(not a valid tool name)"
                        },
                        client.name
                    ),
                );
                (not_run(&call.id, error), None)
            }
        };
        outcome.result = outcome.result.map_err(|mut error| {
            // The outside name, not the harness's internal one (the message is
            // the harness's own text, so the swap cannot touch a server's words).
            if let Some(internal) = &internal {
                error.message = error.message.replace(internal.as_str(), name);
            }
            error.tool = Some(name.to_string()).filter(|n| valid_name(n));
            error
        });
        let record = ClientCallRecord {
            call: &call.id,
            client: &client.name,
            tool: name,
            alias: alias.as_deref(),
            decision: outcome.decision,
            outcome: outcome.result.as_ref().err(),
        };
        shared.watcher.finished(&record, &outcome);
        match outcome.result {
            Ok(output) => {
                let content = output.content.into_iter().map(content_block).collect();
                let mut result = CallToolResult::success(content);
                result.structured_content = output.structured_content;
                result
            }
            Err(error) => refused(&error),
        }
    }

    /// The exposed name a name not in the view would have, when it belongs to
    /// an alias this client sees (and that the gateway's naming did not reject).
    fn internal_name(&self, client: &ClientProfile, view: &View, name: &str) -> Option<String> {
        if !valid_name(name) {
            return None;
        }
        let seen = |alias: &crate::mcp::ServerAlias| {
            client.sees(alias) && !view.rejected.contains_key(alias)
        };
        let aliases = self.shared.hub.aliases();
        match self.shared.settings.names {
            Naming::Prefixed => aliases
                .iter()
                .map(|(alias, _)| alias)
                .find(|alias| {
                    seen(alias)
                        && name
                            .strip_prefix(&alias.normalized())
                            .is_some_and(|rest| rest.starts_with("__") && rest.len() > 2)
                })
                .map(|_| format!("{EXPOSED_PREFIX}{name}")),
            Naming::Bare => {
                let mut seen_aliases = aliases.iter().map(|(a, _)| a).filter(|a| seen(a));
                match (seen_aliases.next(), seen_aliases.next()) {
                    (Some(alias), None) => {
                        Some(format!("{EXPOSED_PREFIX}{}__{name}", alias.normalized()))
                    }
                    _ => None,
                }
            }
        }
    }
}

/// A call that ended without running.
fn not_run(id: &CallId, error: ToolError) -> CallOutcome {
    CallOutcome {
        id: id.clone(),
        result: Err(error),
        decision: Decision::NotRun,
        server_output: None,
        elapsed: std::time::Duration::ZERO,
        dropped_nulls: Vec::new(),
    }
}

/// A refused or failed call as the client gets it: `isError`, the envelope as
/// text and as `structuredContent` — the harness's words, never the server's.
fn refused(error: &ToolError) -> CallToolResult {
    let envelope = serde_json::to_value(error).unwrap_or_else(|_| {
        let mut map = Map::new();
        map.insert("code".into(), Value::String(error.code.to_string()));
        map.insert("message".into(), Value::String(error.message.clone()));
        Value::Object(map)
    });
    let mut result = CallToolResult::error(vec![ContentBlock::text(envelope.to_string())]);
    result.structured_content = Some(envelope);
    result
}

/// A content block as the server sent it (already cut at `max_result_bytes`);
/// one the SDK cannot read is passed on as its JSON text.
fn content_block(block: Value) -> ContentBlock {
    serde_json::from_value::<ContentBlock>(block.clone())
        .unwrap_or_else(|_| ContentBlock::text(block.to_string()))
}
