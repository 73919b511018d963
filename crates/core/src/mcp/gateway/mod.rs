//! The gateway (`mcp-harness serve`): the harness as an MCP server for outside
//! hosts, offering exactly what passed the exposure pipeline, per client, and
//! sending every call through the hub's one call path. Over Streamable HTTP at
//! `/mcp` on loopback, behind a front door (`door.rs`) that wants a client's
//! bearer token and a loopback `Origin`; or over stdio for the one client
//! whose host spawned the harness.
//!
//! - `settings.rs`: `[serve]` as data; `view.rs`: one client's tool set and its
//!   outside names; `handler.rs`: rmcp's server side, calling `Hub::call_as`;
//!   `resources.rs`, `prompts.rs` (and `offered.rs`, what they share): the
//!   client's resources and prompts under outside names; `timing.rs`: what
//!   the gateway adds to a call's time; `approver.rs`: `--approve`;
//!   `door.rs`: tokens, origins, sessions; `relay.rs`: `serve --stdio`
//!   passing its host on to a running control room; `subscriptions.rs`:
//!   `resources/subscribe` passed upstream and its updates back; `listen.rs`:
//!   the same for a 2026-07-28 listen's `resourceSubscriptions`.

mod approver;
mod completion;
mod door;
mod handler;
mod host_io;
mod listen;
mod offered;
mod prompts;
pub mod relay;
mod resources;
mod settings;
mod subscriptions;
mod timing;
mod view;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use http_body_util::BodyExt as _;
use hyper::body::Incoming;
use hyper::{Request, StatusCode};
use rmcp::RoleServer;
use rmcp::service::Peer;
use rmcp::transport::streamable_http_server::{
    StreamableHttpServerConfig, StreamableHttpService, session::local::LocalSessionManager,
};
use serde::Serialize;
use tokio::net::TcpListener;
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

use super::approver::Approver;
use super::call::CallOutcome;
use super::envelope::ToolError;
use super::events::{McpEvent, Offering};
use super::hub::Hub;
use super::names::ServerAlias;
use super::observe::Decision;
use super::serve::{self as http, Reply};
use crate::protocol::CallId;
pub use approver::{ApproveMode, GatewayApprover};
pub use door::Refusal;
pub use resources::{URI_SCHEME, fills};
pub use settings::{ClientProfile, DEFAULT_MAX_NAME_LEN, GatewaySettings, Naming};
pub use timing::Timing;
pub use view::valid_name;

/// The one route.
pub const PATH: &str = "/mcp";
/// The profile of `serve --stdio` without `--client`.
pub const STDIO_CLIENT: &str = "stdio";
/// Changes that come together (a disconnect revokes, then the state moves)
/// reach clients as one notification.
const DEBOUNCE: Duration = Duration::from_millis(50);

/// The client the front door let in, in the request's extensions.
#[derive(Debug, Clone)]
pub(crate) struct AuthedClient(pub(crate) String);

/// Which request of an outside client a record is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum ClientMethod {
    #[serde(rename = "tools/call")]
    ToolsCall,
    #[serde(rename = "resources/read")]
    ResourcesRead,
    #[serde(rename = "prompts/get")]
    PromptsGet,
}

impl ClientMethod {
    pub fn as_str(self) -> &'static str {
        match self {
            ClientMethod::ToolsCall => "tools/call",
            ClientMethod::ResourcesRead => "resources/read",
            ClientMethod::PromptsGet => "prompts/get",
        }
    }
}

/// One outside call, for the audit log: who (the client's configured name),
/// which call, which tool, how it was decided, how it ended and where its
/// time went.
#[derive(Debug, Serialize)]
pub struct ClientCallRecord<'a> {
    pub call: &'a CallId,
    pub client: &'a str,
    pub method: ClientMethod,
    /// What the client asked for by its outside name: the tool, the
    /// resource's URI, the prompt.
    pub tool: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub alias: Option<&'a str>,
    #[serde(serialize_with = "decision_label")]
    pub decision: Decision,
    /// `None`: the call succeeded; otherwise the envelope the client got.
    pub outcome: Option<&'a ToolError>,
    pub timing: Timing,
}

fn decision_label<S: serde::Serializer>(d: &Decision, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(match d {
        Decision::NotRun => "not_run",
        Decision::RefusedBySchema => "refused_by_schema",
        Decision::DeniedByPolicy => "denied_by_policy",
        Decision::DeniedByFlow => "denied_by_flow",
        Decision::Allow => "allow",
        Decision::Approved { .. } => "approved",
        Decision::Denied { .. } => "denied",
    })
}

/// One outside call as it starts: before the call path, so a prompt it
/// causes comes after it.
#[derive(Debug)]
pub struct ClientCallStart<'a> {
    pub call: &'a CallId,
    pub client: &'a str,
    pub method: ClientMethod,
    /// The outside name the client called (a tool, a resource's URI, a prompt).
    pub tool: &'a str,
    /// The exposed tool it stands for, when there is one.
    pub exposed: Option<&'a str>,
    pub arguments: &'a serde_json::Value,
}

/// Who hears of outside calls: the session's audit log headless; in the
/// control room the conversation too.
pub trait Watcher: Send + Sync {
    fn started(&self, _call: &ClientCallStart<'_>) {}
    /// The call ended: `record` for the audit log, `outcome` as the hub gave
    /// it (the error already in the client's names).
    fn finished(&self, record: &ClientCallRecord<'_>, outcome: &CallOutcome);
}

/// What every session's handler shares.
pub(crate) struct Shared {
    hub: Hub,
    settings: GatewaySettings,
    /// Each client's view of the newest snapshot.
    views: view::Views,
    approver: Arc<dyn Approver>,
    watcher: Arc<dyn Watcher>,
    peers: Peers,
    /// Which sessions watch which resource (`resources/subscribe`).
    subscriptions: subscriptions::Subscriptions,
    /// A session ended: its subscriptions end too.
    session_ended: Notify,
    /// How many client sessions are live (counted by their handlers).
    sessions: tokio::sync::watch::Sender<usize>,
}

/// Held by one session's handler: counts the session live until rmcp drops
/// its handler (the session was closed, expired, or its transport ended);
/// or by a 2026-07-28 client's open `subscriptions/listen` stream.
pub(crate) struct SessionLive(Arc<Shared>);

impl SessionLive {
    fn new(shared: &Arc<Shared>) -> Self {
        shared.sessions.send_modify(|n| *n += 1);
        tracing::debug!(
            live = *shared.sessions.borrow(),
            "gateway: a client session began"
        );
        Self(Arc::clone(shared))
    }
}

impl Drop for SessionLive {
    fn drop(&mut self) {
        self.0.sessions.send_modify(|n| *n = n.saturating_sub(1));
        self.0.session_ended.notify_one();
        tracing::debug!(
            live = *self.0.sessions.borrow(),
            "gateway: a client session ended"
        );
    }
}

/// Live sessions by client, to tell each one when its tool set changes; and
/// the 2026-07-28 clients' `subscriptions/listen` streams, which are how a
/// client of that revision hears of changes (it has no session).
#[derive(Default)]
struct Peers(Mutex<Vec<(String, Peer<RoleServer>)>>, Mutex<Listeners>);

/// The open `subscriptions/listen` streams, each under a key of the
/// gateway's: their request ids are the clients' and may be the same
/// (`listen-1` from two processes).
#[derive(Default)]
struct Listeners {
    next: u64,
    open: Vec<(u64, String, rmcp::service::SubscriptionSink)>,
}

impl Peers {
    /// Keeps `sink` of `client` until [`Peers::unlisten`] with the key returned.
    fn listen(&self, client: &str, sink: rmcp::service::SubscriptionSink) -> u64 {
        let mut listeners = self.listeners();
        listeners.next += 1;
        let key = listeners.next;
        listeners.open.push((key, client.to_string(), sink));
        key
    }

    fn unlisten(&self, key: u64) {
        self.listeners().open.retain(|(k, _, _)| *k != key);
    }

    fn listening(&self, client: &str) -> Vec<rmcp::service::SubscriptionSink> {
        self.listeners()
            .open
            .iter()
            .filter(|(_, c, _)| c == client)
            .map(|(_, _, s)| s.clone())
            .collect()
    }

    fn listeners(&self) -> std::sync::MutexGuard<'_, Listeners> {
        self.1.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn add(&self, client: &str, peer: Peer<RoleServer>) {
        let mut peers = self.0.lock().unwrap_or_else(|e| e.into_inner());
        peers.retain(|(_, p)| !p.is_transport_closed());
        peers.push((client.to_string(), peer));
    }

    fn of(&self, client: &str) -> Vec<Peer<RoleServer>> {
        let mut peers = self.0.lock().unwrap_or_else(|e| e.into_inner());
        peers.retain(|(_, p)| !p.is_transport_closed());
        peers
            .iter()
            .filter(|(c, _)| c == client)
            .map(|(_, p)| p.clone())
            .collect()
    }
}

/// Wakes the gateway when the hub's tool set may have changed, or an
/// upstream said its resources or prompts did. Made before the hub, so the
/// hub's event sink can hold it.
#[derive(Clone, Default)]
pub struct Changes(Arc<ChangesInner>);

#[derive(Default)]
struct ChangesInner {
    wake: Notify,
    /// Upstreams that said their resources or prompts changed, since the
    /// notifier last looked.
    offerings: Mutex<Vec<(ServerAlias, Offering)>>,
    /// Resources upstreams said changed (`notifications/resources/updated`),
    /// by connection and the server's URI, since the notifier last looked.
    updated: Mutex<Vec<(super::events::ConnectionId, String)>>,
}

impl Changes {
    /// Call with every event of the hub: the ones that change exposed tools wake
    /// the gateway (after the registry has the new, validated set).
    pub fn event(&self, event: &McpEvent) {
        match event {
            McpEvent::Registered { .. }
            | McpEvent::Revoked { .. }
            | McpEvent::ToolsChanged { .. } => self.0.wake.notify_one(),
            McpEvent::OfferingsChanged { alias, what, .. } => {
                self.0
                    .offerings
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .push((alias.clone(), *what));
                self.0.wake.notify_one();
            }
            McpEvent::ResourceUpdated {
                connection, uri, ..
            } => {
                self.0
                    .updated
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .push((*connection, uri.clone()));
                self.0.wake.notify_one();
            }
            _ => {}
        }
    }

    fn take_offerings(&self) -> Vec<(ServerAlias, Offering)> {
        std::mem::take(&mut *self.0.offerings.lock().unwrap_or_else(|e| e.into_inner()))
    }

    fn take_updated(&self) -> Vec<(super::events::ConnectionId, String)> {
        std::mem::take(&mut *self.0.updated.lock().unwrap_or_else(|e| e.into_inner()))
    }
}

/// A gateway ready to serve.
pub struct Gateway {
    shared: Arc<Shared>,
    keys: Arc<Vec<door::Key>>,
}

/// Why the gateway cannot start.
#[derive(Debug, thiserror::Error)]
pub enum GatewayError {
    #[error(
        "no client can come in over HTTP: add a [serve.clients.NAME] table with token_env = \"VAR\""
    )]
    NoClients,
    #[error("no client `{0}` is configured: add a [serve.clients.{0}] table (known: {1})")]
    UnknownClient(String, String),
    #[error(
        "client `{client}`: the environment variable {var} (its token_env) is not set or empty"
    )]
    MissingToken { client: String, var: String },
    #[error("serve only listens on loopback addresses, not {0}")]
    NotLoopback(std::net::SocketAddr),
}

/// The HTTP clients' bearer keys, each token read through `tokens` from the
/// variable its `token_env` names. A client without a token_env comes in over
/// stdio only.
fn keys(
    settings: &GatewaySettings,
    tokens: impl Fn(&str) -> Option<String>,
) -> Result<Vec<door::Key>, GatewayError> {
    let mut keys = Vec::new();
    for client in &settings.clients {
        let Some(var) = &client.token_env else {
            continue;
        };
        let token = tokens(var)
            .filter(|t| !t.trim().is_empty())
            .ok_or_else(|| GatewayError::MissingToken {
                client: client.name.clone(),
                var: var.clone(),
            })?;
        keys.push(door::Key::new(&client.name, token.trim()));
    }
    Ok(keys)
}

impl Gateway {
    /// `tokens(var)` reads a client's token from the environment.
    pub fn new(
        hub: Hub,
        settings: GatewaySettings,
        approver: Arc<dyn Approver>,
        watcher: Arc<dyn Watcher>,
        tokens: impl Fn(&str) -> Option<String>,
    ) -> Result<Self, GatewayError> {
        let keys = keys(&settings, tokens)?;
        if keys.is_empty() {
            return Err(GatewayError::NoClients);
        }
        Ok(Self::with(hub, settings, approver, watcher, keys))
    }

    /// The control room's gateway: [`Gateway::new`]'s, but a config without
    /// HTTP clients is no error (stdio hosts still relay to it,
    /// [`Gateway::relay`]), and the `stdio` profile exists as for `serve --stdio`.
    pub fn control_room(
        hub: Hub,
        mut settings: GatewaySettings,
        approver: Arc<dyn Approver>,
        watcher: Arc<dyn Watcher>,
        tokens: impl Fn(&str) -> Option<String>,
    ) -> Result<Self, GatewayError> {
        settings.stdio_client(None)?;
        let keys = keys(&settings, tokens)?;
        Ok(Self::with(hub, settings, approver, watcher, keys))
    }

    /// Whether a client can come in over HTTP (one has a token).
    pub fn serves_http(&self) -> bool {
        !self.keys.is_empty()
    }

    /// The side of this gateway that serves relayed stdio hosts (the same
    /// profiles, approver and watcher).
    pub fn relay(&self) -> relay::Relay {
        relay::Relay {
            shared: Arc::clone(&self.shared),
        }
    }

    /// A gateway for the one client on stdio: the profile `client` names, or
    /// without a name the `stdio` profile, which sees every alias unless the
    /// config has a `[serve.clients.stdio]`. Returns the client's name too.
    pub fn for_stdio(
        hub: Hub,
        mut settings: GatewaySettings,
        approver: Arc<dyn Approver>,
        watcher: Arc<dyn Watcher>,
        client: Option<&str>,
    ) -> Result<(Self, String), GatewayError> {
        let name = settings.stdio_client(client)?;
        Ok((
            Self::with(hub, settings, approver, watcher, Vec::new()),
            name,
        ))
    }

    fn with(
        hub: Hub,
        settings: GatewaySettings,
        approver: Arc<dyn Approver>,
        watcher: Arc<dyn Watcher>,
        keys: Vec<door::Key>,
    ) -> Self {
        Self {
            shared: Arc::new(Shared {
                hub,
                settings,
                views: view::Views::default(),
                approver,
                watcher,
                peers: Peers::default(),
                subscriptions: Default::default(),
                session_ended: Notify::new(),
                sessions: tokio::sync::watch::Sender::new(0),
            }),
            keys: Arc::new(keys),
        }
    }

    /// How many client sessions are live, as it changes (the control room's
    /// status bar).
    pub fn sessions(&self) -> tokio::sync::watch::Receiver<usize> {
        self.shared.sessions.subscribe()
    }

    /// Per client, the aliases connected now that its profile would see but
    /// whose tools break the gateway's naming rules (not offered), and why.
    pub fn rejections(&self) -> Vec<(String, super::names::ServerAlias, String)> {
        let snapshot = self.shared.hub.snapshot();
        let settings = &self.shared.settings;
        settings
            .clients
            .iter()
            .flat_map(|client| {
                self.shared
                    .views
                    .of(&snapshot, settings, client)
                    .rejected
                    .clone()
                    .into_iter()
                    .map(|(alias, why)| (client.name.clone(), alias, why))
            })
            .collect()
    }

    /// Serves on `listener` until `stop`; tells clients of changes `changes` reports.
    pub async fn serve(
        self,
        listener: TcpListener,
        changes: Changes,
        stop: CancellationToken,
    ) -> Result<(), GatewayError> {
        let local = listener
            .local_addr()
            .map_err(|_| GatewayError::NotLoopback(([0, 0, 0, 0], 0).into()))?;
        if !local.ip().is_loopback() {
            return Err(GatewayError::NotLoopback(local));
        }
        let rmcp_stop = stop.child_token();
        let config = StreamableHttpServerConfig::default().with_cancellation_token(rmcp_stop);
        let shared = Arc::clone(&self.shared);
        let service: StreamableHttpService<handler::GatewayHandler, LocalSessionManager> =
            StreamableHttpService::new(
                // One handler per session, counted live while rmcp keeps it.
                move || {
                    Ok(handler::GatewayHandler {
                        shared: Arc::clone(&shared),
                        stdio_client: None,
                        live: Arc::default(),
                    })
                },
                Arc::new(LocalSessionManager::default()),
                config,
            );
        let sessions = Arc::new(door::Sessions::default());
        let keys = Arc::clone(&self.keys);
        let shared = Arc::clone(&self.shared);
        let route = move |request: Request<Incoming>| {
            let (service, sessions, keys, shared) = (
                service.clone(),
                Arc::clone(&sessions),
                Arc::clone(&keys),
                Arc::clone(&shared),
            );
            async move { front_door(request, &service, &sessions, &keys, &shared).await }
        };
        let notifier = tokio::spawn(notify_changes(Arc::clone(&self.shared), changes));
        let serving = http::serve(listener, route, stop.clone()).await;
        notifier.abort();
        // Open SSE streams may hold a connection: a short grace, not forever.
        let _ = tokio::time::timeout(Duration::from_secs(2), async move {
            let mut serving = serving;
            while serving.join_next().await.is_some() {}
        })
        .await;
        Ok(())
    }
}

impl Gateway {
    /// Serves `client` on the process's stdin and stdout until the host closes
    /// stdin or `stop`; tells it of changes `changes` reports. Nothing else may
    /// write to stdout meanwhile.
    pub async fn serve_stdio(
        self,
        client: String,
        changes: Changes,
        stop: CancellationToken,
    ) -> Result<(), StdioError> {
        use rmcp::ServiceExt as _;
        let handler = handler::GatewayHandler {
            shared: Arc::clone(&self.shared),
            stdio_client: Some(client),
            live: Arc::new(SessionLive::new(&self.shared).into()),
        };
        let notifier = tokio::spawn(notify_changes(Arc::clone(&self.shared), changes));
        let served = match handler.serve_with_ct(host_io::host_stdio(), stop).await {
            Ok(running) => running
                .waiting()
                .await
                .map(|_| ())
                .map_err(StdioError::Ended),
            Err(e) => Err(StdioError::Handshake(e.to_string())),
        };
        notifier.abort();
        served
    }
}

/// Why a stdio session ended badly.
#[derive(Debug, thiserror::Error)]
pub enum StdioError {
    #[error("the client's handshake failed: {0}")]
    Handshake(String),
    #[error("the session's task ended abnormally: {0}")]
    Ended(tokio::task::JoinError),
}

async fn front_door(
    request: Request<Incoming>,
    service: &StreamableHttpService<handler::GatewayHandler, LocalSessionManager>,
    sessions: &door::Sessions,
    keys: &[door::Key],
    shared: &Shared,
) -> Reply {
    if request.uri().path() != PATH {
        return http::reply(StatusCode::NOT_FOUND, "text/plain", "not found\n");
    }
    let checked = door::check_origin(request.headers())
        .and_then(|()| door::authenticate(keys, request.headers()))
        .and_then(|client| sessions.check(client, request.headers()).map(|()| client));
    let client = match checked {
        Ok(client) => client.to_string(),
        Err(refusal) => {
            tracing::info!("gateway: refused a request: {refusal}");
            let mut reply = http::reply(refusal.status(), "text/plain", refusal_body(refusal));
            if refusal == Refusal::NoToken {
                reply.headers_mut().insert(
                    hyper::header::WWW_AUTHENTICATE,
                    hyper::header::HeaderValue::from_static("Bearer"),
                );
            }
            return reply;
        }
    };
    let (mut parts, body) = request.into_parts();
    parts.extensions.insert(AuthedClient(client.clone()));
    let request_headers = parts.headers.clone();
    let is_delete = parts.method == hyper::Method::DELETE;
    let profile = shared.settings.clients.iter().find(|c| c.name == client);
    let request = match profile {
        // A 2026-07-28 listen: its resource subscriptions are resolved first.
        Some(profile) if listen::is_listen(&parts) => {
            match listen::resolve(shared, profile, parts, body).await {
                Ok(request) => request,
                Err(refused) => return refused,
            }
        }
        _ => Request::from_parts(parts, body.boxed()),
    };
    let response = service.handle(request).await;
    sessions.opened(&client, &request_headers, response.headers());
    let (mut parts, body) = response.into_parts();
    if is_delete && parts.status.is_success() {
        sessions.closed(&request_headers);
        // rmcp answers 202; a client that ends its session wants 200 or 204
        // (the Python SDK warns "Session termination failed: 202" otherwise).
        parts.status = StatusCode::NO_CONTENT;
    }
    hyper::Response::from_parts(parts, body.map_err(|never| match never {}).boxed())
}

fn refusal_body(refusal: Refusal) -> &'static str {
    match refusal {
        Refusal::NoToken => "unauthorized: a bearer token of a configured client is required\n",
        Refusal::Origin => "forbidden: the Origin is not a loopback origin\n",
        Refusal::Session => "not found: unknown session\n",
    }
}

/// What a client is offered, to tell whether it changed: its tools, and the
/// aliases (by connection) it gets resources and prompts from.
#[derive(PartialEq, Eq)]
struct Offer {
    tools: view::Signature,
    resources: Vec<(ServerAlias, super::events::ConnectionId)>,
    prompts: Vec<(ServerAlias, super::events::ConnectionId)>,
}

fn offers(shared: &Shared) -> Vec<Offer> {
    let snapshot = shared.hub.snapshot();
    shared
        .settings
        .clients
        .iter()
        .map(|c| Offer {
            // Through the cache: the calls that follow the change use this view.
            tools: shared.views.of(&snapshot, &shared.settings, c).signature(),
            resources: offered::aliases_offering(&shared.hub, &snapshot, c, Offering::Resources),
            prompts: offered::aliases_offering(&shared.hub, &snapshot, c, Offering::Prompts),
        })
        .collect()
}

/// Each time the hub's exposed set changes: the clients whose own tool set
/// changed get `notifications/tools/list_changed` (only once the registry holds
/// the validated set: the hub reports after registering or revoking); those
/// whose resources or prompts come from other connections now, or whose
/// upstream said they changed, get `notifications/resources/list_changed` or
/// `notifications/prompts/list_changed`.
async fn notify_changes(shared: Arc<Shared>, changes: Changes) {
    let mut last = offers(&shared);
    loop {
        tokio::select! {
            () = changes.0.wake.notified() => {}
            () = shared.session_ended.notified() => {}
        }
        tokio::time::sleep(DEBOUNCE).await;
        let now = offers(&shared);
        subscriptions::pass_on_updates(&shared, changes.take_updated()).await;
        subscriptions::end_stale(&shared, &now).await;
        let said = changes.take_offerings();
        for ((client, before), after) in shared.settings.clients.iter().zip(&last).zip(&now) {
            let upstream_said =
                |what: Offering, seen: &[(ServerAlias, super::events::ConnectionId)]| {
                    said.iter()
                        .any(|(alias, w)| *w == what && seen.iter().any(|(a, _)| a == alias))
                };
            let tools = before.tools != after.tools;
            let resources = before.resources != after.resources
                || upstream_said(Offering::Resources, &after.resources);
            let prompts =
                before.prompts != after.prompts || upstream_said(Offering::Prompts, &after.prompts);
            if !(tools || resources || prompts) {
                continue;
            }
            if tools {
                for (alias, why) in &after.tools.rejected {
                    tracing::warn!(
                        client = client.name,
                        alias = alias.as_str(),
                        "gateway: not offered: {why}"
                    );
                }
            }
            for sink in shared.peers.listening(&client.name) {
                let accepted = sink.accepted();
                let wants = |v: Option<bool>| v == Some(true);
                let sent = async {
                    if tools && wants(accepted.tools_list_changed) {
                        sink.notify_tool_list_changed().await?;
                    }
                    if resources && wants(accepted.resources_list_changed) {
                        sink.notify_resource_list_changed().await?;
                    }
                    if prompts && wants(accepted.prompts_list_changed) {
                        sink.notify_prompt_list_changed().await?;
                    }
                    Ok::<(), rmcp::service::SubscriptionSendError>(())
                };
                if let Err(e) = sent.await {
                    tracing::info!(client = client.name, "gateway: list_changed not sent: {e}");
                }
            }
            for peer in shared.peers.of(&client.name) {
                let sent = async {
                    if tools {
                        peer.notify_tool_list_changed().await?;
                    }
                    if resources {
                        peer.notify_resource_list_changed().await?;
                    }
                    if prompts {
                        peer.notify_prompt_list_changed().await?;
                    }
                    Ok::<(), rmcp::ServiceError>(())
                };
                if let Err(e) = sent.await {
                    tracing::info!(client = client.name, "gateway: list_changed not sent: {e}");
                }
            }
            tracing::info!(
                client = client.name,
                tools,
                resources,
                prompts,
                "gateway: what the client is offered changed, told the client"
            );
        }
        last = now;
    }
}
