//! A live, initialized protocol session with one server (stdio child or Streamable
//! HTTP), and the requests we make on it. Opening one is `open.rs`.
//!
//! Outside `mcp/` a `Connection` can only be looked at (who, since when, how it
//! ended, its stderr): sending, closing and killing are crate-private to `mcp/`,
//! so nothing that holds a snapshot can reach a server around the call path.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use rmcp::ServiceError;
use rmcp::model::{
    CancelledNotification, CancelledNotificationParam, ClientRequest, CustomRequest, ProgressToken,
    RequestId, ServerResult,
};
use rmcp::service::{Peer, PeerRequestOptions, RoleClient};
use serde::Serialize;
use serde_json::Value;
use tokio::sync::{mpsc, watch};

use super::client::HandlerParts;
use super::events::ConnectionId;
use super::names::ServerAlias;
use super::negotiate::Era;
use super::process::StderrTail;
use super::rawtap::RawTap;
use super::watchdog::{EndReason, Lifeline, StopMode};

pub(super) use super::open::{OpenParams, open};

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
    /// An HTTP server refused the request (401/403) and signing in did not help.
    Unauthorized(AuthDenial),
}

/// Why a server's refusal could not be overcome, in the operator's words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuthDenial {
    pub message: String,
    pub hint: String,
    /// What the authorization server said (untrusted, operator-only).
    pub server_output: Vec<String>,
    /// A 403 asking for more scope: only this operation is refused, the
    /// connection stays usable.
    pub more_scope: bool,
}

impl AuthDenial {
    /// A refusal of a server without OAuth (or before any OAuth step ran).
    pub fn plain(alias: &str) -> Self {
        Self {
            message: "the server requires authorization (HTTP 401/403) and refused the request"
                .into(),
            hint: format!(
                "give this server a token: headers = {{ Authorization = \"Bearer ${{TOKEN}}\" }}, \
                 or sign in with OAuth: auth = \"oauth\" under [servers.{alias}]"
            ),
            server_output: Vec::new(),
            more_scope: false,
        }
    }

    /// From what the OAuth session recorded.
    pub fn from_failure(alias: &str, failure: super::auth::Failure) -> Self {
        let more_scope = matches!(
            failure.error,
            super::auth::OAuthError::NeedsSignIn { step_up: true, .. }
                | super::auth::OAuthError::StepUpLimit { .. }
        );
        Self {
            message: failure.error.to_string(),
            hint: failure.error.hint(alias),
            server_output: failure.server_output,
            more_scope,
        }
    }
}

impl RequestError {
    /// Why the connection is gone, for `Lost` and `Unauthorized`.
    pub fn lost_detail(&self) -> Option<String> {
        match self {
            RequestError::Lost(detail) => Some(detail.clone()),
            RequestError::Unauthorized(denial) => Some(denial.message.clone()),
            _ => None,
        }
    }
}

/// The answer to a [`Connection::request_long`].
pub(super) struct Long {
    pub result: ServerResult,
    /// What the stdio gate cut from it (long texts, in files).
    pub spilled: Option<super::spill::Spilled>,
    /// Keeps the call's progress token routed to the call.
    pub route: Option<super::client::ProgressRoute>,
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
    /// Whether the server declared resources / prompts.
    pub(super) has_resources: bool,
    pub(super) has_prompts: bool,
    /// Which protocol era the connection speaks.
    pub(super) era: Era,
    /// Tool-list changes come through `subscriptions/listen` (2026-07-28 and the
    /// server declared `tools.listChanged`).
    pub(super) listens: bool,
    /// What the connection's client handlers share (events, the elicitor).
    pub(super) parts: HandlerParts,
    /// Raw answers for the listing (see `rawtap`).
    pub(super) tap: Arc<RawTap>,
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
    /// One listing at a time (the raw tap is per connection).
    pub(super) listing: tokio::sync::Mutex<()>,
    /// When the current tool list expires (`ttlMs` of its pages), if it does.
    pub(super) list_expires: std::sync::Mutex<Option<tokio::time::Instant>>,
    /// Fired when an HTTP server stops answering (the watchdog ends the connection).
    pub(super) unreachable: tokio_util::sync::CancellationToken,
    /// The open tool-list subscription (ended first when the connection closes).
    pub(super) listening: Arc<super::listen::ListenSlot>,
    /// Tasks running on this connection (cancelled when it closes).
    pub(super) tasks: Arc<super::tasks::TaskBook>,
    /// How long a task may run (`task_timeout_ms`), and which tools run as tasks.
    pub(super) task_timeout: Duration,
    pub(super) task_mode: super::spec::TaskMode,
    /// The OAuth session of an HTTP server that uses it.
    pub(super) auth: Option<Arc<super::auth::AuthSession>>,
    /// The connect deadline's clock (paused while a person signs in).
    pub(super) budget: super::auth::Budget,
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

    /// Whether the tool list's `ttlMs` has run out at `now`.
    pub(super) fn list_expired(&self, now: tokio::time::Instant) -> bool {
        self.list_expires
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .is_some_and(|at| at <= now)
    }

    /// Tasks running on this connection now.
    pub fn running_tasks(&self) -> usize {
        self.tasks.len()
    }

    /// Whether the server declared the tools capability at all.
    pub fn has_tools(&self) -> bool {
        self.has_tools
    }

    pub fn has_resources(&self) -> bool {
        self.has_resources
    }

    pub fn has_prompts(&self) -> bool {
        self.has_prompts
    }

    /// The protocol era of this connection.
    pub fn era(&self) -> Era {
        self.era
    }

    /// Whether requests are stateless (2026-07-28).
    pub fn is_stateless(&self) -> bool {
        self.era == Era::Stateless
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
    pub(super) fn kill_process_group(&self) {
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
    /// of the whole group). Never blocks the caller. Only the hub closes: it
    /// revokes the tools first.
    pub(super) fn close(&self) {
        let _ = self.stop.send(StopMode::Close);
    }

    /// Kills the server's process group at once (after a timeout, or by the operator).
    pub(super) fn kill(&self) {
        let _ = self.stop.send(StopMode::Kill);
    }

    /// Sends one request and waits for its answer, at most `timeout`. A timeout or
    /// a dropped future sends `notifications/cancelled` for the request.
    ///
    /// Private to `mcp/`: from outside, the only way to reach a server is the
    /// validated call path (`Hub::call`: snapshot, schema, policy, approval).
    pub(super) async fn request(
        &self,
        method: &str,
        params: Value,
        timeout: Duration,
    ) -> Result<ServerResult, RequestError> {
        self.request_with_id(method, params, timeout, |_| {}).await
    }

    /// [`Self::request`]; `sent` learns the JSON-RPC id the request went out with.
    async fn request_with_id(
        &self,
        method: &str,
        params: Value,
        timeout: Duration,
        sent: impl FnOnce(&RequestId),
    ) -> Result<ServerResult, RequestError> {
        let options = PeerRequestOptions::with_timeout(timeout);
        self.request_with_options(method, params, options, |id, _| sent(id))
            .await
    }

    /// The one way a request goes out; `sent` learns its JSON-RPC id and
    /// progress token.
    async fn request_with_options(
        &self,
        method: &str,
        params: Value,
        options: PeerRequestOptions,
        sent: impl FnOnce(&RequestId, &ProgressToken),
    ) -> Result<ServerResult, RequestError> {
        if self.end_reason().is_some() {
            return Err(self.ended_error());
        }
        let request = ClientRequest::CustomRequest(CustomRequest::new(method, Some(params)));
        let handle = match self.peer.send_request_with_option(request, options).await {
            Ok(handle) => handle,
            Err(e) => {
                return match self.map_error(e) {
                    RequestError::Lost(_) => Err(self.lost_once_ended().await),
                    other => Err(other),
                };
            }
        };
        sent(&handle.id, &handle.progress_token);
        let mut guard = CancelOnDrop {
            peer: self.peer.clone(),
            id: Some(handle.id.clone()),
        };
        let result = tokio::select! {
            result = handle.await_response() => result.map_err(|e| self.map_error(e)),
            _ = self.ended() => Err(self.ended_error()),
        };
        // await_response already sent the cancellation on timeout; a dead transport needs none.
        guard.id = None;
        if let Err(RequestError::Lost(_)) = result {
            return Err(self.lost_once_ended().await);
        }
        result
    }

    /// A request whose answer may be large or slow (`tools/call`,
    /// `resources/read`, `prompts/get`, a task's outcome): what the stdio gate
    /// cut from the response comes with it, and, for a call (`call` names it),
    /// progress notifications restart the timer (bounded by `max_call`) and are
    /// told apart by `call`. The route of the call's progress token lives as long
    /// as the returned [`Long::route`] (a task keeps it for its whole run).
    pub(super) async fn request_long(
        &self,
        method: &str,
        params: Value,
        timeout: Duration,
        call: Option<&str>,
    ) -> Result<Long, RequestError> {
        let mut options = PeerRequestOptions::with_timeout(timeout);
        if call.is_some() && self.reset_timeout_on_progress {
            options = options
                .reset_timeout_on_progress()
                .with_max_total_timeout(self.max_call.max(timeout));
        }
        let key = std::sync::Mutex::new(None);
        let route = std::sync::Mutex::new(None);
        let started = Instant::now();
        let result = self
            .request_with_options(method, params, options, |id, token| {
                *key.lock().unwrap_or_else(|e| e.into_inner()) =
                    Some(super::spill::lexer::id_key(id.to_string().as_bytes()));
                if let Some(call) = call {
                    *route.lock().unwrap_or_else(|e| e.into_inner()) =
                        Some(super::client::ProgressRoute::register(
                            &self.parts.routes,
                            token.0.to_string(),
                            call.to_string(),
                        ));
                }
            })
            .await;
        let spilled = key
            .into_inner()
            .unwrap_or_else(|e| e.into_inner())
            .and_then(|key| self.spills.take(&key));
        match result {
            // Which bound ended it: the idle timer, or `max_call` after progress.
            Err(RequestError::Timeout(after))
                if call.is_some() && started.elapsed() >= self.max_call =>
            {
                Err(RequestError::Timeout(after.max(self.max_call)))
            }
            Err(e) => Err(e),
            Ok(result) => Ok(Long {
                result,
                spilled,
                route: route.into_inner().unwrap_or_else(|e| e.into_inner()),
            }),
        }
    }

    /// The transport usually closes a moment before the watchdog has the exit
    /// status (it waits up to `EXIT_STATUS_WAIT` for it); wait longer than that
    /// so the error can say how the server ended.
    async fn lost_once_ended(&self) -> RequestError {
        let wait = super::watchdog::EXIT_STATUS_WAIT * 2;
        let _ = tokio::time::timeout(wait, self.ended()).await;
        self.ended_error()
    }

    /// [`Self::request`], also returning the answer's `result` exactly as the
    /// server sent it (when the transport saw it; see `rawtap`).
    pub(super) async fn request_raw(
        &self,
        method: &str,
        params: Value,
        timeout: Duration,
    ) -> Result<(ServerResult, Option<Value>), RequestError> {
        let _armed = self.tap.arm();
        let id = std::sync::Mutex::new(None);
        let result = self
            .request_with_id(method, params, timeout, |sent| {
                *id.lock().unwrap_or_else(|e| e.into_inner()) = Some(sent.clone());
            })
            .await?;
        let raw = id
            .into_inner()
            .unwrap_or_else(|e| e.into_inner())
            .and_then(|id| self.tap.result_for(&id));
        Ok((result, raw))
    }

    /// Why a request cannot be answered on an ended connection: the sign-in
    /// was refused for good, or the connection was lost (and how).
    fn ended_error(&self) -> RequestError {
        match self.end_reason() {
            Some(EndReason::AuthLost) => RequestError::Unauthorized(self.denial()),
            _ => RequestError::Lost(self.lost_detail()),
        }
    }

    fn map_error(&self, error: ServiceError) -> RequestError {
        if error.is_authorization_required() {
            return RequestError::Unauthorized(self.denial());
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

    /// Why the server's refusal stands, from the OAuth session if there is one.
    pub(super) fn denial(&self) -> AuthDenial {
        match self.auth.as_ref().and_then(|s| s.failure()) {
            Some(f) => AuthDenial::from_failure(self.alias.as_str(), f),
            None => AuthDenial::plain(self.alias.as_str()),
        }
    }

    /// The OAuth session (HTTP servers that use OAuth).
    pub fn auth(&self) -> Option<&Arc<super::auth::AuthSession>> {
        self.auth.as_ref()
    }

    fn lost_detail(&self) -> String {
        self.end_reason()
            .map(ToString::to_string)
            .unwrap_or_else(|| "the transport closed".into())
    }
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
