//! Our side of the MCP session: client identity and what we do with the server's
//! notifications and requests (notifications become events; elicitation goes to
//! the installed elicitor; nothing here trusts their content).

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rmcp::ClientHandler;
use rmcp::model::{
    ClientCapabilities, ClientConfig, ElicitRequestParams, ElicitResult, ElicitationAction,
    ElicitationCapability, FormElicitationCapability, Implementation, ProgressNotificationParam,
    ProtocolVersion, TASKS_EXTENSION_ID,
};
use rmcp::service::{NotificationContext, RequestContext, RoleClient};
use serde_json::Value;
use tokio::sync::{Notify, watch};

use super::negotiate::Era;
use crate::mcp::call::CallIdentity;
use crate::mcp::elicit::Elicitor;
use crate::mcp::events::{ConnectionId, McpEvent, Offering};
use crate::mcp::names::ServerAlias;
use crate::mcp::sink::EventSink;
use crate::protocol::CallId;

/// At most one progress event per call in this interval (the last one of a
/// call — progress == total — always goes through): a server that floods
/// progress notifications cannot flood the UI, and calls running side by side
/// each show their own.
const PROGRESS_INTERVAL: Duration = Duration::from_millis(50);

/// Progress token → the call (its id and requester) that asked for
/// progress: lets a progress notification name its call, however many run at
/// once; the routes not ended are the calls in flight (what a server request
/// during a call is attributed by).
pub type ProgressRoutes = Arc<Mutex<RouteTable>>;

/// The routes of one connection's progress tokens.
#[derive(Default)]
pub struct RouteTable {
    routes: std::collections::HashMap<String, Routed>,
    /// When ended routes were last swept out (at most once per linger, so a
    /// busy connection does not walk the table per call).
    swept: Option<Instant>,
}

/// Where a progress token's notifications go.
struct Routed {
    call: CallIdentity,
    /// The JSON-RPC id of the request that carries the call: a server request
    /// that arrives on that request's HTTP response stream is the call's.
    request: rmcp::model::RequestId,
    /// Woken by each notification: a fast-lane request restarts its timer.
    progressed: Arc<Notify>,
    /// When its request ended (the route lingers a moment after).
    ended: Option<Instant>,
}

impl Routed {
    fn live(&self, now: Instant) -> bool {
        self.ended
            .is_none_or(|t| now.duration_since(t) < ROUTE_LINGER)
    }
}

/// What wakes at each progress notification of `token`, if it has a route.
pub(super) fn progress_signal(routes: &ProgressRoutes, token: &str) -> Option<Arc<Notify>> {
    routes
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .routes
        .get(token)
        .map(|routed| Arc::clone(&routed.progressed))
}

/// One entry of [`ProgressRoutes`]: marked ended when the request is over,
/// and gone once its linger is (swept as later routes come).
pub struct ProgressRoute {
    routes: ProgressRoutes,
    token: String,
}

impl ProgressRoute {
    pub fn register(
        routes: &ProgressRoutes,
        token: String,
        call: CallIdentity,
        request: rmcp::model::RequestId,
    ) -> Self {
        let mut table = routes.lock().unwrap_or_else(|e| e.into_inner());
        // Routes whose linger is over go as new ones come (no timer per call).
        let now = Instant::now();
        if table
            .swept
            .is_none_or(|t| now.duration_since(t) >= ROUTE_LINGER)
        {
            table.routes.retain(|_, routed| routed.live(now));
            table.swept = Some(now);
        }
        table.routes.insert(
            token.clone(),
            Routed {
                call,
                request,
                progressed: Arc::new(Notify::new()),
                ended: None,
            },
        );
        drop(table);
        Self {
            routes: Arc::clone(routes),
            token,
        }
    }
}

/// How long a route outlives its request: rmcp hands each notification to a
/// task of its own, so progress that came just before the answer may be
/// handled just after it, and must still find its call.
const ROUTE_LINGER: Duration = Duration::from_millis(250);

impl Drop for ProgressRoute {
    fn drop(&mut self) {
        if let Some(routed) = self
            .routes
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .routes
            .get_mut(&self.token)
        {
            routed.ended = Some(Instant::now());
        }
    }
}

/// What every client handler of one connection shares. Negotiation may make
/// two (the `server/discover` probe, then the handshake), so they are built
/// from this.
#[derive(Clone)]
pub struct HandlerParts {
    pub alias: ServerAlias,
    pub id: ConnectionId,
    pub events: EventSink,
    /// Counts `tools/list_changed` notifications; the hub's re-list task
    /// watches it (a storm just bumps the counter: re-lists are coalesced).
    pub list_changed: Arc<watch::Sender<u64>>,
    pub elicitor: Arc<dyn Elicitor>,
    /// Progress token → the call it belongs to.
    pub routes: ProgressRoutes,
    /// Who hears a call's progress, unthrottled.
    pub taps: crate::mcp::taps::CallTaps,
}

impl HandlerParts {
    pub(in crate::mcp) fn alias(&self) -> &ServerAlias {
        &self.alias
    }

    /// The handler for one lifecycle attempt in `era`.
    pub(in crate::mcp) fn client(&self, era: Era) -> HarnessClient {
        HarnessClient {
            parts: self.clone(),
            era,
            last_progress: Mutex::new(std::collections::HashMap::new()),
        }
    }
}

/// The client handler of one connection.
pub struct HarnessClient {
    parts: HandlerParts,
    era: Era,
    /// When each call (by the call its token names; `None`: a token of no
    /// call) last had a progress event through.
    last_progress: Mutex<std::collections::HashMap<Option<CallId>, Instant>>,
}

impl HarnessClient {
    /// `resources/list_changed` or `prompts/list_changed` (from a notification
    /// or a subscription).
    pub(in crate::mcp) fn note_offerings_changed(parts: &HandlerParts, what: Offering) {
        parts.events.emit(McpEvent::OfferingsChanged {
            alias: parts.alias.clone(),
            connection: parts.id,
            what,
        });
    }

    /// A watched resource changed (from a notification or a subscription).
    pub(in crate::mcp) fn note_resource_updated(parts: &HandlerParts, uri: String) {
        parts.events.emit(McpEvent::ResourceUpdated {
            alias: parts.alias.clone(),
            connection: parts.id,
            uri,
        });
    }

    /// Counts one `tools/list_changed` (from a notification or a subscription).
    pub(in crate::mcp) fn note_list_changed(parts: &HandlerParts) {
        parts.list_changed.send_modify(|n| *n = n.wrapping_add(1));
        parts.events.emit(McpEvent::ToolListChanged {
            alias: parts.alias.clone(),
            connection: parts.id,
        });
    }

    /// The call a server request came during, or, when the connection
    /// cannot tell, the calls it may have come during. Over Streamable HTTP
    /// rmcp says which of our requests' response stream it came on
    /// (SEP-2260): the call that request carries, whatever else is in
    /// flight. Elsewhere (stdio, WebSocket, the GET stream) a 2025-11-25
    /// server request names no request; a server sends one only during a
    /// request of ours, so with one call in flight it is that call's, and
    /// with more it is one of them — said as such, never guessed.
    fn call_of(
        &self,
        context: &RequestContext<RoleClient>,
    ) -> (Option<CallIdentity>, Vec<CallIdentity>) {
        use rmcp::service::InboundStreamOrigin;
        let table = self.parts.routes.lock().unwrap_or_else(|e| e.into_inner());
        let mut in_flight = table
            .routes
            .values()
            .filter(|routed| routed.ended.is_none());
        if let Some(InboundStreamOrigin::OutboundRequest(id)) =
            context.extensions.get::<InboundStreamOrigin>()
        {
            let call = in_flight
                .find(|routed| routed.request == *id)
                .map(|routed| routed.call.clone());
            return (call, Vec::new());
        }
        // One call may hold more than one route (a task's requests).
        let mut calls: Vec<CallIdentity> = Vec::new();
        for routed in in_flight {
            if !calls.iter().any(|c| c.id == routed.call.id) {
                calls.push(routed.call.clone());
            }
        }
        match calls.len() {
            1 => (calls.pop(), Vec::new()),
            _ => {
                calls.sort_by(|a, b| a.id.mint_order().cmp(&b.id.mint_order()));
                (None, calls)
            }
        }
    }

    fn progress_due(&self, call: &Option<CallId>, done: bool) -> bool {
        let mut last = self.last_progress.lock().unwrap_or_else(|e| e.into_inner());
        let now = Instant::now();
        if last.len() > 64 {
            // Calls that ended long ago (bounded however many calls there were).
            last.retain(|_, t| now.duration_since(*t) < PROGRESS_INTERVAL);
        }
        let due = last
            .get(call)
            .is_none_or(|t| now.duration_since(*t) >= PROGRESS_INTERVAL);
        if done || due {
            last.insert(call.clone(), now);
            return true;
        }
        false
    }
}

/// The client capabilities of a connection in `era`: the same in every mode
/// (SPEC rule 16); 2026-07-28 adds the tasks extension.
pub(in crate::mcp) fn capabilities(era: Era) -> ClientCapabilities {
    let mut capabilities = client_capabilities();
    if era == Era::Stateless {
        // The tasks extension (2026-07-28): the server may answer a call with a task.
        capabilities
            .extensions
            .get_or_insert_with(Default::default)
            .insert(TASKS_EXTENSION_ID.to_string(), Default::default());
    }
    capabilities
}

impl ClientHandler for HarnessClient {
    fn get_info(&self) -> ClientConfig {
        // The handshake offers the newest revision that has one; a stateless
        // attempt names its revision in `server/discover` instead.
        ClientConfig::new(
            capabilities(self.era),
            Implementation::new("mcp-harness", env!("CARGO_PKG_VERSION")),
        )
        .with_protocol_version(ProtocolVersion::LATEST_WITH_INITIALIZE)
    }

    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        Self::note_list_changed(&self.parts);
    }

    async fn on_resource_list_changed(&self, _context: NotificationContext<RoleClient>) {
        Self::note_offerings_changed(&self.parts, Offering::Resources);
    }

    async fn on_prompt_list_changed(&self, _context: NotificationContext<RoleClient>) {
        Self::note_offerings_changed(&self.parts, Offering::Prompts);
    }

    async fn on_resource_updated(
        &self,
        params: rmcp::model::ResourceUpdatedNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        Self::note_resource_updated(&self.parts, params.uri);
    }

    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        let call = {
            let table = self.parts.routes.lock().unwrap_or_else(|e| e.into_inner());
            table
                .routes
                .get(&params.progress_token.0.to_string())
                .filter(|routed| routed.live(Instant::now()))
                .map(|routed| {
                    routed.progressed.notify_one();
                    routed.call.id.clone()
                })
        };
        if let Some(call) = &call {
            self.parts.taps.progress(
                call,
                crate::mcp::taps::CallProgress {
                    progress: params.progress,
                    total: params.total,
                    message: params.message.clone(),
                },
            );
        }
        if !self.progress_due(&call, params.total.is_some_and(|t| params.progress >= t)) {
            return;
        }
        self.parts.events.emit(McpEvent::Progress {
            alias: self.parts.alias.clone(),
            connection: self.parts.id,
            call,
            progress: params.progress,
            total: params.total,
            message: params.message,
        });
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, rmcp::ErrorData> {
        // The wire's property order survives only in rmcp's typed schema (a
        // `Value` object is sorted), so it is taken here, before the round trip.
        let order = match &request {
            ElicitRequestParams::FormElicitationParams {
                requested_schema, ..
            } => requested_schema.property_order.clone(),
            _ => None,
        };
        let params = serde_json::to_value(&request).unwrap_or(Value::Null);
        let (call, may_be) = self.call_of(&context);
        let answer = crate::mcp::elicit::answer_form(
            self.parts.elicitor.as_ref(),
            &self.parts.alias,
            self.parts.id,
            crate::mcp::elicit::During { call, may_be },
            &params,
            order,
        )
        .await;
        Ok(serde_json::from_value(answer)
            .unwrap_or_else(|_| ElicitResult::new(ElicitationAction::Cancel)))
    }
}

/// What the harness advertises (in `initialize`, or in every request's `_meta`):
/// one set for every mode (SPEC rule 16), so a server publishes the same tools to
/// `policy`, `check`, `call`, `run` and the TUI. Elicitation is form mode only: URL mode would send the
/// operator to a server-chosen page.
pub fn client_capabilities() -> ClientCapabilities {
    let mut capabilities = ClientCapabilities::default();
    capabilities.elicitation =
        Some(ElicitationCapability::new().with_form(FormElicitationCapability::new()));
    capabilities
}
