//! Our side of the MCP session: client identity and what we do with the server's
//! notifications (they become events; nothing here trusts their content).

use std::sync::Mutex;
use std::time::{Duration, Instant};

use rmcp::ClientHandler;
use rmcp::model::{
    ClientCapabilities, ClientConfig, Implementation, ProgressNotificationParam, ProtocolVersion,
};
use rmcp::service::{NotificationContext, RoleClient};

use super::events::{ConnectionId, EventSink, McpEvent};
use super::names::ServerAlias;

/// At most one progress event per connection in this interval (the last one of
/// a call — progress == total — always goes through): a server that floods
/// progress notifications cannot flood the UI.
const PROGRESS_INTERVAL: Duration = Duration::from_millis(50);

/// The client handler of one connection.
pub struct HarnessClient {
    alias: ServerAlias,
    id: ConnectionId,
    events: EventSink,
    last_progress: Mutex<Option<Instant>>,
}

impl HarnessClient {
    pub fn new(alias: ServerAlias, id: ConnectionId, events: EventSink) -> Self {
        Self {
            alias,
            id,
            events,
            last_progress: Mutex::new(None),
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
            ClientCapabilities::default(),
            Implementation::new("mcp-harness", env!("CARGO_PKG_VERSION")),
        )
        .with_protocol_version(ProtocolVersion::LATEST_WITH_INITIALIZE)
    }

    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
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
        self.events.emit(McpEvent::Progress {
            alias: self.alias.clone(),
            connection: self.id,
            progress: params.progress,
            total: params.total,
            message: params.message,
        });
    }
}
