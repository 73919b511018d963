//! How to reach each alias and the limits that bound every connection — the MCP
//! layer's view of the config (the config module builds these; this module does
//! not read files).

use std::path::PathBuf;
use std::time::Duration;

use super::auth::AuthSpec;
use super::names::ServerAlias;
use super::pins::PinMode;
use super::policy::ToolPolicy;
use super::process::LaunchSpec;
use super::vars::{VarError, Vars};

/// One configured server: the alias, how to reach it, and its local policy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerSpec {
    pub alias: ServerAlias,
    pub transport: TransportSpec,
    pub connect_timeout: Duration,
    pub call_timeout: Duration,
    /// A progress notification restarts the call timer (bounded by `max_call`).
    pub reset_timeout_on_progress: bool,
    /// No call lasts longer than this, however much progress it reports.
    pub max_call: Duration,
    /// The largest message this server may send (stdio: one line).
    pub max_message_bytes: usize,
    /// WebSocket: a server silent this long (no message, no pong to the ping
    /// sent halfway) is lost.
    pub idle_timeout: Duration,
    pub policy: ToolPolicy,
    /// Which protocol revision to speak (`protocol` in the config).
    pub protocol: ProtocolChoice,
    /// Which tools run as tasks (`tasks` in the config).
    pub tasks: TaskMode,
    /// How long a task may run before it is cancelled (`task_timeout_ms`).
    pub task_timeout: Duration,
    /// How its tools' definitions are pinned (rule 14).
    pub pin: PinMode,
    /// `[servers.ALIAS.resources] read`: reading its resources (default `confirm`).
    pub resource_read: super::policy::Effect,
    /// How many calls of one model reply run on this server at once
    /// (`max_concurrent_calls`; the rest wait their turn, in the reply's order).
    pub max_concurrent_calls: usize,
    /// Local flow labels: the server's, and per-tool overrides (rule 20).
    pub labels: super::flows::ToolLabels,
    /// Arguments outside the properties a tool's schema declares, when the
    /// schema does not say (`extra_arguments`; default refused).
    pub extra_arguments: super::undeclared::ExtraArguments,
}

/// `max_concurrent_calls` when the config does not say.
pub const MAX_CONCURRENT_CALLS: usize = 8;

/// What differs between two specs of one alias, as a re-read config sees it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SpecChange {
    /// The `tools` table (or `extra_arguments`): a live connection is
    /// re-validated against it.
    pub policy: bool,
    /// Read from the spec at each use (`resources.read`,
    /// `max_concurrent_calls`): in force at once.
    pub live: bool,
    /// Fixed when a connection opens (how to launch or reach the server, its
    /// timeouts, sizes, revision, tasks, pins): a live connection keeps the old
    /// ones until it is reconnected.
    pub launch: bool,
}

impl SpecChange {
    pub fn between(old: &ServerSpec, new: &ServerSpec) -> Self {
        let settled = |s: &ServerSpec| ServerSpec {
            policy: ToolPolicy::default(),
            resource_read: super::policy::Effect::Confirm,
            max_concurrent_calls: 0,
            labels: Default::default(),
            extra_arguments: Default::default(),
            ..s.clone()
        };
        Self {
            policy: old.policy != new.policy || old.extra_arguments != new.extra_arguments,
            live: old.resource_read != new.resource_read
                || old.max_concurrent_calls != new.max_concurrent_calls
                || old.labels != new.labels,
            launch: settled(old) != settled(new),
        }
    }

    pub fn any(self) -> bool {
        self.policy || self.live || self.launch
    }
}

/// `[servers.ALIAS] protocol`: the revision to speak.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Deserialize)]
pub enum ProtocolChoice {
    /// `server/discover` first (2026-07-28, stateless); a server that does not
    /// know it gets the `initialize` handshake (2025-11-25 down to 2024-11-05).
    #[default]
    #[serde(rename = "auto")]
    Auto,
    /// Only 2026-07-28: a server that does not speak it fails to connect.
    #[serde(rename = "2026-07-28")]
    Stateless,
    /// Only the `initialize` handshake (2025-11-25, or an older revision the
    /// server answers with).
    #[serde(rename = "2025-11-25")]
    Handshake,
}

impl ProtocolChoice {
    pub fn as_str(self) -> &'static str {
        match self {
            ProtocolChoice::Auto => "auto",
            ProtocolChoice::Stateless => "2026-07-28",
            ProtocolChoice::Handshake => "2025-11-25",
        }
    }
}

/// `[servers.ALIAS] tasks`: which tools run as tasks (create, poll, result)
/// rather than as one request. A tool whose `execution.taskSupport` is
/// `"required"` always does; `"optional"` ones only under `Optional`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TaskMode {
    #[default]
    Required,
    Optional,
}

/// Launch settings as written in the config; `${VAR}`s are expanded at connect time.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TransportSpec {
    Stdio {
        command: String,
        args: Vec<String>,
        env: Vec<(String, String)>,
        cwd: Option<String>,
    },
    Http {
        url: String,
        headers: Vec<(String, String)>,
        /// How to sign in (OAuth); by default only when the server asks.
        auth: Box<AuthSpec>,
        /// `allow_insecure_http = true`: plaintext `http://` to a host that is
        /// not loopback is the operator's explicit choice (the TUI marks it).
        allow_insecure_http: bool,
    },
    /// `url = "ws://…"` or `"wss://…"`: one JSON-RPC message per text frame,
    /// subprotocol `mcp`; `headers` go on the upgrade request.
    WebSocket {
        url: String,
        headers: Vec<(String, String)>,
        /// As for HTTP: plaintext `ws://` to a remote host only when asked for.
        allow_insecure_http: bool,
    },
}

/// Which of the three transports reaches a server (`check --json`'s
/// `server.transport`, the TUI's Health pane).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum TransportKind {
    Stdio,
    Http,
    Ws,
}

impl TransportKind {
    pub fn as_str(self) -> &'static str {
        match self {
            TransportKind::Stdio => "stdio",
            TransportKind::Http => "http",
            TransportKind::Ws => "ws",
        }
    }
}

/// The host of `url` when it is plaintext `http://` to a host that is not
/// loopback (127.0.0.0/8, ::1, `localhost`: the OAuth client's rule), so
/// requests and tokens would cross the network readable by anyone on the way.
pub fn insecure_remote_host(url: &str) -> Option<String> {
    let parsed = url::Url::parse(url).ok()?;
    (matches!(parsed.scheme(), "http" | "ws") && !super::auth::origin::is_loopback(&parsed))
        .then(|| parsed.host_str().unwrap_or_default().to_string())
}

/// A transport with every variable expanded (holds secrets: never log or display).
pub enum ResolvedTransport {
    Stdio(LaunchSpec),
    Http {
        url: String,
        headers: Vec<(String, String)>,
    },
    WebSocket {
        url: String,
        headers: Vec<(String, String)>,
    },
}

/// A launch setting whose `${VAR}` does not expand (names the setting and the
/// variable, never a value).
#[derive(Debug, Clone, thiserror::Error)]
#[error("servers.{alias}.{key}: {problem}")]
pub struct ResolveError {
    pub alias: ServerAlias,
    pub key: String,
    pub problem: VarError,
}

impl TransportSpec {
    /// Expands variables. The error names the setting and the variable, not values.
    pub fn resolve(
        &self,
        alias: &ServerAlias,
        vars: &Vars,
    ) -> Result<ResolvedTransport, ResolveError> {
        let at = |key: &str, problem: VarError| ResolveError {
            alias: alias.clone(),
            key: key.to_string(),
            problem,
        };
        match self {
            TransportSpec::Stdio {
                command,
                args,
                env,
                cwd,
            } => {
                let command = vars.expand(command).map_err(|e| at("command", e))?;
                let args = args
                    .iter()
                    .enumerate()
                    .map(|(i, a)| vars.expand(a).map_err(|e| at(&format!("args[{i}]"), e)))
                    .collect::<Result<_, _>>()?;
                let env = env
                    .iter()
                    .map(|(k, v)| {
                        Ok((
                            k.clone(),
                            vars.expand(v).map_err(|e| at(&format!("env.{k}"), e))?,
                        ))
                    })
                    .collect::<Result<_, ResolveError>>()?;
                let cwd = cwd
                    .as_ref()
                    .map(|c| vars.expand(c).map(PathBuf::from).map_err(|e| at("cwd", e)))
                    .transpose()?;
                Ok(ResolvedTransport::Stdio(LaunchSpec {
                    command,
                    args,
                    env,
                    cwd,
                }))
            }
            TransportSpec::Http {
                url,
                headers,
                allow_insecure_http,
                ..
            }
            | TransportSpec::WebSocket {
                url,
                headers,
                allow_insecure_http,
            } => {
                let url = vars.expand(url).map_err(|e| at("url", e))?;
                // A URL made of variables could only be judged once expanded.
                if !allow_insecure_http && let Some(host) = insecure_remote_host(&url) {
                    return Err(at("url", VarError::InsecureHttp(host)));
                }
                let headers = headers
                    .iter()
                    .map(|(k, v)| {
                        Ok((
                            k.clone(),
                            vars.expand(v).map_err(|e| at(&format!("headers.{k}"), e))?,
                        ))
                    })
                    .collect::<Result<_, ResolveError>>()?;
                Ok(match self {
                    TransportSpec::WebSocket { .. } => {
                        ResolvedTransport::WebSocket { url, headers }
                    }
                    _ => ResolvedTransport::Http { url, headers },
                })
            }
        }
    }

    pub fn kind(&self) -> TransportKind {
        match self {
            TransportSpec::Stdio { .. } => TransportKind::Stdio,
            TransportSpec::Http { .. } => TransportKind::Http,
            TransportSpec::WebSocket { .. } => TransportKind::Ws,
        }
    }

    /// A display form without secrets: the command and arguments, or the URL.
    pub fn describe(&self) -> String {
        match self {
            TransportSpec::Stdio { command, args, .. } => std::iter::once(command.as_str())
                .chain(args.iter().map(String::as_str))
                .collect::<Vec<_>>()
                .join(" "),
            TransportSpec::Http { url, .. } | TransportSpec::WebSocket { url, .. } => url.clone(),
        }
    }

    /// Plaintext `http://` to a remote host, allowed by `allow_insecure_http`
    /// (the operator's views mark it).
    pub fn insecure_http(&self) -> bool {
        match self {
            TransportSpec::Http {
                url,
                allow_insecure_http,
                ..
            }
            | TransportSpec::WebSocket {
                url,
                allow_insecure_http,
                ..
            } => {
                *allow_insecure_http
                    && !url.starts_with("https://")
                    && !url.starts_with("wss://")
                    && (url.contains("${") || insecure_remote_host(url).is_some())
            }
            TransportSpec::Stdio { .. } => false,
        }
    }

    /// The OAuth settings of an HTTP server (`None` for stdio).
    pub fn auth(&self) -> Option<&AuthSpec> {
        match self {
            TransportSpec::Http { auth, .. } => Some(auth.as_ref()),
            TransportSpec::Stdio { .. } | TransportSpec::WebSocket { .. } => None,
        }
    }
}

/// 16 MiB: the default size cap of one message.
pub const DEFAULT_MAX_MESSAGE_BYTES: usize = 16 * 1024 * 1024;
/// 256 MiB: the most `max_message_bytes` may be set to.
pub const MAX_MESSAGE_BYTES_LIMIT: usize = 256 * 1024 * 1024;

/// Bounds that apply to every connection (`[limits]` in the config).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Limits {
    pub connect_timeout: Duration,
    pub call_timeout: Duration,
    /// Text results larger than this are cut for the model, with an explicit
    /// notice; the whole text is saved in the session's `results/`.
    pub max_result_bytes: usize,
    /// The largest message a server may send (stdio: one line); up to 256 MiB.
    pub max_message_bytes: usize,
    pub reset_timeout_on_progress: bool,
    pub max_call: Duration,
    /// More exposed tools than this in one request: the request carries the
    /// most recently used ones and `search_tools` instead of all of them.
    pub max_tools_in_request: usize,
    /// …or more than about this many tokens of tool definitions (4 bytes a token).
    pub max_tool_tokens_in_request: usize,
    /// How long a closing server gets after stdin EOF, and again after SIGTERM.
    pub close_grace: Duration,
    /// `tools/list` stops with `pagination_limit` beyond these.
    pub max_tools: usize,
    pub max_list_pages: usize,
    /// A task running longer than this is cancelled (`tasks/cancel`).
    pub task_timeout: Duration,
    /// Rounds of `InputRequiredResult` one call may take before it fails.
    pub max_input_rounds: usize,
    /// The largest `requestState` echoed back to a server, in bytes.
    pub max_request_state_bytes: usize,
    /// How long a stdio server may stay silent on `server/discover` before it
    /// is taken for a legacy one (at most half the connect timeout is used).
    pub discover_timeout: Duration,
    /// WebSocket: how long a server may stay silent (a ping goes out halfway).
    pub idle_timeout: Duration,
    /// Streamable HTTP with no event stream open to tell of the server's end
    /// (a 2026-07-28 server that announces no list changes, a handshake
    /// server without a GET stream): how often its liveness is checked
    /// (`ping`, `server/discover` at 2026-07-28). `None`: never, and such a
    /// server's death is noticed by the next request.
    pub liveness_ping: Option<Duration>,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            connect_timeout: Duration::from_millis(10_000),
            call_timeout: Duration::from_millis(30_000),
            max_result_bytes: 100_000,
            max_message_bytes: DEFAULT_MAX_MESSAGE_BYTES,
            reset_timeout_on_progress: true,
            max_call: Duration::from_millis(600_000),
            max_tools_in_request: 64,
            max_tool_tokens_in_request: 20_000,
            close_grace: Duration::from_millis(2_000),
            max_tools: 10_000,
            max_list_pages: 1_000,
            task_timeout: Duration::from_millis(600_000),
            max_input_rounds: 10,
            max_request_state_bytes: 1024 * 1024,
            discover_timeout: Duration::from_millis(5_000),
            idle_timeout: Duration::from_millis(30_000),
            liveness_ping: Some(Duration::from_millis(5_000)),
        }
    }
}
