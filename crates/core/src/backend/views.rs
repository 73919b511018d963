//! Builds the UI's views from the hub, incrementally: a server's tool views are
//! built once per listing (what a connection publishes, or what a rejected
//! attempt published) and shared (`Arc`) by every later view until the listing
//! changes. A call's result rebuilds only the small parts (state, health).

use std::collections::HashMap;
use std::sync::{Arc, Weak};
use std::time::Instant;

use super::convert;
use crate::mcp::registry::ConnectionEntry;
use crate::mcp::{
    AliasState, ConnectErrorCode, ConnectReport, Connection, Effect, ExposedTool, Hub, PinMode,
    PublishedTool, ServerSpec, connection::Endpoint, schema,
};
use crate::protocol::{
    ArgProblem, ArgsCheck, EndedView, GrantView, HealthView, PinStatus, ServerView, SignInStatus,
    TokenInfo, ToolView, TransportKind, Views,
};

/// Call statistics per alias, kept by the backend.
#[derive(Debug, Clone, Default)]
pub struct Stats {
    pub ok: u64,
    pub failed: u64,
    /// Calls that ran as tasks (counted when the task was created).
    pub tasks: u64,
    pub last_latency_ms: Option<u64>,
    pub last_error: Option<(String, String)>,
}

/// Lines of stderr shown in the health pane.
const STDERR_LINES: usize = 40;

/// The last connection of an alias, live or ended: after it ends, Health keeps
/// showing its facts (pid, protocol, calls, stderr) with when and why it ended,
/// until the alias connects again. Closing does not wait for this handle: the
/// hub closes or kills a connection when it revokes it.
pub struct LastConnection {
    pub connection: Arc<Connection>,
    pub ended: Option<EndedView>,
}

impl LastConnection {
    /// Records the end, once (the first word on why is the one kept).
    pub fn end(&mut self, why: String) {
        if self.ended.is_none() {
            self.ended = Some(EndedView {
                at: wall_clock(chrono::Utc::now()),
                why,
                lasted: self.connection.uptime(),
            });
        }
    }
}

/// Which listing a cached set of tool views was built from. `Weak` keeps the
/// identity without keeping the listing (or its connection) alive.
enum Listing {
    Live(Weak<ConnectionEntry>),
    Rejected(Weak<[PublishedTool]>),
}

impl Listing {
    fn is_live(&self, entry: &Arc<ConnectionEntry>) -> bool {
        matches!(self, Listing::Live(w) if std::ptr::eq(w.as_ptr(), Arc::as_ptr(entry)))
    }

    fn is_rejected(&self, published: &Arc<[PublishedTool]>) -> bool {
        matches!(self, Listing::Rejected(w) if std::ptr::addr_eq(w.as_ptr(), Arc::as_ptr(published)))
    }
}

/// The backend's view state: caches and each alias's last connection.
#[derive(Default)]
pub struct ViewBuilder {
    tools: HashMap<String, (Listing, Arc<[ToolView]>)>,
    /// Each alias's last connection, kept after it ends for the post-mortem.
    pub last: HashMap<String, LastConnection>,
    /// Aliases whose live connection was opened under an older config (its
    /// launch settings changed since): `r` reconnects them.
    pub stale: std::collections::BTreeSet<String>,
}

impl ViewBuilder {
    /// Drops what is kept of an alias that left the config.
    pub fn forget(&mut self, alias: &str) {
        self.tools.remove(alias);
        self.last.remove(alias);
        self.stale.remove(alias);
    }

    /// Every configured server as it stands now.
    pub fn views(
        &mut self,
        hub: &Hub,
        stats: &HashMap<String, Stats>,
        grants: Arc<[GrantView]>,
    ) -> Views {
        let snapshot = hub.snapshot();
        let servers = hub
            .aliases()
            .into_iter()
            .map(|(alias, state)| {
                let spec = hub.spec(alias.as_str()).ok();
                let mut view = ServerView {
                    alias: alias.to_string(),
                    state: convert::status(&state),
                    detail: None,
                    code: None,
                    transport: spec.as_ref().map(transport).unwrap_or_default(),
                    exposed: 0,
                    published: Arc::from(Vec::new()),
                    policy_missing: Vec::new(),
                    policy_extra: Vec::new(),
                    pin_changes: Arc::from(Vec::new()),
                    pins_at: hub.pins_location(),
                    pins_refused: false,
                    health: None,
                    sign_in: SignInStatus::NotUsed,
                    server_output: Vec::new(),
                    config_changed: self.stale.contains(alias.as_str()),
                    insecure_http: spec.as_ref().is_some_and(|s| s.transport.insecure_http()),
                };
                describe(&state, &mut view);
                let token = snapshot.connection_for(&alias).and_then(|e| {
                    e.connection()
                        .auth()
                        .and_then(|a| a.view().borrow().clone())
                });
                view.sign_in = sign_in_status(spec.as_ref(), &state, token.is_some());
                let key = alias.to_string();
                let stats = stats.get(alias.as_str());
                if let Some(entry) = snapshot.connection_for(&alias) {
                    view.exposed = entry.exposed.len();
                    view.published = self.live_tools(&key, entry, spec.as_ref());
                    let current = self
                        .last
                        .get(&key)
                        .is_some_and(|l| l.connection.id() == entry.connection().id());
                    if !current {
                        self.last.insert(
                            key.clone(),
                            LastConnection {
                                connection: Arc::clone(entry.connection()),
                                ended: None,
                            },
                        );
                    }
                    view.health = Some(health(entry.connection(), stats, None));
                } else {
                    if let Some(ended) = self.last.get_mut(&key) {
                        // Not live any more (an end the revocation did not tell).
                        let why = ended
                            .connection
                            .end_reason()
                            .map_or_else(|| state.label().to_string(), ToString::to_string);
                        ended.end(why);
                        view.health = Some(health(&ended.connection, stats, ended.ended.clone()));
                    }
                    if let Some(report) = hub.last_report(alias.as_str())
                        && let Err(error) = &report.outcome
                        && !matches!(state, AliasState::Disconnected | AliasState::Connecting)
                    {
                        // The server's own words on why: the operator's only.
                        view.server_output = error.server_output.clone();
                        // Rejected: what was published and why none of it is exposed.
                        let why = format!("rejected ({})", error.code);
                        view.published = self.rejected_tools(&key, &report, spec.as_ref(), &why);
                        view.pin_changes =
                            error.changes().iter().map(convert::pin_change).collect();
                        view.pins_refused = matches!(
                            error.code,
                            ConnectErrorCode::DefinitionChanged
                                | ConnectErrorCode::DefinitionUnpinned
                                | ConnectErrorCode::DefinitionSuspicious
                        );
                        if error.code == ConnectErrorCode::PolicyMismatch
                            && let Some(diff) = &error.policy_diff
                        {
                            view.policy_missing = diff.missing.clone();
                            view.policy_extra = diff.extra.clone();
                        }
                    } else {
                        self.tools.remove(&key);
                    }
                }
                view
            })
            .collect::<Vec<_>>();
        Views {
            servers: Arc::from(servers),
            snapshot: snapshot.version(),
            grants,
            serving: None,
        }
    }

    /// The tool views of a live connection's listing: built once, O(n).
    fn live_tools(
        &mut self,
        alias: &str,
        entry: &Arc<ConnectionEntry>,
        spec: Option<&ServerSpec>,
    ) -> Arc<[ToolView]> {
        if let Some((listing, tools)) = self.tools.get(alias)
            && listing.is_live(entry)
        {
            return Arc::clone(tools);
        }
        let exposed: HashMap<&str, &Arc<ExposedTool>> = entry
            .exposed
            .iter()
            .map(|e| (e.remote_name.as_str(), e))
            .collect();
        let tools: Arc<[ToolView]> = entry
            .published
            .iter()
            .map(|t| {
                let exposed = exposed.get(t.name.as_str()).copied();
                let effect = spec.and_then(|s| s.policy.effect(&t.name));
                let why_not = match (exposed, effect) {
                    (Some(_), _) => None,
                    (None, Some(Effect::Deny)) => Some("local policy: deny".to_string()),
                    (None, _) => Some("not in the local policy".to_string()),
                };
                let mut view = tool_view(t, &entry.published, effect, why_not);
                // Connected: every checked tool matched its pin (or was just pinned).
                view.pin = match (spec.map(|s| s.pin), effect) {
                    (Some(PinMode::Off) | None, _) | (_, Some(Effect::Deny)) => PinStatus::Off,
                    _ => PinStatus::Pinned,
                };
                if let Some(exposed) = exposed {
                    view.exposed_as = Some(exposed.name.clone());
                    view.check = Some(args_check(exposed));
                }
                view
            })
            .collect();
        self.tools.insert(
            alias.to_string(),
            (Listing::Live(Arc::downgrade(entry)), Arc::clone(&tools)),
        );
        tools
    }

    /// The tool views of a rejected attempt's listing: built once.
    fn rejected_tools(
        &mut self,
        alias: &str,
        report: &ConnectReport,
        spec: Option<&ServerSpec>,
        why: &str,
    ) -> Arc<[ToolView]> {
        let published = &report.published;
        if let Some((listing, tools)) = self.tools.get(alias)
            && listing.is_rejected(published)
        {
            return Arc::clone(tools);
        }
        let tools: Arc<[ToolView]> = published
            .iter()
            .enumerate()
            .map(|(i, t)| {
                let effect = spec.and_then(|s| s.policy.effect(&t.name));
                let mut view = tool_view(t, published, effect, Some(why.to_string()));
                view.pin = report
                    .pins
                    .states
                    .get(i)
                    .map_or(PinStatus::Off, |s| convert::pin(*s));
                view
            })
            .collect();
        self.tools.insert(
            alias.to_string(),
            (
                Listing::Rejected(Arc::downgrade(published)),
                Arc::clone(&tools),
            ),
        );
        tools
    }
}

/// The exposed tool's own validator, as a handle the UI can call.
fn args_check(tool: &ExposedTool) -> ArgsCheck {
    let validator = Arc::clone(&tool.validator);
    ArgsCheck::new(move |arguments| {
        schema::validate(&validator, arguments)
            .into_iter()
            .map(|e| ArgProblem {
                path: e.instance_path,
                message: e.message,
            })
            .collect()
    })
}

fn tool_view(
    t: &PublishedTool,
    listing: &[PublishedTool],
    effect: Option<Effect>,
    why_not: Option<String>,
) -> ToolView {
    ToolView {
        name: t.name.clone(),
        title: t.title.clone(),
        description: t.description.clone(),
        annotations: t.annotations.clone(),
        input_schema: Arc::clone(&t.input_schema),
        exposed_as: None,
        effect: effect.map(convert::effect),
        why_not,
        check: None,
        pin: PinStatus::Off,
        hidden_text: t.has_hidden_text(),
        suspicious: crate::mcp::screen::tool(t, listing)
            .iter()
            .map(convert::suspicion)
            .collect(),
    }
}

fn describe(state: &AliasState, view: &mut ServerView) {
    match state {
        AliasState::Rejected { code, message } | AliasState::Failed { code, message } => {
            view.detail = Some(message.clone());
            view.code = Some(code.to_string());
        }
        AliasState::Lost { cause } => view.detail = Some(cause.to_string()),
        _ => {}
    }
}

/// What `s` means for a server: nothing (stdio, `auth = "none"`), a sign-in it
/// may ask for, one it asked for, or the sign-in its connection uses.
fn sign_in_status(spec: Option<&ServerSpec>, state: &AliasState, token: bool) -> SignInStatus {
    let oauth = spec
        .and_then(|s| s.transport.auth())
        .is_some_and(|a| a.mode != crate::mcp::auth::AuthMode::Off);
    match state {
        _ if !oauth => SignInStatus::NotUsed,
        _ if token => SignInStatus::SignedIn,
        AliasState::Failed {
            code: ConnectErrorCode::AuthRequired,
            ..
        } => SignInStatus::Needed,
        _ => SignInStatus::Possible,
    }
}

/// The token a live connection sends (issuer, scopes, expiry; never the token).
fn token_info(connection: &Connection) -> Option<TokenInfo> {
    let view = connection.auth()?.view().borrow().clone()?;
    let now = crate::mcp::auth::crypto::now_secs();
    Some(TokenInfo {
        issuer: view.issuer,
        scopes: view.scopes,
        token_type: view.token_type.to_string(),
        expires: view
            .expires_at
            .map(|at| Instant::now() + std::time::Duration::from_secs(at.saturating_sub(now))),
    })
}

fn transport(spec: &ServerSpec) -> String {
    match &spec.transport {
        crate::mcp::TransportSpec::Stdio { .. } => format!("stdio: {}", spec.transport.describe()),
        crate::mcp::TransportSpec::Http { .. } => format!("http: {}", spec.transport.describe()),
        crate::mcp::TransportSpec::WebSocket { .. } => format!("ws: {}", spec.transport.describe()),
    }
}

fn wall_clock(at: chrono::DateTime<chrono::Utc>) -> String {
    at.format("%H:%M:%S UTC").to_string()
}

fn health(connection: &Connection, stats: Option<&Stats>, ended: Option<EndedView>) -> HealthView {
    let stats = stats.cloned().unwrap_or_default();
    // The opening moment on both clocks; the UI counts the age itself.
    let since =
        chrono::Utc::now() - chrono::Duration::from_std(connection.uptime()).unwrap_or_default();
    let opened = Instant::now()
        .checked_sub(connection.uptime())
        .unwrap_or_else(Instant::now);
    let (transport, pid) = match connection.endpoint() {
        Endpoint::Stdio { pid } => (TransportKind::Stdio, Some(*pid)),
        Endpoint::Http => (TransportKind::Http, None),
        Endpoint::WebSocket => (TransportKind::WebSocket, None),
    };
    HealthView {
        transport,
        pid,
        connected_at: wall_clock(since),
        opened,
        protocol_version: connection.server().protocol_version.clone(),
        server_name: connection.server().name.clone(),
        server_version: connection.server().version.clone(),
        calls_ok: stats.ok,
        calls_failed: stats.failed,
        tasks_running: connection.running_tasks(),
        tasks_total: stats.tasks,
        last_latency_ms: stats.last_latency_ms,
        last_error: stats.last_error,
        stderr_tail: connection.stderr().last_lines(STDERR_LINES),
        token: if ended.is_none() {
            token_info(connection)
        } else {
            None
        },
        ended,
    }
}
