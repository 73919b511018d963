//! Builds the UI's plain views from the hub: every alias with its state, what it
//! publishes and what became of each tool, and the health of its connection.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Instant;

use crate::mcp::{AliasState, ConnectErrorCode, Connection, Effect, Hub, connection::Endpoint};
use crate::protocol::{EndedView, HealthView, ServerView, ToolView};

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

pub fn servers(
    hub: &Hub,
    stats: &HashMap<String, Stats>,
    last: &mut HashMap<String, LastConnection>,
) -> Vec<ServerView> {
    let snapshot = hub.snapshot();
    hub.aliases()
        .into_iter()
        .map(|(alias, state)| {
            let spec = hub.spec(alias.as_str()).ok();
            let transport = spec
                .as_ref()
                .map(|s| transport(&s.transport))
                .unwrap_or_default();
            let (label, detail, code) = describe(&state);
            let mut view = ServerView {
                alias: alias.to_string(),
                state: label.to_string(),
                detail,
                code,
                transport,
                exposed: 0,
                published: Vec::new(),
                policy_missing: Vec::new(),
                policy_extra: Vec::new(),
                health: None,
            };
            let effect_of = |name: &str| spec.as_ref().and_then(|s| s.policy.effect(name));
            if let Some(entry) = snapshot.connection_for(&alias) {
                view.exposed = entry.exposed.len();
                view.published = entry
                    .published
                    .iter()
                    .map(|t| {
                        let exposed = entry.exposed.iter().find(|e| e.remote_name == t.name);
                        let effect = effect_of(&t.name);
                        let why_not = match (exposed, effect) {
                            (Some(_), _) => None,
                            (None, Some(Effect::Deny)) => Some("local policy: deny".to_string()),
                            (None, _) => Some("not in the local policy".to_string()),
                        };
                        tool_view(t, exposed.map(|e| e.name.clone()), effect, why_not)
                    })
                    .collect();
                let current = last
                    .get(alias.as_str())
                    .is_some_and(|l| l.connection.id() == entry.connection().id());
                if !current {
                    last.insert(
                        alias.to_string(),
                        LastConnection {
                            connection: Arc::clone(entry.connection()),
                            ended: None,
                        },
                    );
                }
                view.health = Some(health(entry.connection(), stats.get(alias.as_str()), None));
            } else if let Some(ended) = last.get_mut(alias.as_str()) {
                // Not live any more (an end the revocation did not tell).
                let why = ended
                    .connection
                    .end_reason()
                    .map_or_else(|| state.label().to_string(), ToString::to_string);
                ended.end(why);
                view.health = Some(health(
                    &ended.connection,
                    stats.get(alias.as_str()),
                    ended.ended.clone(),
                ));
            }
            if snapshot.connection_for(&alias).is_none()
                && let Some(report) = hub.last_report(alias.as_str())
                && let Err(error) = &report.outcome
                && !matches!(state, AliasState::Disconnected | AliasState::Connecting)
            {
                // Rejected: show what was published and why none of it is exposed.
                let why = format!("rejected ({})", error.code);
                view.published = report
                    .published
                    .iter()
                    .map(|t| tool_view(t, None, effect_of(&t.name), Some(why.clone())))
                    .collect();
                if error.code == ConnectErrorCode::PolicyMismatch
                    && let Some(diff) = &error.policy_diff
                {
                    view.policy_missing = diff.missing.clone();
                    view.policy_extra = diff.extra.clone();
                }
            }
            view
        })
        .collect()
}

fn tool_view(
    t: &crate::mcp::PublishedTool,
    exposed_as: Option<String>,
    effect: Option<Effect>,
    why_not: Option<String>,
) -> ToolView {
    ToolView {
        name: t.name.clone(),
        title: t.title.clone(),
        description: t.description.clone(),
        annotations: t.annotations.clone(),
        input_schema: (*t.input_schema).clone(),
        exposed_as,
        effect: effect.map(|e| e.to_string()),
        why_not,
        hidden_text: t.has_hidden_text(),
    }
}

fn describe(state: &AliasState) -> (&'static str, Option<String>, Option<String>) {
    match state {
        AliasState::Rejected { code, message } | AliasState::Failed { code, message } => {
            (state.label(), Some(message.clone()), Some(code.to_string()))
        }
        AliasState::Lost { cause } => (state.label(), Some(cause.to_string()), None),
        _ => (state.label(), None, None),
    }
}

fn transport(spec: &crate::mcp::TransportSpec) -> String {
    match spec {
        crate::mcp::TransportSpec::Stdio { .. } => format!("stdio: {}", spec.describe()),
        crate::mcp::TransportSpec::Http { .. } => format!("http: {}", spec.describe()),
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
