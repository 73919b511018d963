//! A live, initialized protocol session with one server (stdio child or Streamable
//! HTTP), and the requests we make on it.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use rmcp::ServiceError;
use rmcp::model::{
    CancelledNotification, CancelledNotificationParam, ClientRequest, CustomRequest, RequestId,
    ServerResult,
};
use rmcp::service::{Peer, PeerRequestOptions, RoleClient, RunningService, serve_client};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::async_rw::AsyncRwTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use serde::Serialize;
use serde_json::Value;
use tokio::sync::mpsc;

use super::client::HarnessClient;
use super::error::{ConnectError, ConnectErrorCode as Code};
use super::events::{ConnectionId, EventSink};
use super::names::ServerAlias;
use super::process::{ServerProcess, StderrTail};
use super::spec::{Limits, ResolvedTransport, ServerSpec};
use super::vars::Vars;
use super::watchdog::{self, EndReason, Lifeline, StopMode};

/// Bytes of stderr kept per connection.
const STDERR_TAIL_BYTES: usize = 64 * 1024;
/// How long a failed start may wait for the server's exit status and last stderr.
const LAST_WORDS: Duration = Duration::from_millis(500);
/// Lines of stderr attached to a failed connection attempt.
const STDERR_LINES_ON_FAILURE: usize = 12;

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
}

/// A live connection. Cheap to share (`Arc`); the process and the session are
/// owned by its watchdog task, which ends them when asked or when they die.
pub struct Connection {
    id: ConnectionId,
    alias: ServerAlias,
    peer: Peer<RoleClient>,
    server: ServerIdentity,
    endpoint: Endpoint,
    opened: Instant,
    call_timeout: Duration,
    has_tools: bool,
    stderr: Arc<StderrTail>,
    stop: mpsc::UnboundedSender<StopMode>,
    life: Arc<Lifeline>,
}

/// Everything `open` needs.
pub struct OpenParams<'a> {
    pub id: ConnectionId,
    pub spec: &'a ServerSpec,
    pub limits: &'a Limits,
    pub vars: &'a Vars,
    pub events: EventSink,
}

type Session = RunningService<RoleClient, HarnessClient>;

/// Starts or reaches the server and runs `initialize` (bounded by the connect timeout).
pub async fn open(p: OpenParams<'_>) -> Result<Arc<Connection>, ConnectError> {
    let alias = p.spec.alias.clone();
    let transport = p.spec.transport.resolve(&alias, p.vars).map_err(|e| {
        ConnectError::new(
            Code::SpawnFailed,
            e,
            "set the variable in the environment the harness runs in",
        )
    })?;
    let handler = HarnessClient::new(alias.clone(), p.id, p.events);
    let timeout = p.spec.connect_timeout;
    let stderr = Arc::new(StderrTail::new(STDERR_TAIL_BYTES));
    let (session, process) = match transport {
        ResolvedTransport::Stdio(launch) => {
            let (mut process, pipes) =
                ServerProcess::spawn(&launch, Arc::clone(&stderr)).map_err(|e| {
                    ConnectError::new(
                        Code::SpawnFailed,
                        format!("could not start `{}`: {e}", launch.command),
                        "check `command`, `args` and `cwd` of this server in the config",
                    )
                })?;
            let transport = AsyncRwTransport::new_client(pipes.stdout, pipes.stdin);
            let session = tokio::select! {
                result = tokio::time::timeout(timeout, serve_client(handler, transport)) => result,
                status = process.wait() => return Err(exited_during_init(status, &stderr).await),
            };
            if !matches!(session, Ok(Ok(_))) {
                // A broken pipe or EOF usually means the server died: say how.
                if let Ok(status) = tokio::time::timeout(LAST_WORDS, process.wait()).await {
                    return Err(exited_during_init(status, &stderr).await);
                }
            }
            (finish_init(session, timeout, &stderr)?, Some(process))
        }
        ResolvedTransport::Http { url, headers } => {
            let config = http_config(&url, &headers)?;
            let transport = StreamableHttpClientTransport::from_config(config);
            let session = tokio::time::timeout(timeout, serve_client(handler, transport)).await;
            (finish_init(session, timeout, &stderr)?, None)
        }
    };
    let info = session.peer().peer_info();
    let server = ServerIdentity {
        name: info
            .as_ref()
            .and_then(|i| i.server_info.as_ref())
            .map(|s| s.name.clone())
            .unwrap_or_default(),
        version: info
            .as_ref()
            .and_then(|i| i.server_info.as_ref())
            .map(|s| s.version.clone())
            .unwrap_or_default(),
        protocol_version: info
            .as_ref()
            .map(|i| i.protocol_version.to_string())
            .unwrap_or_default(),
    };
    let has_tools = info
        .as_ref()
        .is_some_and(|i| i.capabilities.tools.is_some());
    let endpoint = match &process {
        Some(p) => Endpoint::Stdio { pid: p.pid() },
        None => Endpoint::Http,
    };
    let (stop, stop_rx) = mpsc::unbounded_channel();
    let life = Arc::new(Lifeline::default());
    let peer = session.peer().clone();
    tokio::spawn(watchdog::watch(
        session,
        process,
        stop_rx,
        Arc::clone(&life),
        p.limits.close_grace,
    ));
    Ok(Arc::new(Connection {
        id: p.id,
        alias,
        peer,
        server,
        endpoint,
        opened: Instant::now(),
        call_timeout: p.spec.call_timeout,
        has_tools,
        stderr,
        stop,
        life,
    }))
}

fn finish_init<E: std::fmt::Display>(
    result: Result<Result<Session, E>, tokio::time::error::Elapsed>,
    timeout: Duration,
    stderr: &StderrTail,
) -> Result<Session, ConnectError> {
    match result {
        Ok(Ok(session)) => Ok(session),
        Ok(Err(e)) => Err(init_failed(format!("initialize failed: {e}"), stderr)),
        Err(_) => Err(with_stderr(
            ConnectError::new(
                Code::McpTimeout,
                format!(
                    "the server did not complete initialize within {} ms",
                    timeout.as_millis()
                ),
                "check that the command starts an MCP server on stdio, or raise connect_timeout_ms",
            ),
            stderr,
        )),
    }
}

async fn exited_during_init(
    status: std::io::Result<std::process::ExitStatus>,
    stderr: &StderrTail,
) -> ConnectError {
    stderr.wait_eof(LAST_WORDS).await;
    let how = status
        .map(|s| watchdog::describe_exit(&s))
        .unwrap_or_else(|e| format!("could not be waited for ({e})"));
    init_failed(format!("the server {how} during initialize"), stderr)
}

fn init_failed(message: String, stderr: &StderrTail) -> ConnectError {
    with_stderr(
        ConnectError::new(
            Code::InitializeFailed,
            message,
            "check the server's command and arguments; its stderr tail is shown with this error",
        ),
        stderr,
    )
}

fn with_stderr(mut error: ConnectError, stderr: &StderrTail) -> ConnectError {
    error.server_output = stderr.last_lines(STDERR_LINES_ON_FAILURE);
    error
}

fn http_config(
    url: &str,
    headers: &[(String, String)],
) -> Result<StreamableHttpClientTransportConfig, ConnectError> {
    // reqwest is built without a default TLS provider; install ring once per process.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let bad = |what: String| {
        ConnectError::new(
            Code::SpawnFailed,
            what,
            "fix `url` or `headers` of this server in the config",
        )
    };
    if !(url.starts_with("http://") || url.starts_with("https://")) {
        return Err(bad("the url must start with http:// or https://".into()));
    }
    let mut map = HashMap::new();
    for (name, value) in headers {
        let name = http::HeaderName::try_from(name.as_str())
            .map_err(|e| bad(format!("header `{name}`: {e}")))?;
        let value = http::HeaderValue::try_from(value.as_str()).map_err(|_| {
            bad(format!(
                "header `{name}` has a value that is not a valid HTTP header value"
            ))
        })?;
        map.insert(name, value);
    }
    Ok(StreamableHttpClientTransportConfig::with_uri(url).custom_headers(map))
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

    fn map_error(&self, error: ServiceError) -> RequestError {
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
