//! Our side of the MCP session: client identity and what we do with the server's
//! notifications and requests (notifications become events; elicitation goes to
//! the installed elicitor; nothing here trusts their content).

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rmcp::ClientHandler;
use rmcp::model::{
    ClientCapabilities, ClientConfig, ElicitRequestParams, ElicitResult, ElicitationAction,
    ElicitationCapability, FormElicitationCapability, Implementation, ProgressNotificationParam,
    ProtocolVersion,
};
use rmcp::service::{NotificationContext, RequestContext, RoleClient};
use serde_json::Value;
use tokio::sync::watch;

use super::elicit::{ElicitationRequest, ElicitationResponse, Elicitor};
use super::events::{ConnectionId, EventSink, McpEvent};
use super::names::ServerAlias;

/// At most one progress event per connection in this interval (the last one of
/// a call — progress == total — always goes through): a server that floods
/// progress notifications cannot flood the UI.
const PROGRESS_INTERVAL: Duration = Duration::from_millis(50);

/// Progress token → the call (its id) that asked for progress: lets a
/// progress notification name its call, however many run at once.
pub type ProgressRoutes = Arc<Mutex<std::collections::HashMap<String, String>>>;

/// One entry of [`ProgressRoutes`], removed when the request is over.
pub struct ProgressRoute {
    routes: ProgressRoutes,
    token: String,
}

impl ProgressRoute {
    pub fn register(routes: &ProgressRoutes, token: String, call: String) -> Self {
        routes
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(token.clone(), call);
        Self {
            routes: Arc::clone(routes),
            token,
        }
    }
}

impl Drop for ProgressRoute {
    fn drop(&mut self) {
        self.routes
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&self.token);
    }
}

/// The client handler of one connection.
pub struct HarnessClient {
    alias: ServerAlias,
    id: ConnectionId,
    events: EventSink,
    last_progress: Mutex<Option<Instant>>,
    /// Counts `tools/list_changed` notifications; the hub's re-list task
    /// watches it (a storm just bumps the counter: re-lists are coalesced).
    list_changed: watch::Sender<u64>,
    elicitor: Arc<dyn Elicitor>,
    routes: ProgressRoutes,
}

impl HarnessClient {
    pub fn new(
        alias: ServerAlias,
        id: ConnectionId,
        events: EventSink,
        list_changed: watch::Sender<u64>,
        elicitor: Arc<dyn Elicitor>,
        routes: ProgressRoutes,
    ) -> Self {
        Self {
            alias,
            id,
            events,
            last_progress: Mutex::new(None),
            list_changed,
            elicitor,
            routes,
        }
    }

    fn progress_due(&self, done: bool) -> bool {
        let mut last = self.last_progress.lock().unwrap_or_else(|e| e.into_inner());
        let now = Instant::now();
        if done || last.is_none_or(|t| now.duration_since(t) >= PROGRESS_INTERVAL) {
            *last = Some(now);
            return true;
        }
        false
    }
}

impl ClientHandler for HarnessClient {
    fn get_info(&self) -> ClientConfig {
        // rmcp's default asks for 2026-07-28, a revision without the `initialize`
        // handshake; we ask for the newest revision that has one.
        ClientConfig::new(
            client_capabilities(),
            Implementation::new("mcp-harness", env!("CARGO_PKG_VERSION")),
        )
        .with_protocol_version(ProtocolVersion::LATEST_WITH_INITIALIZE)
    }

    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.list_changed.send_modify(|n| *n = n.wrapping_add(1));
        self.events.emit(McpEvent::ToolListChanged {
            alias: self.alias.clone(),
            connection: self.id,
        });
    }

    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        if !self.progress_due(params.total.is_some_and(|t| params.progress >= t)) {
            return;
        }
        let call = self
            .routes
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&params.progress_token.0.to_string())
            .cloned();
        self.events.emit(McpEvent::Progress {
            alias: self.alias.clone(),
            connection: self.id,
            call,
            progress: params.progress,
            total: params.total,
            message: params.message,
        });
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, rmcp::ErrorData> {
        let decline = Ok(ElicitResult::new(ElicitationAction::Decline));
        // URL mode is never offered; a server that asks for it anyway gets a
        // refusal, not the operator's attention.
        let ElicitRequestParams::FormElicitationParams {
            message,
            requested_schema,
            ..
        } = request
        else {
            return decline;
        };
        let schema = serde_json::to_value(&requested_schema).unwrap_or(Value::Null);
        let request = ElicitationRequest {
            alias: self.alias.clone(),
            connection: self.id,
            message,
            requested_schema: schema.clone(),
        };
        Ok(match self.elicitor.elicit(request).await {
            ElicitationResponse::Accept { content } => {
                let content = Value::Object(content);
                if satisfies(&schema, &content) {
                    ElicitResult::new(ElicitationAction::Accept).with_content(content)
                } else {
                    // Never send the server something its own schema refuses.
                    tracing::warn!(alias = %self.alias, "elicitation answer does not match the requested schema; cancelled");
                    ElicitResult::new(ElicitationAction::Cancel)
                }
            }
            ElicitationResponse::Decline => ElicitResult::new(ElicitationAction::Decline),
            ElicitationResponse::Cancel => ElicitResult::new(ElicitationAction::Cancel),
        })
    }
}

/// What the harness advertises in `initialize`: one set for every mode (SPEC
/// rule 16), so a server publishes the same tools to `policy`, `check`, `call`,
/// `run` and the TUI. Elicitation is form mode only: URL mode would send the
/// operator to a server-chosen page.
pub fn client_capabilities() -> ClientCapabilities {
    let mut capabilities = ClientCapabilities::default();
    capabilities.elicitation =
        Some(ElicitationCapability::new().with_form(FormElicitationCapability::new()));
    capabilities
}

/// Whether `content` satisfies the requested schema (compiled offline, like every
/// server schema: no external `$ref` is ever fetched).
fn satisfies(schema: &Value, content: &Value) -> bool {
    super::schema::compile(schema)
        .map(|validator| super::schema::validate(&validator, content).is_empty())
        .unwrap_or(false)
}
