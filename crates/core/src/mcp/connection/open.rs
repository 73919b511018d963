//! Opening a connection: start the child (or reach the URL), run `initialize`
//! within the connect timeout, and hand the session to its watchdog. A failed
//! start says how the server ended and carries its last stderr lines.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::AtomicU64;
use std::time::{Duration, Instant};

use rmcp::service::ClientInitializeError;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use serde_json::{Map, Value};
use tokio::sync::{mpsc, watch};

use super::client::HandlerParts;
use super::initfail::{self, Via};
use super::negotiate::{self, Era, Failure as Unnegotiated, Plan};
use super::tasks::TaskBook;
use super::watchdog::{self, BoundedReconnect, Closing, Lifeline, ListenSlot, TransportSignals};
use crate::mcp::auth::{AuthContext, AuthSession, Budget, Failure};
use crate::mcp::connection::{Connection, Endpoint, ServerIdentity};
use crate::mcp::elicit::Elicitor;
use crate::mcp::error::{ConnectError, ConnectErrorCode as Code};
use crate::mcp::events::ConnectionId;
use crate::mcp::linecap::LineCap;
use crate::mcp::process::{ServerProcess, StderrTail};
use crate::mcp::rawhttp::{OpenStreams, RawHttpClient};
use crate::mcp::rawtap::RawTap;
use crate::mcp::sink::EventSink;
use crate::mcp::spec::{Limits, ResolvedTransport, ServerSpec};
use crate::mcp::spill::SpillTable;
use crate::mcp::spill::gate::Gate;
use crate::mcp::spill::lexer::{Caps, Lexer};
use crate::mcp::vars::Vars;

/// Bytes of stderr kept per connection.
const STDERR_TAIL_BYTES: usize = 64 * 1024;
/// How long a failed start may wait for the server's exit status and last stderr.
const LAST_WORDS: Duration = Duration::from_millis(500);
/// A base64 payload (image, audio, blob) larger than this is left out of a
/// message: no model takes one that large (the Messages API stops at 5 MiB).
const BINARY_CAP: usize = 8 * 1024 * 1024;

/// Everything `open` needs.
pub struct OpenParams<'a> {
    pub id: ConnectionId,
    pub spec: &'a ServerSpec,
    pub limits: &'a Limits,
    pub vars: &'a Vars,
    pub events: EventSink,
    /// Answers the server's elicitation requests.
    pub elicitor: Arc<dyn Elicitor>,
    /// Who hears which call's progress.
    pub taps: crate::mcp::taps::CallTaps,
    /// Where long texts cut from this connection's messages wait to be claimed.
    pub spill_dir: std::path::PathBuf,
    /// The era the last connect of this alias found, if any (no re-probe of a
    /// server known to be legacy).
    pub known_era: Option<Era>,
    /// OAuth for HTTP servers: the token store and who signs in.
    pub auth: AuthContext,
}

/// Starts or reaches the server and runs `initialize` (bounded by the connect timeout).
pub async fn open(p: OpenParams<'_>) -> Result<Arc<Connection>, ConnectError> {
    let alias = p.spec.alias.clone();
    let transport = p.spec.transport.resolve(&alias, p.vars).map_err(|e| {
        let hint = match e.problem {
            crate::mcp::vars::VarError::InsecureHttp(_) => {
                "use an https:// URL, or set `allow_insecure_http = true` on this server"
            }
            _ => "set the variable in the environment the harness runs in",
        };
        ConnectError::new(Code::SpawnFailed, e.to_string(), hint)
    })?;
    let (list_changed, list_changes) = watch::channel(0u64);
    let parts = HandlerParts {
        alias: alias.clone(),
        id: p.id,
        events: p.events,
        list_changed: Arc::new(list_changed),
        elicitor: p.elicitor,
        taps: p.taps,
        routes: super::client::ProgressRoutes::default(),
    };
    let plan = Plan::new(p.spec.protocol, p.known_era);
    let timeout = p.spec.connect_timeout;
    let stderr = Arc::new(StderrTail::new(STDERR_TAIL_BYTES));
    let mut signals = TransportSignals {
        max_message_bytes: p.spec.max_message_bytes,
        ..TransportSignals::default()
    };
    let mut budget = Budget::default();
    let mut auth = None;
    let tap = Arc::new(RawTap::default());
    let spills = Arc::new(SpillTable::new(p.spill_dir.clone()));
    let mut lane_io = None;
    let event_streams = Arc::new(OpenStreams::default());
    let ((session, era), process) = match transport {
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
                p.spec.max_message_bytes,
                Arc::clone(&signals.oversized),
            )
            .with_tap(Arc::clone(&tap));
            // Long strings are cut before rmcp buffers the line (see `spill`).
            let caps = Caps {
                text: p.limits.max_result_bytes,
                binary: BINARY_CAP,
                other: p.limits.max_result_bytes.max(1024 * 1024),
                state: p.limits.max_request_state_bytes,
            };
            let stdout = Gate::new(stdout, Lexer::new(caps, Arc::clone(&spills)));
            // Answers to raw requests are parsed once, as JSON (see `wire`), and
            // the harness's own go by the fast lane (see `lane`).
            let io = super::lane::LaneIo::new(pipes.stdin);
            lane_io = Some(Arc::clone(&io));
            let transport = super::wire::StdioWire::new(stdout, io, p.spec.max_message_bytes);
            let probe_window = p.limits.discover_timeout.min(timeout / 2);
            let negotiation = negotiate::over_stdio(transport, plan, &parts, probe_window);
            let negotiation = tokio::time::timeout(timeout, negotiation);
            tokio::pin!(negotiation);
            let session = tokio::select! {
                result = &mut negotiation => result,
                status = process.wait() => {
                    // A server may answer (say, -32022 for a revision it refuses) and
                    // exit at once: the answer already in the pipe is the cause, not
                    // the exit that raced it.
                    match tokio::time::timeout(LAST_WORDS, &mut negotiation).await {
                        Ok(Ok(Err(Unnegotiated::Mismatch(message)))) => {
                            return Err(mismatch(message, &stderr));
                        }
                        Ok(Ok(Err(Unnegotiated::Init(e)))) if initfail::is_answer(&e) => {
                            return Err(initfail::failed(&e, Via::Stdio, &stderr));
                        }
                        _ => return Err(exited_during_init(status, &stderr).await),
                    }
                }
            };
            let session = match session {
                Ok(Ok(session)) => session,
                // The deadline wins. Giving up dropped the handshake, which closed
                // the server's stdin: an exit that follows is our doing, not the cause.
                Err(_) => return Err(initfail::timed_out(timeout, &stderr)),
                Ok(Err(Unnegotiated::Mismatch(message))) => return Err(mismatch(message, &stderr)),
                Ok(Err(Unnegotiated::Init(e))) => {
                    // A broken pipe or EOF usually means the server died: say how.
                    // (An answer, such as a JSON-RPC error, is the cause itself.)
                    if !initfail::is_answer(&e)
                        && let Ok(status) = tokio::time::timeout(LAST_WORDS, process.wait()).await
                    {
                        return Err(exited_during_init(status, &stderr).await);
                    }
                    return Err(initfail::failed(&e, Via::Stdio, &stderr));
                }
            };
            (session, Some(process))
        }
        ResolvedTransport::Http { url, headers } => {
            let mut config = http_config(&url, &headers)?;
            config.max_sse_event_size = p.spec.max_message_bytes;
            config.max_json_response_size = p.spec.max_message_bytes;
            config.retry_config = Arc::new(BoundedReconnect::new(signals.unreachable.clone()));
            let oauth = crate::mcp::auth::for_connection(
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
            let client =
                RawHttpClient::new(oauth.client, Arc::clone(&tap), Arc::clone(&event_streams));
            let transport =
                || StreamableHttpClientTransport::with_client(client.clone(), config.clone());
            let negotiation = negotiate::over_http(transport, plan, &parts);
            // The clock stops while a person signs in (the operator asked to).
            let session = match budget.timeout(timeout, negotiation).await {
                Ok(Ok(session)) => session,
                Ok(Err(Unnegotiated::Init(e))) => {
                    return Err(http_init_failed(
                        &e,
                        &url,
                        &stderr,
                        alias.as_str(),
                        auth.as_deref(),
                    ));
                }
                Ok(Err(Unnegotiated::Mismatch(message))) => {
                    return Err(mismatch(message, &stderr));
                }
                Err(_) => {
                    return Err(match auth.as_ref().and_then(|a| a.cut_short(timeout)) {
                        Some(failure) => auth_failed(alias.as_str(), failure),
                        None => initfail::timed_out(timeout, &stderr),
                    });
                }
            };
            (session, None)
        }
        ResolvedTransport::WebSocket { url, headers } => {
            let opening = async {
                let ws = super::ws::WsSignals {
                    end: Arc::clone(&signals.ws_end),
                    oversized: Arc::clone(&signals.oversized),
                };
                let wire = super::ws::connect(
                    &url,
                    &headers,
                    p.spec.max_message_bytes,
                    p.spec.idle_timeout,
                    ws,
                )
                .await?;
                // One socket, as one pair of pipes: the probe and a handshake
                // after it share it.
                let probe_window = p.limits.discover_timeout.min(timeout / 2);
                negotiate::over_stdio(wire, plan, &parts, probe_window)
                    .await
                    .map_err(|failure| match failure {
                        Unnegotiated::Mismatch(message) => mismatch(message, &stderr),
                        Unnegotiated::Init(e) => initfail::failed(&e, Via::WebSocket, &stderr),
                    })
            };
            match tokio::time::timeout(timeout, opening).await {
                Ok(Ok(session)) => (session, None),
                Ok(Err(error)) => return Err(error),
                Err(_) => {
                    let mut error = initfail::timed_out(timeout, &stderr);
                    error.hint =
                        "check that `url` is an MCP server's WebSocket endpoint, or raise \
                                  connect_timeout_ms"
                            .into();
                    return Err(error);
                }
            }
        }
    };
    let info = session.peer().peer_info();
    let stateless = era == Era::Stateless;
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
        instructions: info.as_ref().and_then(|i| i.instructions.clone()),
    };
    let has_tools = info
        .as_ref()
        .is_some_and(|i| i.capabilities.tools.is_some());
    let has_resources = info
        .as_ref()
        .is_some_and(|i| i.capabilities.resources.is_some());
    let has_prompts = info
        .as_ref()
        .is_some_and(|i| i.capabilities.prompts.is_some());
    let has_completions = info
        .as_ref()
        .is_some_and(|i| i.capabilities.completions.is_some());
    let endpoint = match (&process, p.spec.transport.kind()) {
        (Some(p), _) => Endpoint::Stdio { pid: p.pid() },
        (None, crate::mcp::spec::TransportKind::Ws) => Endpoint::WebSocket,
        (None, _) => Endpoint::Http,
    };
    let lane = lane_io.map(|io| super::lane::Lane::new(io, lane_meta(&parts, era, &server)));
    let (stop, stop_rx) = mpsc::unbounded_channel();
    let life = Arc::new(Lifeline::default());
    let peer = session.peer().clone();
    let tasks = Arc::new(TaskBook::default());
    let listening = Arc::new(ListenSlot::default());
    let unreachable = signals.unreachable.clone();
    let no_answer = signals.no_answer.clone();
    tokio::spawn(watchdog::watch(
        session,
        process,
        stop_rx,
        Arc::clone(&life),
        p.limits.close_grace,
        signals,
        Closing {
            tasks: Arc::clone(&tasks),
            listening: Arc::clone(&listening),
        },
    ));
    let http = endpoint == Endpoint::Http;
    let connection = Arc::new(Connection {
        id: p.id,
        alias,
        peer,
        lane,
        server,
        endpoint,
        opened: Instant::now(),
        call_timeout: p.spec.call_timeout,
        has_tools,
        has_resources,
        has_prompts,
        has_completions,
        era,
        watches: Default::default(),
        listens: stateless
            && info
                .as_ref()
                .and_then(|i| i.capabilities.tools.as_ref())
                .and_then(|t| t.list_changed)
                .unwrap_or(false),
        parts,
        tap,
        stderr,
        stop,
        life,
        list_changes,
        listed: AtomicU64::new(0),
        spills,
        reset_timeout_on_progress: p.spec.reset_timeout_on_progress,
        max_call: p.spec.max_call,
        listing: tokio::sync::Mutex::new(()),
        list_expires: std::sync::Mutex::new(None),
        listening,
        unreachable,
        no_answer,
        event_streams,
        tasks,
        task_timeout: p.spec.task_timeout,
        task_mode: p.spec.tasks,
        auth,
        budget,
    });
    if http && let Some(every) = p.limits.liveness_ping {
        tokio::spawn(super::liveness::watch(Arc::downgrade(&connection), every));
    }
    Ok(connection)
}

/// The server answered a revision we did not offer, or speaks none we do.
/// What every request of a 2026-07-28 connection carries in `_meta`, as rmcp
/// adds it to its own requests: the revision, and our identity and
/// capabilities (there is no handshake to have said them once).
fn lane_meta(parts: &HandlerParts, era: Era, server: &ServerIdentity) -> Map<String, Value> {
    let mut meta = Map::new();
    if era == Era::Stateless {
        let info = rmcp::ClientHandler::get_info(&parts.client(era));
        meta.insert(
            "io.modelcontextprotocol/protocolVersion".into(),
            Value::String(server.protocol_version.clone()),
        );
        meta.insert(
            "io.modelcontextprotocol/clientInfo".into(),
            serde_json::to_value(&info.client_info).unwrap_or(Value::Null),
        );
        meta.insert(
            "io.modelcontextprotocol/clientCapabilities".into(),
            serde_json::to_value(&info.capabilities).unwrap_or(Value::Null),
        );
    }
    meta
}

fn mismatch(message: String, stderr: &StderrTail) -> ConnectError {
    initfail::with_stderr(
        ConnectError::new(
            Code::ProtocolVersionMismatch,
            message,
            "set `protocol` for this server to a revision it speaks (\"auto\", \"2026-07-28\" or \
             \"2025-11-25\"), or update the server",
        ),
        stderr,
    )
}

/// An OAuth failure as a connect error: the alias ends up `auth_required`.
pub(in crate::mcp) fn auth_failed(alias: &str, failure: Failure) -> ConnectError {
    let mut error = ConnectError::new(
        Code::AuthRequired,
        failure.error.to_string(),
        failure.error.hint(alias),
    );
    error.server_output = failure.server_output;
    error
}

async fn exited_during_init(
    status: std::io::Result<std::process::ExitStatus>,
    stderr: &StderrTail,
) -> ConnectError {
    stderr.wait_eof(LAST_WORDS).await;
    let how = status
        .map(|s| watchdog::describe_exit(&s))
        .unwrap_or_else(|e| format!("could not be waited for ({e})"));
    initfail::exited(&how, stderr)
}

/// An HTTP server that did not initialize: authorization (in the OAuth
/// session's words when it tried), or what happened in the harness's words
/// (see `initfail`).
fn http_init_failed(
    error: &ClientInitializeError,
    url: &str,
    stderr: &StderrTail,
    alias: &str,
    auth: Option<&AuthSession>,
) -> ConnectError {
    if error.is_authorization_required() {
        if let Some(failure) = auth.and_then(|a| a.failure()) {
            return auth_failed(alias, failure);
        }
        let denial = crate::mcp::connection::AuthDenial::plain(alias);
        return ConnectError::new(
            Code::AuthRequired,
            format!("{url} requires authorization (HTTP 401/403) and refused the request"),
            denial.hint,
        );
    }
    initfail::failed(error, Via::Http, stderr)
}

fn http_config(
    url: &str,
    headers: &[(String, String)],
) -> Result<StreamableHttpClientTransportConfig, ConnectError> {
    // reqwest is built without a default TLS provider; install ring once per process.
    let _ = rustls::crypto::ring::default_provider().install_default();
    if !(url.starts_with("http://") || url.starts_with("https://")) {
        return Err(bad_url(
            "the url must start with http:// or https://".into(),
        ));
    }
    let map: HashMap<_, _> = header_map(headers)?;
    Ok(StreamableHttpClientTransportConfig::with_uri(url).custom_headers(map))
}

/// A remote server's `url` or `headers` that cannot be used: `what` is why.
pub(super) fn bad_url(what: String) -> ConnectError {
    ConnectError::new(
        Code::SpawnFailed,
        what,
        "fix `url` or `headers` of this server in the config",
    )
}

/// A remote server's configured `headers` as HTTP headers (Streamable HTTP
/// and WebSocket alike), or which one is not valid.
pub(super) fn header_map<C>(headers: &[(String, String)]) -> Result<C, ConnectError>
where
    C: FromIterator<(http::HeaderName, http::HeaderValue)>,
{
    headers
        .iter()
        .map(|(name, value)| {
            let name = http::HeaderName::try_from(name.as_str())
                .map_err(|e| bad_url(format!("header `{name}`: {e}")))?;
            let value = http::HeaderValue::try_from(value.as_str()).map_err(|_| {
                bad_url(format!(
                    "header `{name}` has a value that is not a valid HTTP header value"
                ))
            })?;
            Ok((name, value))
        })
        .collect()
}
