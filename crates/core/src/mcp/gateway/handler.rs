//! The gateway's MCP side: an rmcp `ServerHandler` whose `tools/list` is the
//! asking client's [`View`] and whose `tools/call` is the hub's call path
//! (`Hub::call_as`) with `Requester::Client` — the one chokepoint. Who asks
//! comes from the front door (the bearer token's profile, put in the request's
//! extensions), never from anything the client sends in the body or headers.

use std::sync::Arc;
use std::time::{Instant, SystemTime};

use rmcp::{
    ErrorData as McpError, RoleServer, ServerHandler,
    model::{
        CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, DiscoverResult,
        GetPromptRequestParams, GetPromptResponse, GetPromptResult, Implementation,
        InitializeRequestParams, InitializeResult, JsonObject, ListPromptsResult,
        ListResourceTemplatesResult, ListResourcesResult, ListToolsResult, PaginatedRequestParams,
        ReadResourceRequestParams, ReadResourceResponse, ReadResourceResult, ServerCapabilities,
        ServerConfig, Tool,
    },
    service::{NotificationContext, RequestContext},
};
use serde_json::{Map, Value, json};

use super::super::envelope::{ToolError, ToolErrorCode};
use super::super::events::Offering;
use super::super::names::EXPOSED_PREFIX;
use super::super::observe::Decision;
use super::completion;
use super::offered::{aliases_offering, to_mcp_error};
use super::prompts::{self, PromptView};
use super::resources::{self, ResourceView};
use super::settings::{ClientProfile, Naming};
use super::subscriptions::{self, Subscriber, Subscription};
use super::timing::{Timed, Timing};
use super::view::{View, valid_name};
use super::{AuthedClient, ClientCallRecord, ClientCallStart, ClientMethod, Shared};

use crate::mcp::call::{CallIdentity, CallOutcome};
use crate::protocol::{CallId, Requester};

/// One per session (per request for a 2026-07-28 client over HTTP, which has
/// no session); they all share the gateway.
#[derive(Clone)]
pub(super) struct GatewayHandler {
    pub(super) shared: Arc<Shared>,
    /// Over stdio, the one client (its host spawned the harness); over HTTP
    /// `None`: each request's client is the one the front door let in.
    pub(super) stdio_client: Option<String>,
    /// Counts this session live while rmcp keeps its handler: from the start
    /// over stdio, from `initialized` over HTTP. A 2026-07-28 client over
    /// HTTP has no session (rmcp makes a handler per request): it counts
    /// while its `subscriptions/listen` stream is open, not once per request.
    pub(super) live: Arc<std::sync::OnceLock<super::SessionLive>>,
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

    /// What `clients` are told the gateway offers: tools always; resources
    /// and prompts only when an alias one of them sees offers them now (a
    /// client that came before such a server was connected initializes again
    /// to get them). Per client at `initialize` and `server/discover`; for
    /// all of them where rmcp asks without a request (its checks of what is
    /// advertised), each handler answering its own client's view anyway.
    fn info_for<'a>(&self, clients: impl IntoIterator<Item = &'a ClientProfile>) -> ServerConfig {
        // `logging`: a client may set a level (the 2025-11-25 hosts do), but no
        // server's log text is passed on — a log message names no call, so it
        // could be another client's, and it is server text outside any result.
        let mut capabilities = json!({ "tools": { "listChanged": true }, "logging": {} });
        let hub = &self.shared.hub;
        let snapshot = hub.snapshot();
        for client in clients {
            if !aliases_offering(hub, &snapshot, client, Offering::Resources).is_empty() {
                capabilities["resources"] = json!({ "listChanged": true, "subscribe": true });
            }
            if !aliases_offering(hub, &snapshot, client, Offering::Prompts).is_empty() {
                capabilities["prompts"] = json!({ "listChanged": true });
            }
            if completion::offered(hub, &snapshot, client) {
                capabilities["completions"] = json!({});
            }
        }
        let capabilities = serde_json::from_value::<ServerCapabilities>(capabilities)
            .unwrap_or_else(|_| {
                ServerCapabilities::builder()
                    .enable_tools()
                    .enable_tool_list_changed()
                    .build()
            });
        ServerConfig::new(capabilities).with_server_info(Implementation::new(
            "mcp-harness gateway",
            env!("CARGO_PKG_VERSION"),
        ))
    }

    /// Tells the watcher of a read or a get as it starts; returns its identity.
    fn start(&self, client: &ClientProfile, method: ClientMethod, target: &str) -> CallIdentity {
        let call = CallIdentity::new(CallId::mint("gw"), Requester::Client(client.name.clone()));
        let arguments = match method {
            ClientMethod::ResourcesRead => resources::arguments(target),
            _ => json!({ "name": target }),
        };
        self.shared.watcher.started(&ClientCallStart {
            call: &call.id,
            client: &client.name,
            method,
            tool: target,
            exposed: None,
            arguments: &arguments,
        });
        call
    }

    /// Tells the watcher (and telemetry) how a call ended.
    fn finish(&self, record: &ClientCallRecord<'_>, outcome: &CallOutcome) {
        self.shared.watcher.finished(record, outcome);
        if let Some(observer) = self.shared.hub.inner.events.observer() {
            observer.client_call(record);
        }
    }
}

impl ServerHandler for GatewayHandler {
    fn get_info(&self) -> ServerConfig {
        match self.stdio_client.as_deref() {
            Some(name) => self.info_for(
                self.shared
                    .settings
                    .clients
                    .iter()
                    .filter(|c| c.name == name),
            ),
            // Over HTTP rmcp asks without a request (e.g. to intersect a
            // `subscriptions/listen` filter with what is declared): what any
            // client is offered; each request still gets its own client's view.
            None => self.info_for(self.shared.settings.clients.iter()),
        }
    }

    async fn initialize(
        &self,
        request: InitializeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<InitializeResult, McpError> {
        context.peer.set_peer_info(request.clone());
        let mut info = self.info_for(self.client_of(&context.extensions).ok());
        let fallback = self.negotiate_initialize(&request)?;
        info.protocol_version = fallback.protocol_version;
        Ok(info)
    }

    async fn discover(
        &self,
        context: RequestContext<RoleServer>,
    ) -> Result<DiscoverResult, McpError> {
        Ok(DiscoverResult::from_server_info(
            self.supported_protocol_versions().into_owned(),
            self.info_for(self.client_of(&context.extensions).ok()),
        ))
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, McpError> {
        let client = self.client_of(&context.extensions)?;
        let view = self.resource_view(client).await;
        from_json(json!({ "resources": view.resources() }))
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, McpError> {
        let client = self.client_of(&context.extensions)?;
        let view = self.resource_view(client).await;
        from_json(json!({ "resourceTemplates": view.templates() }))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, McpError> {
        let client = self.client_of(&context.extensions)?;
        let (clock, started) = (Instant::now(), SystemTime::now());
        let uri = request.uri.as_str();
        let call = self.start(client, ClientMethod::ResourcesRead, uri);
        let approver = Timed::new(self.shared.approver.as_ref());
        let upstream_clock = Instant::now();
        let (outcome, alias, target) = match resources::resolve(&self.shared, client, uri).await {
            Ok((alias, upstream)) => {
                let read =
                    self.shared
                        .hub
                        .read_resource(alias.as_str(), &upstream, &approver, &call);
                let outcome = tokio::select! {
                    outcome = read => outcome,
                    () = context.ct.cancelled() => resources::refused(&call, cancelled_by(client)),
                };
                (outcome, Some(alias), Some(upstream))
            }
            Err(error) => (resources::refused(&call, error), None, None),
        };
        let upstream = upstream_clock.elapsed().saturating_sub(approver.spent());
        let answer = match (&outcome.result, &alias, &target) {
            (Ok(output), Some(alias), Some(target)) => {
                let contents =
                    resources::contents(output, self.shared.settings.names, alias, target, uri);
                from_json::<ReadResourceResult>(json!({ "contents": contents })).map(Into::into)
            }
            (Err(error), ..) => Err(to_mcp_error(error, Offering::Resources)),
            _ => Err(McpError::internal_error("the read came to nothing", None)),
        };
        let timing = Timing {
            started,
            total: clock.elapsed(),
            upstream,
            approval: approver.spent(),
        };
        self.finish(
            &ClientCallRecord {
                call: &call.id,
                client: &client.name,
                method: ClientMethod::ResourcesRead,
                tool: uri,
                alias: alias.as_ref().map(|a| a.as_str()),
                decision: outcome.decision,
                outcome: outcome.result.as_ref().err(),
                timing,
            },
            &outcome,
        );
        answer
    }

    /// Resolved as a read is, in what the client is offered now; subscribed
    /// upstream under the read policy; the session hears of that resource's
    /// changes under the URI it gave (`subscriptions.rs`).
    #[allow(deprecated)]
    async fn subscribe(
        &self,
        request: rmcp::model::SubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        let client = self.client_of(&context.extensions)?;
        let (alias, upstream) = resources::resolve(&self.shared, client, &request.uri)
            .await
            .map_err(|e| to_mcp_error(&e, Offering::Resources))?;
        let subscribed = self
            .shared
            .hub
            .resource_subscription(alias.as_str(), &upstream, true)
            .await;
        let connection = subscribed
            .result
            .map_err(|e| to_mcp_error(&e, Offering::Resources))?;
        self.shared.subscriptions.add(Subscription {
            client: client.name.clone(),
            to: Subscriber::Session(context.peer),
            alias,
            connection,
            upstream,
            outside: request.uri,
        });
        Ok(())
    }

    /// Ends this session's subscription; the last one on a resource ends the
    /// upstream's. Unsubscribing from what was never subscribed is no error.
    #[allow(deprecated)]
    async fn unsubscribe(
        &self,
        request: rmcp::model::UnsubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        self.client_of(&context.extensions)?;
        let unwatched = self
            .shared
            .subscriptions
            .remove(&context.peer, &request.uri);
        subscriptions::unsubscribe_upstream(&self.shared, unwatched).await;
        Ok(())
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, McpError> {
        let client = self.client_of(&context.extensions)?;
        let view = PromptView::of(&self.shared, client).await;
        from_json(json!({ "prompts": view.prompts() }))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, McpError> {
        let client = self.client_of(&context.extensions)?;
        let (clock, started) = (Instant::now(), SystemTime::now());
        let name = request.name.as_str();
        let call = self.start(client, ClientMethod::PromptsGet, name);
        let upstream_clock = Instant::now();
        let got = tokio::select! {
            got = prompts::get(&self.shared, client, name, request.arguments.as_ref()) => got,
            () = context.ct.cancelled() => prompts::Got::refused(None, cancelled_by(client)),
        };
        let upstream = upstream_clock.elapsed();
        let naming = self.shared.settings.names;
        let answer = match (&got.result, &got.alias) {
            (Ok(messages), Some(alias)) => {
                from_json::<GetPromptResult>(prompts::result(messages, naming, alias))
                    .map(Into::into)
            }
            (Err(error), _) => Err(to_mcp_error(error, Offering::Prompts)),
            _ => Err(McpError::internal_error("the get came to nothing", None)),
        };
        let alias = got.alias.clone();
        let outcome = prompts::outcome(&call, got, upstream);
        let timing = Timing {
            started,
            total: clock.elapsed(),
            upstream,
            approval: std::time::Duration::ZERO,
        };
        self.finish(
            &ClientCallRecord {
                call: &call.id,
                client: &client.name,
                method: ClientMethod::PromptsGet,
                tool: name,
                alias: alias.as_ref().map(|a| a.as_str()),
                decision: outcome.decision,
                outcome: outcome.result.as_ref().err(),
                timing,
            },
            &outcome,
        );
        answer
    }

    /// Resolved as a get or a read is, asked of that server (`completion.rs`).
    async fn complete(
        &self,
        request: rmcp::model::CompleteRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::CompleteResult, McpError> {
        let client = self.client_of(&context.extensions)?;
        completion::complete(&self.shared, client, request).await
    }

    /// Accepted and kept by no one: the gateway sends no log messages (see
    /// `info_for`), at any level.
    #[allow(deprecated)]
    async fn set_level(
        &self,
        _request: rmcp::model::SetLevelRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        self.client_of(&context.extensions).map(|_| ())
    }

    /// A 2026-07-28 client hears of list changes on a `subscriptions/listen`
    /// stream (it has no session to be told on): the list-changed kinds it
    /// asks for are accepted (rmcp keeps those the gateway declares to it).
    /// Over HTTP its `resourceSubscriptions` are too: the front door has cut
    /// them to what the client is offered (`listen.rs`). Over stdio nothing
    /// resolved them, so none is acknowledged.
    fn accepted_subscription_filter(
        &self,
        requested: &rmcp::model::SubscriptionFilter,
    ) -> Option<rmcp::model::SubscriptionFilter> {
        let mut accepted = rmcp::model::SubscriptionFilter::new();
        accepted.tools_list_changed = requested.tools_list_changed;
        accepted.resources_list_changed = requested.resources_list_changed;
        accepted.prompts_list_changed = requested.prompts_list_changed;
        if self.stdio_client.is_none() {
            accepted.resource_subscriptions = requested.resource_subscriptions.clone();
        }
        Some(accepted)
    }

    /// Kept while the client listens; told of changes as sessions are, and
    /// of the resources it subscribed to on it.
    async fn listen(&self, context: rmcp::service::SubscriptionContext) -> Result<(), McpError> {
        let extensions = &context.request_context().extensions;
        let client = self.client_of(extensions)?;
        let key = self
            .shared
            .peers
            .listen(&client.name, context.sink().clone());
        let _listening = self
            .live
            .get()
            .is_none()
            .then(|| super::SessionLive::new(&self.shared));
        super::listen::subscribe(&self.shared, client, key, context.sink(), extensions).await;
        context.cancelled().await;
        self.shared.peers.unlisten(key);
        super::listen::ended(&self.shared, key).await;
        Ok(())
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        self.live
            .get_or_init(|| super::SessionLive::new(&self.shared));
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
        let view = self
            .shared
            .views
            .of(&self.shared.hub.snapshot(), &self.shared.settings, client);
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
        // A client that asked for progress hears the server's, under its token.
        let progress = context.meta.get_progress_token().map(|token| Progress {
            peer: context.peer.clone(),
            token,
        });
        Ok(self
            .call(client, &request.name, arguments, &context.ct, progress)
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
        progress: Option<Progress>,
    ) -> CallToolResult {
        let (clock, started) = (Instant::now(), SystemTime::now());
        let shared = &self.shared;
        let snapshot = shared.hub.snapshot();
        let view = shared.views.of(&snapshot, &shared.settings, client);
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
            method: ClientMethod::ToolsCall,
            tool: name,
            exposed: exposed.as_deref(),
            arguments: &arguments,
        });
        let internal = exposed.clone();
        let approver = Timed::new(shared.approver.as_ref());
        let (mut outcome, alias) = match exposed {
            Some(exposed) => {
                let mut tap = progress.as_ref().map(|_| shared.hub.taps().tap(&call.id));
                let calling = shared
                    .hub
                    .call_as(&snapshot, &exposed, arguments, &approver, &call);
                tokio::pin!(calling);
                let outcome = loop {
                    tokio::select! {
                        outcome = &mut calling => break outcome,
                        () = cancelled.cancelled() => break not_run(&call.id, cancelled_by(client)),
                        Some(note) = next_progress(&mut tap) => {
                            if let Some(progress) = &progress {
                                progress.pass_on(note).await;
                            }
                        }
                    }
                };
                if let (Some(tap), Some(progress)) = (&mut tap, &progress) {
                    progress.pass_on_the_rest(tap).await;
                }
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
        let result = match &outcome.result {
            Ok(output) => {
                // What the server said reaches the client's model as it reaches
                // the Lead's: never an invisible code point (rule 15).
                let content = output
                    .content
                    .iter()
                    .map(visible)
                    .map(content_block)
                    .collect();
                let mut result = CallToolResult::success(content);
                result.structured_content = output.structured_content.as_ref().map(visible);
                result
            }
            Err(error) => refused(error),
        };
        let record = ClientCallRecord {
            call: &call.id,
            client: &client.name,
            method: ClientMethod::ToolsCall,
            tool: name,
            alias: alias.as_deref(),
            decision: outcome.decision,
            outcome: outcome.result.as_ref().err(),
            timing: Timing {
                started,
                total: clock.elapsed(),
                upstream: outcome.elapsed,
                approval: approver.spent(),
            },
        };
        self.finish(&record, &outcome);
        result
    }

    /// The client's resources and templates, listed now.
    async fn resource_view(&self, client: &ClientProfile) -> ResourceView {
        let hub = &self.shared.hub;
        let aliases: Vec<_> = aliases_offering(hub, &hub.snapshot(), client, Offering::Resources)
            .into_iter()
            .map(|(a, _)| a)
            .collect();
        ResourceView::of(&self.shared, &aliases).await
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

/// Where a call's progress goes: the session that asked, under its token.
struct Progress {
    peer: rmcp::Peer<RoleServer>,
    token: rmcp::model::ProgressToken,
}

/// How long a call's answer waits for the rest of its progress, when the
/// server's last word was that it was not done.
const PROGRESS_GRACE: std::time::Duration = std::time::Duration::from_millis(25);

impl Progress {
    /// Progress sent before the result goes before it: a client drops
    /// progress that comes after its answer. rmcp hands each notification to
    /// a task of its own, so one that arrived just before the answer may still
    /// be on its way: what is there is passed on, and while the last said
    /// `progress < total`, what comes within [`PROGRESS_GRACE`].
    async fn pass_on_the_rest(&self, tap: &mut crate::mcp::taps::Tap) {
        tokio::task::yield_now().await;
        while let Some(note) = tap.try_next() {
            self.pass_on(note).await;
        }
        while tap
            .last()
            .is_some_and(|p| p.total.is_some_and(|t| p.progress < t))
        {
            match tokio::time::timeout(PROGRESS_GRACE, tap.next()).await {
                Ok(Some(note)) => self.pass_on(note).await,
                _ => break,
            }
        }
    }

    /// One progress notification of the server's, as the client's; its
    /// message is server text, so without invisible code points or controls.
    async fn pass_on(&self, note: crate::mcp::taps::CallProgress) {
        let mut param = json!({
            "progressToken": self.token,
            "progress": note.progress,
        });
        if let Some(total) = note.total {
            param["total"] = json!(total);
        }
        if let Some(message) = note.message {
            param["message"] = json!(crate::sanitize::for_model_line(&message, 512));
        }
        if let Ok(param) = serde_json::from_value(param) {
            // A client gone mid-call misses progress; the call goes on.
            let _ = self.peer.notify_progress(param).await;
        }
    }
}

/// The next progress of a tapped call; never, for an untapped one.
async fn next_progress(
    tap: &mut Option<crate::mcp::taps::Tap>,
) -> Option<crate::mcp::taps::CallProgress> {
    match tap {
        Some(tap) => tap.next().await,
        None => std::future::pending().await,
    }
}

/// The envelope of a request the client cancelled (or whose session ended).
fn cancelled_by(client: &ClientProfile) -> ToolError {
    ToolError::new(
        ToolErrorCode::Interrupted,
        format!(
            "client `{}` cancelled the call before it finished; its approval prompt, if any, \
             was withdrawn, and a request already sent was cancelled upstream",
            client.name
        ),
    )
}

/// A result built as JSON, as rmcp's type (whose structs cannot be built
/// field by field from outside).
pub(super) fn from_json<T: serde::de::DeserializeOwned>(value: Value) -> Result<T, McpError> {
    serde_json::from_value(value)
        .map_err(|e| McpError::internal_error(format!("the gateway built a bad result: {e}"), None))
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

/// `value` without invisible code points in any of its strings (copied only
/// when it has some).
fn visible(value: &Value) -> Value {
    if crate::sanitize::hidden::value_has_hidden(value) {
        crate::sanitize::hidden::strip_value(value)
    } else {
        value.clone()
    }
}

/// A content block as the server sent it (already cut at `max_result_bytes`);
/// one the SDK cannot read is passed on as its JSON text.
fn content_block(block: Value) -> ContentBlock {
    serde_json::from_value::<ContentBlock>(block.clone())
        .unwrap_or_else(|_| ContentBlock::text(block.to_string()))
}
