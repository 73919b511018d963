//! Opening a connection: start the child (or reach the URL), run `initialize`
//! within the connect timeout, and hand the session to its watchdog. A failed
//! start says how the server ended and carries its last stderr lines.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::AtomicU64;
use std::time::{Duration, Instant};

use rmcp::service::{ClientInitializeError, RoleClient, RunningService, serve_client};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::async_rw::AsyncRwTransport;
use rmcp::transport::streamable_http_client::{
    StreamableHttpClientTransportConfig, StreamableHttpError,
};
use tokio::sync::{mpsc, watch};

use super::auth::budget::Elapsed;
use super::auth::{AuthContext, AuthSession, Budget, Failure};
use super::client::HarnessClient;
use super::connection::{Connection, Endpoint, ServerIdentity};
use super::elicit::Elicitor;
use super::error::{ConnectError, ConnectErrorCode as Code};
use super::events::{ConnectionId, EventSink};
use super::linecap::{LineCap, MAX_MESSAGE_BYTES};
use super::process::{ServerProcess, StderrTail};
use super::spec::{Limits, ResolvedTransport, ServerSpec};
use super::vars::Vars;
use super::watchdog::{self, BoundedReconnect, Lifeline, TransportSignals};

/// Bytes of stderr kept per connection.
const STDERR_TAIL_BYTES: usize = 64 * 1024;
/// How long a failed start may wait for the server's exit status and last stderr.
const LAST_WORDS: Duration = Duration::from_millis(500);
/// Lines of stderr attached to a failed connection attempt.
const STDERR_LINES_ON_FAILURE: usize = 12;

/// Everything `open` needs.
pub struct OpenParams<'a> {
    pub id: ConnectionId,
    pub spec: &'a ServerSpec,
    pub limits: &'a Limits,
    pub vars: &'a Vars,
    pub events: EventSink,
    /// Answers the server's elicitation requests (and decides whether the
    /// capability is advertised at all).
    pub elicitor: Arc<dyn Elicitor>,
    /// OAuth for HTTP servers: the token store and who signs in.
    pub auth: AuthContext,
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
    let (list_changed, list_changes) = watch::channel(0u64);
    let handler = HarnessClient::new(alias.clone(), p.id, p.events, list_changed, p.elicitor);
    let timeout = p.spec.connect_timeout;
    let stderr = Arc::new(StderrTail::new(STDERR_TAIL_BYTES));
    let mut signals = TransportSignals::default();
    let mut budget = Budget::default();
    let mut auth = None;
    let (session, process) = match transport {
        ResolvedTransport::Stdio(launch) => {
            let (mut process, pipes) = ServerProcess::spawn(&launch, Arc::clone(&stderr))
                .await
                .map_err(|e| {
                    ConnectError::new(
                        Code::SpawnFailed,
                        format!("could not start `{}`: {e}", launch.command),
                        "check `command`, `args` and `cwd` of this server in the config",
                    )
                })?;
            let stdout = LineCap::new(
                pipes.stdout,
                MAX_MESSAGE_BYTES,
                Arc::clone(&signals.oversized),
            );
            let transport = AsyncRwTransport::new_client(stdout, pipes.stdin);
            let session = tokio::select! {
                result = tokio::time::timeout(timeout, serve_client(handler, transport)) => result.map_err(|_| Elapsed),
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
            let mut config = http_config(&url, &headers)?;
            config.retry_config = Arc::new(BoundedReconnect::new(signals.unreachable.clone()));
            let oauth = super::auth::for_connection(
                alias.as_str(),
                &url,
                &headers,
                &p.spec.transport.auth().cloned().unwrap_or_default(),
                p.vars,
                timeout,
                &p.auth,
            )
            .map_err(|e| auth_failed(alias.as_str(), e.into()))?;
            if let Some(session) = &oauth.session {
                signals.auth_lost = session.lost.clone();
            }
            budget = oauth.budget.clone();
            auth = oauth.session.clone();
            let transport = StreamableHttpClientTransport::with_client(oauth.client, config);
            let session = match budget
                .timeout(timeout, serve_client(handler, transport))
                .await
            {
                Ok(Err(e)) => {
                    return Err(http_init_failed(&e, &url, alias.as_str(), auth.as_deref()));
                }
                other => other,
            };
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
        signals,
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
        list_changes,
        listed: AtomicU64::new(0),
        auth,
        budget,
    }))
}

/// An OAuth failure as a connect error: the alias ends up `auth_required`.
pub(super) fn auth_failed(alias: &str, failure: Failure) -> ConnectError {
    let mut error = ConnectError::new(
        Code::AuthRequired,
        failure.error.to_string(),
        failure.error.hint(alias),
    );
    error.server_output = failure.server_output;
    error
}

fn finish_init<E: std::fmt::Display>(
    result: Result<Result<Session, E>, Elapsed>,
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

/// An HTTP server that did not initialize: authorization, or what the transport
/// hit (refused, an HTTP status), without rmcp's type names.
fn http_init_failed(
    error: &ClientInitializeError,
    url: &str,
    alias: &str,
    auth: Option<&AuthSession>,
) -> ConnectError {
    if error.is_authorization_required() {
        if let Some(failure) = auth.and_then(|a| a.failure()) {
            return auth_failed(alias, failure);
        }
        let denial = super::connection::AuthDenial::plain(alias);
        return ConnectError::new(
            Code::AuthRequired,
            format!("{url} requires authorization (HTTP 401/403) and refused the request"),
            denial.hint,
        );
    }
    let what = match error {
        ClientInitializeError::TransportError { error, .. } => {
            // rmcp's `Client(e)` does not name `e` as its source: unwrap it by hand
            // so "connection refused" reaches the operator.
            match error
                .error
                .downcast_ref::<StreamableHttpError<reqwest::Error>>()
            {
                Some(StreamableHttpError::Client(e)) => {
                    format!("could not reach the server: {}", error_chain(e))
                }
                _ => error_chain(error.error.as_ref()),
            }
        }
        other => other.to_string(),
    };
    ConnectError::new(
        Code::InitializeFailed,
        format!("initialize failed: {what}"),
        "check `url`, and that an MCP server speaking Streamable HTTP is running there",
    )
}

/// "outer: cause: root cause", each message once.
pub(super) fn error_chain(error: &(dyn std::error::Error + 'static)) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut next = Some(error);
    while let Some(current) = next {
        let text = current.to_string();
        if !parts.iter().any(|p| p.contains(&text)) {
            parts.push(text);
        }
        next = current.source();
    }
    parts.join(": ")
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
