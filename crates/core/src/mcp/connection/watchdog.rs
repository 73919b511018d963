//! One task per connection owns its session and process, and notices — without
//! polling — when either ends: the child exits, the transport closes, or we are
//! asked to stop. It records why, fires the connection's `ended` token (the
//! registry revokes on that), then reaps everything the server started.

use std::fmt;
use std::os::unix::process::ExitStatusExt as _;
use std::process::ExitStatus;
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use rmcp::model::{CancelledNotificationParam, RequestId};
use rmcp::service::{Peer, RoleClient, RunningService};
use rmcp::transport::common::client_side_sse::{ExponentialBackoff, SseRetryPolicy};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::client::HarnessClient;
use super::tasks::TaskBook;
use crate::mcp::process::ServerProcess;

/// The open subscription of a connection, so closing can end it first: a
/// server keeps serving an open `subscriptions/listen` after stdin closes
/// (rmcp servers wait up to 5 s for it), which would delay every close.
#[derive(Default)]
pub struct ListenSlot(Mutex<Option<RequestId>>);

impl ListenSlot {
    pub(super) fn set(&self, id: Option<RequestId>) {
        *self.0.lock().unwrap_or_else(|e| e.into_inner()) = id;
    }

    /// Whether a subscription is open now (its stream would end with the server).
    pub(super) fn is_open(&self) -> bool {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).is_some()
    }

    /// Cancels the open subscription, if any (`notifications/cancelled`).
    pub(in crate::mcp) async fn cancel(&self, peer: &Peer<RoleClient>) {
        let id = self.0.lock().unwrap_or_else(|e| e.into_inner()).take();
        if let Some(id) = id {
            let params = CancelledNotificationParam::new(Some(id), Some("closing".into()));
            let send = peer.notify_cancelled(params);
            let _ = tokio::time::timeout(Duration::from_millis(200), send).await;
        }
    }
}

/// How the owner wants a connection to stop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StopMode {
    /// stdin EOF, grace period, SIGTERM, grace period, SIGKILL.
    Close,
    /// SIGKILL the whole process group now.
    Kill,
}

/// How long a closed stdout waits for the process's exit status, so the end
/// reads "killed by signal 9" rather than "closed the transport".
pub(in crate::mcp) const EXIT_STATUS_WAIT: Duration = Duration::from_millis(500);

/// Why a connection ended. Built locally: exit statuses and signals, never the
/// server's own words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EndReason {
    /// We closed it.
    Closed,
    /// We killed it.
    Killed,
    /// The server process exited by itself.
    Exited(String),
    /// The transport closed (stdout EOF, HTTP session gone).
    TransportClosed,
    /// The server sent one message larger than its `max_message_bytes` (see `linecap`).
    MessageTooLarge(usize),
    /// An HTTP server's event stream broke and every reconnect failed.
    Unreachable,
    /// An HTTP server with no event stream open failed its liveness checks
    /// (`liveness`).
    NoAnswer,
    /// An HTTP server no longer accepts the sign-in and it could not be renewed.
    AuthLost,
    /// A WebSocket server broke the framing, closed the socket or went silent.
    WebSocket(super::ws::WsEnd),
}

impl fmt::Display for EndReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EndReason::Closed => f.write_str("the connection was closed"),
            EndReason::Killed => f.write_str("the server process was killed"),
            EndReason::Exited(how) => write!(f, "the server process {how}"),
            EndReason::TransportClosed => f.write_str("the server closed the transport"),
            EndReason::Unreachable => write!(
                f,
                "the server stopped answering: its event stream closed and {} reconnects failed",
                HTTP_RECONNECTS
            ),
            EndReason::NoAnswer => f.write_str(
                "the server stopped answering: two liveness checks in a row got no answer \
                 (liveness_ping_ms)",
            ),
            EndReason::AuthLost => f.write_str(
                "the server no longer accepts the sign-in (HTTP 401) and it could not be renewed",
            ),
            EndReason::WebSocket(end) => end.fmt(f),
            EndReason::MessageTooLarge(limit) => write!(
                f,
                "the server sent a message larger than {}, its max_message_bytes",
                mib(*limit)
            ),
        }
    }
}

/// "16 MiB", or the exact bytes when not a whole number of MiB.
fn mib(bytes: usize) -> String {
    if bytes.is_multiple_of(1024 * 1024) {
        format!("{} MiB", bytes / (1024 * 1024))
    } else {
        format!("{bytes} bytes")
    }
}

/// Reconnect attempts of a broken HTTP event stream before the server counts as gone.
pub const HTTP_RECONNECTS: usize = 4;

/// What the transport itself can tell the watchdog, besides the session ending.
#[derive(Debug, Default, Clone)]
pub struct TransportSignals {
    /// stdio: one message went over the line limit (see `linecap`).
    pub oversized: Arc<AtomicBool>,
    /// The cap `oversized` is about.
    pub max_message_bytes: usize,
    /// HTTP: the reconnect policy gave up on a broken event stream. rmcp keeps the
    /// session alive after that, so without this an HTTP server that dies is only
    /// noticed when a call times out.
    pub unreachable: CancellationToken,
    /// HTTP: the liveness checks of a connection with no event stream open
    /// got no answer (see `liveness`).
    pub no_answer: CancellationToken,
    /// HTTP with OAuth: a 401 the session could not overcome (the token was
    /// refused and could not be refreshed or replaced).
    pub auth_lost: CancellationToken,
    /// WebSocket: why the socket ended, when the wire knows.
    pub ws_end: Arc<OnceLock<super::ws::WsEnd>>,
}

/// rmcp's backoff for broken HTTP event streams, bounded, telling the watchdog
/// when it gives up (rmcp's default retries forever).
#[derive(Debug)]
pub struct BoundedReconnect {
    backoff: ExponentialBackoff,
    gave_up: CancellationToken,
}

impl BoundedReconnect {
    pub fn new(gave_up: CancellationToken) -> Self {
        let mut backoff = ExponentialBackoff::default();
        // 0.2 + 0.4 + 0.8 + 1.6 s: a restarting proxy gets three seconds.
        backoff.max_times = Some(HTTP_RECONNECTS);
        backoff.base_duration = Duration::from_millis(200);
        backoff.max_delay = Some(Duration::from_secs(2));
        Self { backoff, gave_up }
    }
}

impl SseRetryPolicy for BoundedReconnect {
    fn retry(&self, current_times: usize) -> Option<Duration> {
        let next = self.backoff.retry(current_times);
        if next.is_none() {
            self.gave_up.cancel();
        }
        next
    }
}

/// Shared between a connection handle and its watchdog.
#[derive(Debug, Default)]
pub struct Lifeline {
    /// Fired as soon as the end is known (before cleanup), so calls fail fast and
    /// tools are revoked promptly.
    pub ended: CancellationToken,
    pub reason: OnceLock<EndReason>,
    /// Fired when the process group is gone and the session closed.
    pub finished: CancellationToken,
}

impl Lifeline {
    fn end(&self, reason: EndReason) {
        let _ = self.reason.set(reason);
        self.ended.cancel();
    }
}

/// "exited with status 3" / "was killed by signal 9 (SIGKILL)".
pub fn describe_exit(status: &ExitStatus) -> String {
    if let Some(code) = status.code() {
        return format!("exited with status {code}");
    }
    match status.signal() {
        Some(sig) => {
            let name = nix::sys::signal::Signal::try_from(sig)
                .map(|s| s.as_str())
                .unwrap_or("unknown");
            format!("was killed by signal {sig} ({name})")
        }
        None => "exited".into(),
    }
}

/// What to end on the server before a connection closes.
pub struct Closing {
    /// Tasks still running: cancelled (`tasks/cancel`).
    pub tasks: Arc<TaskBook>,
    /// An open `subscriptions/listen`: cancelled.
    pub listening: Arc<ListenSlot>,
}

/// Runs until the connection ends, then cleans up.
pub async fn watch(
    session: RunningService<RoleClient, HarnessClient>,
    mut process: Option<ServerProcess>,
    mut stop: mpsc::UnboundedReceiver<StopMode>,
    life: Arc<Lifeline>,
    grace: Duration,
    signals: TransportSignals,
    closing: Closing,
) {
    let session_token = session.cancellation_token();
    let peer = session.peer().clone();
    let session_end = session.waiting();
    tokio::pin!(session_end);
    let mut session_done = false;
    let mut running_tasks = Vec::new();
    let mode = tokio::select! {
        requested = stop.recv() => {
            // All handles dropped also means: close.
            let mode = requested.unwrap_or(StopMode::Close);
            // Before the end is announced (the calls polling them stop then).
            running_tasks = closing.tasks.ids();
            life.end(match mode { StopMode::Close => EndReason::Closed, StopMode::Kill => EndReason::Killed });
            mode
        }
        _ = &mut session_end => {
            session_done = true;
            let reason = if signals.oversized.load(Ordering::Relaxed) {
                EndReason::MessageTooLarge(signals.max_message_bytes)
            } else if let Some(end) = signals.ws_end.get() {
                EndReason::WebSocket(*end)
            } else {
                // stdout EOF usually means the process is exiting: prefer its status.
                // The shim reports it only after sweeping the server's leftovers,
                // which takes a while on a loaded machine.
                let status = match process.as_mut() {
                    Some(p) => tokio::time::timeout(EXIT_STATUS_WAIT, p.wait()).await.ok().and_then(Result::ok),
                    None => None,
                };
                status.map_or(EndReason::TransportClosed, |s| EndReason::Exited(describe_exit(&s)))
            };
            life.end(reason);
            StopMode::Kill
        }
        status = wait(&mut process) => {
            life.end(EndReason::Exited(status));
            StopMode::Kill
        }
        _ = signals.unreachable.cancelled() => {
            life.end(EndReason::Unreachable);
            StopMode::Kill
        }
        _ = signals.no_answer.cancelled() => {
            life.end(EndReason::NoAnswer);
            StopMode::Kill
        }
        _ = signals.auth_lost.cancelled() => {
            life.end(EndReason::AuthLost);
            StopMode::Kill
        }
    };
    if mode == StopMode::Close {
        // Tell the server before the session goes: tasks still running, and
        // the subscription (a server may hold its exit for an open one).
        let cancelling = closing.tasks.take_cancelling();
        super::tasks::cancel_before_close(&peer, &running_tasks, cancelling).await;
        closing.listening.cancel(&peer).await;
    }
    if mode == StopMode::Kill
        && let Some(p) = &process
    {
        p.signal_group(nix::sys::signal::Signal::SIGKILL);
    }
    // Closing the session closes the server's stdin (or ends the HTTP session).
    session_token.cancel();
    if !session_done {
        let _ = tokio::time::timeout(grace, &mut session_end).await;
    }
    if let Some(mut p) = process {
        p.terminate(grace).await;
    }
    life.finished.cancel();
}

async fn wait(process: &mut Option<ServerProcess>) -> String {
    match process {
        Some(p) => match p.wait().await {
            Ok(status) => describe_exit(&status),
            Err(e) => format!("could not be waited for: {e}"),
        },
        None => std::future::pending().await,
    }
}
