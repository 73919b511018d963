//! The live registry: published vs exposed tools per connection, immutable
//! versioned snapshots, atomic register/revoke by connection identity.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::sync::{Arc, Mutex};

use jsonschema::Validator;
use serde_json::Value;

use super::connection::Connection;
use super::error::{ConnectError, ConnectErrorCode};
use super::events::{ConnectionId, McpEvent, RevokeCause};
use super::names::{ServerAlias, quote};
use super::policy::Effect;
use super::published::PublishedTool;
use super::sink::EventSink;

/// What the harness really offers the model: a published tool that passed every
/// local rule, bound to the connection it came from.
pub struct ExposedTool {
    /// `mcp__{alias}__{tool}`.
    pub name: String,
    pub alias: ServerAlias,
    /// The name as published, used for the protocol call.
    pub remote_name: String,
    /// The server's description as the model reads it (untrusted; controls made
    /// inert, invisible code points removed).
    pub description: Option<String>,
    /// The input schema as published: arguments are validated against it.
    pub input_schema: Arc<Value>,
    /// The input schema as the model reads it: the published one, or — when the
    /// definition holds hidden text — a copy without invisible code points.
    pub model_schema: Arc<Value>,
    /// The definition holds invisible code points (SPEC rule 15).
    pub hidden_text: bool,
    /// What the poisoning screen found in its definition (empty: nothing).
    pub suspicious: Arc<[super::screen::Suspicion]>,
    /// How arguments its schema does not declare are treated (`check` shows it).
    pub undeclared: super::undeclared::Undeclared,
    /// What the schema declares, when the harness refuses the rest.
    pub declared: Option<Arc<super::undeclared::Declared>>,
    /// `Allow` or `Confirm`; denied tools are never exposed.
    pub effect: Effect,
    pub validator: Arc<Validator>,
    /// Checks `structuredContent` when the tool declared an `outputSchema`.
    pub output_validator: Option<Arc<Validator>>,
    /// `execution.taskSupport`: whether calls run as tasks (2025-11-25).
    pub task_support: super::published::TaskSupport,
    /// The definition's pin (SHA-256 of its canonical form) when its server is
    /// pinned: an approval names it, and "always" holds for it alone.
    pub definition: Option<super::pins::PinHash>,
    /// Private to `mcp/`: only the call path sends through it, and no exposed
    /// tool can be made outside `mcp/` (it is built by the exposure pipeline).
    pub(super) connection: Arc<Connection>,
}

impl ExposedTool {
    /// The connection this tool belongs to (revocation and "always" approvals
    /// are by connection identity).
    pub fn connection_id(&self) -> ConnectionId {
        self.connection.id()
    }
}

impl fmt::Debug for ExposedTool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ExposedTool")
            .field("name", &self.name)
            .field("remote_name", &self.remote_name)
            .field("effect", &self.effect)
            .field("connection", &self.connection.id())
            .finish()
    }
}

/// Everything the registry knows about one live connection.
#[derive(Debug)]
pub struct ConnectionEntry {
    pub(super) connection: Arc<Connection>,
    /// What the server published, in listing order.
    pub published: Arc<[PublishedTool]>,
    /// What is exposed, in listing order.
    pub exposed: Vec<Arc<ExposedTool>>,
}

impl ConnectionEntry {
    /// The connection, to look at (identity, health, how it ended): nothing on
    /// it reaches the server from outside `mcp/`.
    pub fn connection(&self) -> &Arc<Connection> {
        &self.connection
    }

    pub fn alias(&self) -> &ServerAlias {
        self.connection.alias()
    }
}

/// The tool set one model request and its reply use. Immutable and cheap to
/// clone (one `Arc`); a newer version never changes an older one.
#[derive(Clone, Default)]
pub struct Snapshot(Arc<SnapshotData>);

#[derive(Default)]
struct SnapshotData {
    version: u64,
    tools: BTreeMap<String, Arc<ExposedTool>>,
    connections: BTreeMap<ConnectionId, Arc<ConnectionEntry>>,
}

impl Snapshot {
    /// An empty snapshot of `version`, for tests of what is keyed by version.
    #[cfg(test)]
    pub(crate) fn empty_at(version: u64) -> Self {
        Self(Arc::new(SnapshotData {
            version,
            ..SnapshotData::default()
        }))
    }

    pub fn version(&self) -> u64 {
        self.0.version
    }

    /// Resolves an exposed name to its tool (connection, remote name, validator, effect).
    pub fn resolve(&self, exposed_name: &str) -> Option<&Arc<ExposedTool>> {
        self.0.tools.get(exposed_name)
    }

    /// Every exposed tool, sorted by exposed name.
    pub fn tools(&self) -> impl ExactSizeIterator<Item = &Arc<ExposedTool>> {
        self.0.tools.values()
    }

    /// Every live connection, in connection order.
    pub fn connections(&self) -> impl Iterator<Item = &Arc<ConnectionEntry>> {
        self.0.connections.values()
    }

    pub fn connection_for(&self, alias: &ServerAlias) -> Option<&Arc<ConnectionEntry>> {
        self.0.connections.values().find(|e| e.alias() == alias)
    }
}

impl fmt::Debug for Snapshot {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Snapshot")
            .field("version", &self.0.version)
            .field("tools", &self.0.tools.keys().collect::<Vec<_>>())
            .finish()
    }
}

/// What a revocation removed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Revocation {
    pub alias: ServerAlias,
    pub tools: Vec<String>,
    pub version: u64,
}

/// The single writer of snapshots.
pub struct Registry {
    current: Mutex<Snapshot>,
    /// Names the registry may never hand out (built-in tools).
    reserved: BTreeSet<String>,
    events: EventSink,
}

impl Registry {
    pub(super) fn new(reserved: impl IntoIterator<Item = String>, events: EventSink) -> Self {
        Self {
            current: Mutex::new(Snapshot::default()),
            reserved: reserved.into_iter().collect(),
            events,
        }
    }

    /// O(1): clones one `Arc`.
    pub fn snapshot(&self) -> Snapshot {
        self.lock().clone()
    }

    /// Adds all of a connection's exposed tools at once, or none: a clash with a
    /// built-in or another connection's exposed name rejects the whole connection.
    pub(super) fn register(&self, entry: ConnectionEntry) -> Result<Snapshot, ConnectError> {
        let mut current = self.lock();
        let id = entry.connection.id();
        let alias = entry.alias().clone();
        let protocol_version = entry.connection.server().protocol_version.clone();
        if let Some(existing) = current.connection_for(&alias) {
            return Err(ConnectError::new(
                ConnectErrorCode::NameCollision,
                format!(
                    "alias `{alias}` is already registered by connection {}",
                    existing.connection.id()
                ),
                "disconnect it first",
            ));
        }
        self.check_clashes(&current, &entry.exposed, None)?;
        let names: Vec<String> = entry.exposed.iter().map(|t| t.name.clone()).collect();
        let flags = flags_of(&entry.exposed);
        let mut tools = current.0.tools.clone();
        tools.extend(
            entry
                .exposed
                .iter()
                .map(|t| (t.name.clone(), Arc::clone(t))),
        );
        let mut connections = current.0.connections.clone();
        connections.insert(id, Arc::new(entry));
        let version = current.version() + 1;
        *current = Snapshot(Arc::new(SnapshotData {
            version,
            tools,
            connections,
        }));
        self.events.emit(McpEvent::Registered {
            alias,
            connection: id,
            protocol_version,
            tools: names,
            flags,
            version,
        });
        Ok(current.clone())
    }

    /// A clash of `exposed` with a built-in or another connection's exposed name
    /// (`own` is the connection being replaced, whose old names do not count).
    fn check_clashes(
        &self,
        current: &Snapshot,
        exposed: &[Arc<ExposedTool>],
        own: Option<ConnectionId>,
    ) -> Result<(), ConnectError> {
        for tool in exposed {
            let clash = if self.reserved.contains(&tool.name) {
                Some("a built-in tool".to_string())
            } else {
                current
                    .resolve(&tool.name)
                    .filter(|other| Some(other.connection.id()) != own)
                    .map(|other| format!("tool {} of `{}`", quote(&other.remote_name), other.alias))
            };
            if let Some(other) = clash {
                return Err(ConnectError::new(
                    ConnectErrorCode::NameCollision,
                    format!(
                        "naming rule: tool {} would be exposed as `{}`, which is already taken by {other}",
                        quote(&tool.remote_name),
                        tool.name
                    ),
                    "rename one of the aliases in the config so their exposed names differ",
                )
                .with_tools(vec![tool.remote_name.clone()]));
            }
        }
        Ok(())
    }

    /// Replaces all of connection `id`'s tools at once after a re-list (one new
    /// snapshot), or changes nothing if a clash rejects the new set. Unchanged
    /// tools keep their identity, so calls through older snapshots still reach
    /// them; changed ones are new objects. `Ok(None)`: the connection is no
    /// longer registered (revoked meanwhile).
    pub(super) fn replace(
        &self,
        id: ConnectionId,
        published: Arc<[PublishedTool]>,
        exposed: Vec<Arc<ExposedTool>>,
    ) -> Result<Option<Snapshot>, ConnectError> {
        let mut current = self.lock();
        let Some(old) = current.0.connections.get(&id).cloned() else {
            return Ok(None);
        };
        self.check_clashes(&current, &exposed, Some(id))?;
        let before: BTreeMap<&str, &Arc<ExposedTool>> =
            old.exposed.iter().map(|t| (t.name.as_str(), t)).collect();
        let (mut added, mut changed) = (Vec::new(), Vec::new());
        let exposed: Vec<Arc<ExposedTool>> = exposed
            .into_iter()
            .map(|tool| match before.get(tool.name.as_str()) {
                Some(old) if same_definition(old, &tool) => Arc::clone(old),
                Some(_) => {
                    changed.push(tool.name.clone());
                    tool
                }
                None => {
                    added.push(tool.name.clone());
                    tool
                }
            })
            .collect();
        let after: BTreeSet<&str> = exposed.iter().map(|t| t.name.as_str()).collect();
        let removed: Vec<String> = before
            .keys()
            .filter(|n| !after.contains(*n))
            .map(|n| n.to_string())
            .collect();
        let names: Vec<String> = exposed.iter().map(|t| t.name.clone()).collect();
        let flags = flags_of(&exposed);
        let mut tools = current.0.tools.clone();
        tools.retain(|_, tool| tool.connection.id() != id);
        tools.extend(exposed.iter().map(|t| (t.name.clone(), Arc::clone(t))));
        let mut connections = current.0.connections.clone();
        connections.insert(
            id,
            Arc::new(ConnectionEntry {
                connection: Arc::clone(&old.connection),
                published,
                exposed,
            }),
        );
        let version = current.version() + 1;
        *current = Snapshot(Arc::new(SnapshotData {
            version,
            tools,
            connections,
        }));
        self.events.emit(McpEvent::ToolsChanged {
            alias: old.alias().clone(),
            connection: id,
            added,
            removed,
            changed,
            tools: names,
            flags,
            version,
        });
        Ok(Some(current.clone()))
    }

    /// Removes every tool of connection `id` at once. Targets the connection
    /// object, not the alias: a stale revoke of an old connection is a no-op and
    /// never touches a newer connection of the same alias.
    pub(super) fn revoke(&self, id: ConnectionId, cause: RevokeCause) -> Option<Revocation> {
        let mut current = self.lock();
        let entry = current.0.connections.get(&id)?.clone();
        let mut connections = current.0.connections.clone();
        connections.remove(&id);
        let mut tools = current.0.tools.clone();
        tools.retain(|_, tool| tool.connection.id() != id);
        let version = current.version() + 1;
        *current = Snapshot(Arc::new(SnapshotData {
            version,
            tools,
            connections,
        }));
        let names: Vec<String> = entry.exposed.iter().map(|t| t.name.clone()).collect();
        let alias = entry.alias().clone();
        self.events.emit(McpEvent::Revoked {
            alias: alias.clone(),
            connection: id,
            tools: names.clone(),
            cause,
            version,
        });
        Some(Revocation {
            alias,
            tools: names,
            version,
        })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Snapshot> {
        // The data is a plain Arc swap; a panic elsewhere cannot leave it half-written.
        self.current.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// The flags of the tools that have any, by exposed name.
fn flags_of(exposed: &[Arc<ExposedTool>]) -> super::events::ToolFlags {
    use super::published::ToolFlag;
    exposed
        .iter()
        .filter_map(|t| {
            let mut flags = Vec::new();
            if t.hidden_text {
                flags.push(ToolFlag::HiddenText);
            }
            if !t.suspicious.is_empty() {
                flags.push(ToolFlag::Suspicious);
            }
            (!flags.is_empty()).then(|| (t.name.clone(), flags))
        })
        .collect()
}

/// Whether the model would see the same tool: name, schema, description, effect.
fn same_definition(a: &ExposedTool, b: &ExposedTool) -> bool {
    a.remote_name == b.remote_name
        && a.description == b.description
        && a.effect == b.effect
        && a.undeclared == b.undeclared
        && (Arc::ptr_eq(&a.input_schema, &b.input_schema) || a.input_schema == b.input_schema)
}
