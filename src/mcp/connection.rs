//! A live, initialized protocol session with one server (stdio child or Streamable
//! HTTP), and the requests we make on it. Opening one is `open.rs`.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use rmcp::ServiceError;
use rmcp::model::{
    CancelledNotification, CancelledNotificationParam, ClientRequest, CustomRequest, RequestId,
    ServerResult,
};
use rmcp::service::{Peer, PeerRequestOptions, RoleClient};
use serde::Serialize;
use serde_json::Value;
use tokio::sync::{mpsc, watch};

use super::events::ConnectionId;
use super::names::ServerAlias;
use super::process::StderrTail;
use super::watchdog::{EndReason, Lifeline, StopMode};

pub use super::open::{OpenParams, open};

/// Who the server says it is (untrusted: shown inert, never used for decisions).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ServerIdentity {
    pub name: String,
    pub version: String,
    /// The protocol revision negotiated in `initialize`.
    pub protocol_version: String,
}

/// How the connection reaches its server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Endpoint {
    Stdio { pid: u32 },
    Http,
}

/// Whether a request failed locally, remotely or in transit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RequestError {
    /// No answer within the timeout; `notifications/cancelled` was sent.
    Timeout(Duration),
    /// The connection ended (process exit, transport closed, or closed by us).
    Lost(String),
    /// The server answered with a JSON-RPC error. Its text is server output.
    Remote { code: i32, message: String },
    /// An HTTP server refused the request for want of credentials (401/403): the
    /// session is unusable until the operator gives it a token.
    Unauthorized,
}

impl RequestError {
    /// Why the connection is gone, for `Lost` and `Unauthorized`.
    pub fn lost_detail(&self) -> Option<String> {
        match self {
            RequestError::Lost(detail) => Some(detail.clone()),
            RequestError::Unauthorized => Some(
                "the server requires authorization (HTTP 401/403) and refused the request".into(),
            ),
            _ => None,
        }
    }
}

/// A live connection. Cheap to share (`Arc`); the process and the session are
/// owned by its watchdog task, which ends them when asked or when they die.
pub struct Connection {
    pub(super) id: ConnectionId,
    pub(super) alias: ServerAlias,
    pub(super) peer: Peer<RoleClient>,
    pub(super) server: ServerIdentity,
    pub(super) endpoint: Endpoint,
    pub(super) opened: Instant,
    pub(super) call_timeout: Duration,
    pub(super) has_tools: bool,
    pub(super) stderr: Arc<StderrTail>,
    pub(super) stop: mpsc::UnboundedSender<StopMode>,
    pub(super) life: Arc<Lifeline>,
    /// How many `tools/list_changed` notifications arrived so far.
    pub(super) list_changes: watch::Receiver<u64>,
    /// The notification count the current tool list reflects (read just before
    /// the listing that produced it started).
    pub(super) listed: AtomicU64,
    /// What was cut from this server's long messages, by response id.
    pub(super) spills: Arc<super::spill::SpillTable>,
    pub(super) reset_timeout_on_progress: bool,
    pub(super) max_call: Duration,
    /// Progress token → the call it belongs to (read by the client handler).
    pub(super) progress_routes: super::client::ProgressRoutes,
}

impl Connection {
    pub fn id(&self) -> ConnectionId {
        self.id
    }

    pub fn alias(&self) -> &ServerAlias {
        &self.alias
    }

    pub fn server(&self) -> &ServerIdentity {
        &self.server
    }

    pub fn endpoint(&self) -> &Endpoint {
        &self.endpoint
    }

    pub fn uptime(&self) -> Duration {
        self.opened.elapsed()
    }

    pub fn call_timeout(&self) -> Duration {
        self.call_timeout
    }

    /// The longest a call may run, progress or not.
    pub fn max_call(&self) -> Duration {
        self.max_call
    }

    /// Whether progress notifications restart a call's timer.
    pub fn resets_on_progress(&self) -> bool {
        self.reset_timeout_on_progress
    }

    /// Whether the server declared the tools capability at all.
    pub fn has_tools(&self) -> bool {
        self.has_tools
    }

    pub fn stderr(&self) -> &StderrTail {
        &self.stderr
    }

    /// Has the connection ended (for any reason)?
    pub fn is_ended(&self) -> bool {
        self.life.ended.is_cancelled()
    }

    /// Resolves once the connection has ended; then [`Self::end_reason`] is set.
    pub async fn ended(&self) {
        self.life.ended.cancelled().await
    }

    /// Whether the server's processes are gone and the session is closed.
    pub fn is_finished(&self) -> bool {
        self.life.finished.is_cancelled()
    }

    /// Resolves once the server's processes are gone and the session is closed.
    pub async fn finished(&self) {
        self.life.finished.cancelled().await
    }

    /// SIGKILLs the server's process group directly, bypassing the watchdog, which
    /// then notices the death like any other.
    pub fn kill_process_group(&self) {
        if let Endpoint::Stdio { pid } = self.endpoint {
            super::process::kill_group(pid);
        }
    }

    /// Records that a listing starts now: notifications counted so far are
    /// covered by it.
    pub(super) fn listing_starts(&self) {
        self.listed
            .store(*self.list_changes.borrow(), Ordering::SeqCst);
    }

    pub fn end_reason(&self) -> Option<&EndReason> {
        self.life.reason.get()
    }

    /// Closes gracefully in the background (stdin EOF, then SIGTERM, then SIGKILL
    /// of the whole group). Never blocks the caller.
    pub fn close(&self) {
        let _ = self.stop.send(StopMode::Close);
    }

    /// Kills the server's process group at once (after a timeout, or by the operator).
    pub fn kill(&self) {
        let _ = self.stop.send(StopMode::Kill);
    }

    /// Sends one request and waits for its answer, at most `timeout`. A timeout or
    /// a dropped future sends `notifications/cancelled` for the request.
    pub async fn request(
        &self,
        method: &str,
        params: Value,
        timeout: Duration,
    ) -> Result<ServerResult, RequestError> {
        if let Some(reason) = self.end_reason() {
            return Err(RequestError::Lost(reason.to_string()));
        }
        let request = ClientRequest::CustomRequest(CustomRequest::new(method, Some(params)));
        let handle = self
            .peer
            .send_request_with_option(request, PeerRequestOptions::with_timeout(timeout))
            .await
            .map_err(|e| self.map_error(e))?;
        let mut guard = CancelOnDrop {
            peer: self.peer.clone(),
            id: Some(handle.id.clone()),
        };
        let result = tokio::select! {
            result = handle.await_response() => result.map_err(|e| self.map_error(e)),
            _ = self.ended() => Err(RequestError::Lost(self.lost_detail())),
        };
        // await_response already sent the cancellation on timeout; a dead transport needs none.
        guard.id = None;
        if let Err(RequestError::Lost(_)) = result {
            // The transport usually closes a moment before the watchdog has the
            // exit status; wait briefly so the error can say how the server ended.
            let _ = tokio::time::timeout(Duration::from_millis(500), self.ended()).await;
            return Err(RequestError::Lost(self.lost_detail()));
        }
        result
    }

    /// A request whose answer may be large or slow (`tools/call`,
    /// `resources/read`, `prompts/get`): what the stdio gate cut from the
    /// response comes with it, and, for a call, progress notifications restart
    /// the timer (bounded by `max_call`) and are told apart by `call`.
    pub async fn request_long(
        &self,
        method: &str,
        params: Value,
        call: Option<&str>,
    ) -> Result<(ServerResult, Option<super::spill::Spilled>), RequestError> {
        if let Some(reason) = self.end_reason() {
            return Err(RequestError::Lost(reason.to_string()));
        }
        let request = ClientRequest::CustomRequest(CustomRequest::new(method, Some(params)));
        let mut options = PeerRequestOptions::with_timeout(self.call_timeout);
        if call.is_some() && self.reset_timeout_on_progress {
            options = options
                .reset_timeout_on_progress()
                .with_max_total_timeout(self.max_call.max(self.call_timeout));
        }
        let handle = self
            .peer
            .send_request_with_option(request, options)
            .await
            .map_err(|e| self.map_error(e))?;
        let key = super::spill::lexer::id_key(handle.id.to_string().as_bytes());
        let _progress = call.map(|call| {
            super::client::ProgressRoute::register(
                &self.progress_routes,
                handle.progress_token.0.to_string(),
                call.to_string(),
            )
        });
        let mut guard = CancelOnDrop {
            peer: self.peer.clone(),
            id: Some(handle.id.clone()),
        };
        let started = Instant::now();
        let result = tokio::select! {
            result = handle.await_response() => result.map_err(|e| self.map_error(e)),
            _ = self.ended() => Err(RequestError::Lost(self.lost_detail())),
        };
        guard.id = None;
        let spilled = self.spills.take(&key);
        match result {
            Err(RequestError::Lost(_)) => {
                let _ = tokio::time::timeout(Duration::from_millis(500), self.ended()).await;
                Err(RequestError::Lost(self.lost_detail()))
            }
            // Which bound ended it: the idle timer, or `max_call` after progress.
            Err(RequestError::Timeout(after)) if started.elapsed() >= self.max_call => {
                Err(RequestError::Timeout(after.max(self.max_call)))
            }
            Err(e) => Err(e),
            Ok(result) => Ok((result, spilled)),
        }
    }

    fn map_error(&self, error: ServiceError) -> RequestError {
        if error.is_authorization_required() {
            return RequestError::Unauthorized;
        }
        match error {
            ServiceError::Timeout { timeout } => RequestError::Timeout(timeout),
            ServiceError::McpError(e) => RequestError::Remote {
                code: e.code.0,
                message: e.message.to_string(),
            },
            ServiceError::TransportClosed
            | ServiceError::TransportSend(_)
            | ServiceError::Cancelled { .. } => RequestError::Lost(self.lost_detail()),
            other => RequestError::Lost(format!("protocol error: {other}")),
        }
    }

    fn lost_detail(&self) -> String {
        self.end_reason()
            .map(ToString::to_string)
            .unwrap_or_else(|| "the transport closed".into())
    }

    /// The typed rmcp call, bypassing every local rule. Only for benchmarks, as the
    /// baseline the harness call path is measured against.
    #[doc(hidden)]
    pub async fn raw_rmcp_call(
        &self,
        name: &str,
        arguments: serde_json::Map<String, Value>,
    ) -> Result<(), String> {
        let params =
            rmcp::model::CallToolRequestParams::new(name.to_string()).with_arguments(arguments);
        self.peer
            .call_tool(params)
            .await
            .map(|_| ())
            .map_err(|e| e.to_string())
    }

    /// The typed rmcp listing (all pages, no local rules). Benchmark baseline only.
    #[doc(hidden)]
    pub async fn raw_rmcp_list(&self) -> Result<usize, String> {
        self.peer
            .list_all_tools()
            .await
            .map(|t| t.len())
            .map_err(|e| e.to_string())
    }
}

/// Benchmark baseline only: what a bare rmcp client does to learn a server's
/// tools — spawn it (no process group, no shim, no stderr tail), `initialize`,
/// `list_all_tools`, close. No local rule is applied. Returns the tool count and
/// the time from spawn to the last page (closing is not counted).
#[doc(hidden)]
pub async fn raw_rmcp_connect_and_list(
    command: &str,
    args: &[String],
) -> Result<(usize, Duration), String> {
    use rmcp::model::{ClientCapabilities, ClientConfig, Implementation, ProtocolVersion};
    use rmcp::transport::async_rw::AsyncRwTransport;
    let started = Instant::now();
    let mut child = tokio::process::Command::new(command)
        .args(args)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| e.to_string())?;
    let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
        return Err("stdio not piped".into());
    };
    let client = ClientConfig::new(
        ClientCapabilities::default(),
        Implementation::new("raw", "0"),
    )
    .with_protocol_version(ProtocolVersion::LATEST_WITH_INITIALIZE);
    let session = rmcp::service::serve_client(client, AsyncRwTransport::new_client(stdout, stdin))
        .await
        .map_err(|e| e.to_string())?;
    let tools = session
        .peer()
        .list_all_tools()
        .await
        .map_err(|e| e.to_string())?;
    let took = started.elapsed();
    let _ = session.cancel().await;
    let _ = child.wait().await;
    Ok((tools.len(), took))
}

impl std::fmt::Debug for Connection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Connection")
            .field("id", &self.id)
            .field("alias", &self.alias)
            .field("endpoint", &self.endpoint)
            .field("ended", &self.end_reason())
            .finish()
    }
}

/// Sends `notifications/cancelled` if the caller stops waiting for a request.
struct CancelOnDrop {
    peer: Peer<RoleClient>,
    id: Option<RequestId>,
}

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        let (Some(id), Ok(runtime)) = (self.id.take(), tokio::runtime::Handle::try_current())
        else {
            return;
        };
        let peer = self.peer.clone();
        runtime.spawn(async move {
            let params = CancelledNotificationParam::new(
                Some(id),
                Some("the caller stopped waiting".into()),
            );
            let _ = peer
                .send_notification(CancelledNotification::new(params).into())
                .await;
        });
    }
}

impl Drop for Connection {
    fn drop(&mut self) {
        // The last handle is gone: nobody can use the session any more.
        let _ = self.stop.send(StopMode::Close);
    }
}
