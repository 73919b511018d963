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
    CancelledNotification, CancelledNotificationParam, ClientRequest, CustomRequest, CustomResult,
    ProgressToken, RequestId, ServerResult,
};
use rmcp::service::{Peer, PeerRequestOptions, RoleClient};
use serde_json::Value;
use tokio::sync::{mpsc, watch};

use self::client::HandlerParts;
use self::negotiate::Era;
use self::watchdog::{EndReason, Lifeline, StopMode};
use super::events::ConnectionId;
use super::names::ServerAlias;
use super::process::StderrTail;
use super::rawtap::RawTap;

pub(super) mod client;
pub(super) mod initfail;
mod lane;
pub(in crate::mcp) mod listen;
mod liveness;
pub mod negotiate;
pub(super) mod open;
mod outcome;
mod probe;
mod rawresult;
mod request;
pub mod tasks;
pub mod watchdog;
mod wire;
pub mod ws;

pub use outcome::{AuthDenial, Endpoint, RequestError, ServerIdentity};

/// The result JSON of a request, however rmcp parsed it.
pub(super) fn raw(result: ServerResult) -> Value {
    match result {
        ServerResult::CustomResult(CustomResult(raw)) => raw,
        other => serde_json::to_value(other).unwrap_or(Value::Null),
    }
}

/// The answer to a [`Connection::request_long`].
pub(super) struct Long {
    pub result: ServerResult,
    /// What the stdio gate cut from it (long texts, in files).
    pub spilled: Option<super::spill::Spilled>,
    /// Keeps the call's progress token routed to the call.
    pub route: Option<self::client::ProgressRoute>,
}

/// A live connection. Cheap to share (`Arc`); the process and the session are
/// owned by its watchdog task, which ends them when asked or when they die.
pub struct Connection {
    pub(super) id: ConnectionId,
    pub(super) alias: ServerAlias,
    pub(super) peer: Peer<RoleClient>,
    /// The fast lane for raw requests (stdio connections; see `lane`).
    lane: Option<self::lane::Lane>,
    pub(super) server: ServerIdentity,
    pub(super) endpoint: Endpoint,
    pub(super) opened: Instant,
    pub(super) call_timeout: Duration,
    pub(super) has_tools: bool,
    /// Whether the server declared resources / prompts.
    pub(super) has_resources: bool,
    pub(super) has_prompts: bool,
    /// Whether the server declared `completions` (`completion/complete`).
    pub(super) has_completions: bool,
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
    /// Fired when an HTTP server with no event stream open fails its
    /// liveness checks (see `liveness`).
    pub(super) no_answer: tokio_util::sync::CancellationToken,
    /// HTTP: the GET event streams open now.
    pub(super) event_streams: Arc<super::rawhttp::OpenStreams>,
    /// The open tool-list subscription (ended first when the connection closes).
    pub(super) listening: Arc<self::watchdog::ListenSlot>,
    /// Resources watched on a 2026-07-28 connection: one `subscriptions/listen`
    /// per URI, ended by its token (`listen::unwatch_resource`).
    pub(super) watches:
        std::sync::Mutex<std::collections::HashMap<String, tokio_util::sync::CancellationToken>>,
    /// Tasks running on this connection (cancelled when it closes).
    pub(super) tasks: Arc<self::tasks::TaskBook>,
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

    pub fn has_completions(&self) -> bool {
        self.has_completions
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
