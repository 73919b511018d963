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
    AliasState, ConnectErrorCode, Connection, Effect, ExposedTool, Hub, PublishedTool, ServerSpec,
    connection::Endpoint, schema,
};
use crate::protocol::{ArgProblem, ArgsCheck, EndedView, HealthView, ServerView, ToolView, Views};

/// Call statistics per alias, kept by the backend.
#[derive(Debug, Clone, Default)]
pub struct Stats {
    pub ok: u64,
    pub failed: u64,
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
}

impl ViewBuilder {
    /// Every configured server as it stands now.
    pub fn views(&mut self, hub: &Hub, stats: &HashMap<String, Stats>) -> Views {
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
                    health: None,
                };
                describe(&state, &mut view);
                let key = alias.to_string();
                let stats = stats.get(alias.as_str());
                if let Some(entry) = snapshot.connection_for(&alias) {
                    view.exposed = entry.exposed.len();
                    view.published = self.live_tools(&key, entry, spec.as_ref());
                    let current = self
                        .last
                        .get(&key)
                        .is_some_and(|l| l.connection.id() == entry.connection.id());
                    if !current {
                        self.last.insert(
                            key.clone(),
                            LastConnection {
                                connection: Arc::clone(&entry.connection),
                                ended: None,
                            },
                        );
                    }
                    view.health = Some(health(&entry.connection, stats, None));
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
                        // Rejected: what was published and why none of it is exposed.
                        let why = format!("rejected ({})", error.code);
                        view.published =
                            self.rejected_tools(&key, &report.published, spec.as_ref(), &why);
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
                let mut view = tool_view(t, effect, why_not);
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
        published: &Arc<[PublishedTool]>,
        spec: Option<&ServerSpec>,
        why: &str,
    ) -> Arc<[ToolView]> {
        if let Some((listing, tools)) = self.tools.get(alias)
            && listing.is_rejected(published)
        {
            return Arc::clone(tools);
        }
        let tools: Arc<[ToolView]> = published
            .iter()
            .map(|t| {
                let effect = spec.and_then(|s| s.policy.effect(&t.name));
                tool_view(t, effect, Some(why.to_string()))
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

fn tool_view(t: &PublishedTool, effect: Option<Effect>, why_not: Option<String>) -> ToolView {
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
        hidden_text: t.has_hidden_text(),
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

fn transport(spec: &ServerSpec) -> String {
    match &spec.transport {
        crate::mcp::TransportSpec::Stdio { .. } => format!("stdio: {}", spec.transport.describe()),
        crate::mcp::TransportSpec::Http { .. } => format!("http: {}", spec.transport.describe()),
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
    HealthView {
        pid: match connection.endpoint() {
            Endpoint::Stdio { pid } => Some(*pid),
            Endpoint::Http => None,
        },
        connected_at: wall_clock(since),
        opened,
        protocol_version: connection.server().protocol_version.clone(),
        server_name: connection.server().name.clone(),
        server_version: connection.server().version.clone(),
        calls_ok: stats.ok,
        calls_failed: stats.failed,
        last_latency_ms: stats.last_latency_ms,
        last_error: stats.last_error,
        stderr_tail: connection.stderr().last_lines(STDERR_LINES),
        ended,
    }
}
