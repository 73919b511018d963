//! What the MCP layer reports as it happens: alias states, registrations,
//! revocations, notifications. The backend forwards these to the UI and the audit log.

use serde::Serialize;

use super::error::ConnectErrorCode;
use super::names::ServerAlias;
use super::pins::{DefinitionChange, PinRecord};
use crate::protocol::CallId;

/// Unique for the life of the process; never reused, so a late event about an old
/// connection can never be mistaken for the current one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct ConnectionId(pub u64);

impl ConnectionId {
    /// A fresh id, never handed out before in this process.
    pub fn next() -> Self {
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
        Self(NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed))
    }
}

impl std::fmt::Display for ConnectionId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "#{}", self.0)
    }
}

/// Why a connection's tools were revoked.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum RevokeCause {
    /// `disconnect_mcp`, the side panel, or the CLI closed it.
    Disconnected,
    /// A call exceeded its timeout; the connection was dropped and its process killed.
    Timeout { tool: String },
    /// The process exited or the transport closed. `detail` is built locally
    /// (exit status, signal), never the server's own words.
    ConnectionLost { detail: String },
    /// The operator killed the server process.
    Killed,
    /// The harness is shutting down.
    Shutdown,
    /// An HTTP server refused the sign-in and it could not be renewed, or the
    /// operator signed out: the alias needs a new sign-in.
    AuthRequired { detail: String },
    /// After `notifications/tools/list_changed`, the re-listed tools break a
    /// local rule (exact equality with the policy, names, schemas): the whole
    /// connection was rejected. `changes` says what the server changed.
    PolicyViolation {
        code: ConnectErrorCode,
        message: String,
        changes: ToolChanges,
        /// For `definition_changed`: each changed tool with its diff.
        #[serde(skip_serializing_if = "Vec::is_empty")]
        definition_changes: Vec<DefinitionChange>,
    },
}

/// What changed in a server's published tools between two listings, by
/// published (remote) name.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct ToolChanges {
    pub added: Vec<String>,
    pub removed: Vec<String>,
    /// Same name, different definition (schema, description, title or annotations).
    pub changed: Vec<String>,
}

impl ToolChanges {
    pub fn is_empty(&self) -> bool {
        self.added.is_empty() && self.removed.is_empty() && self.changed.is_empty()
    }
}

impl std::fmt::Display for ToolChanges {
    /// "added `a`, `b`; removed `c`; changed `d`" (names quoted, inert).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let list = |names: &[String]| {
            names
                .iter()
                .map(|n| super::names::quote(n))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let mut parts = Vec::new();
        for (label, names) in [
            ("added", &self.added),
            ("removed", &self.removed),
            ("changed", &self.changed),
        ] {
            if !names.is_empty() {
                parts.push(format!("{label} {}", list(names)));
            }
        }
        if parts.is_empty() {
            return f.write_str("no change in the published tools");
        }
        f.write_str(&parts.join("; "))
    }
}

impl std::fmt::Display for RevokeCause {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RevokeCause::Disconnected => f.write_str("disconnected"),
            RevokeCause::Timeout { tool } => write!(f, "call to {tool} timed out"),
            RevokeCause::ConnectionLost { detail } => write!(f, "connection lost: {detail}"),
            RevokeCause::Killed => f.write_str("server process killed by the operator"),
            RevokeCause::Shutdown => f.write_str("harness shutting down"),
            RevokeCause::AuthRequired { detail } => write!(f, "sign-in required: {detail}"),
            RevokeCause::PolicyViolation {
                message, changes, ..
            } => write!(
                f,
                "the server changed its tools ({changes}) and they break a local rule: {message}"
            ),
        }
    }
}

/// What happened to an alias's pins.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum PinChange {
    Created,
    Accepted,
    Violated,
}

impl PinChange {
    /// The audit log's event name.
    pub fn audit_event(self) -> &'static str {
        match self {
            PinChange::Created => "pin_created",
            PinChange::Accepted => "pin_accepted",
            PinChange::Violated => "pin_violated",
        }
    }
}

/// Where an alias stands right now.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum AliasState {
    Disconnected,
    Connecting,
    Ready {
        connection: ConnectionId,
        exposed: usize,
    },
    Rejected {
        code: ConnectErrorCode,
        message: String,
    },
    Failed {
        code: ConnectErrorCode,
        message: String,
    },
    /// It was ready, then its connection ended without being asked to.
    Lost {
        cause: RevokeCause,
    },
}

impl AliasState {
    pub fn label(&self) -> &'static str {
        match self {
            AliasState::Disconnected => "disconnected",
            AliasState::Connecting => "connecting",
            AliasState::Ready { .. } => "ready",
            AliasState::Rejected { .. } => "rejected",
            AliasState::Failed { .. } => "failed",
            AliasState::Lost { .. } => "lost",
        }
    }
}

/// Exposed name → what the harness noticed about that tool's definition.
pub type ToolFlags = std::collections::BTreeMap<String, Vec<super::published::ToolFlag>>;

/// Which of a server's offerings besides tools changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Offering {
    Resources,
    Prompts,
}

/// Where a task stands, as its server reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TaskState {
    Working,
    InputRequired,
    Completed,
    Failed,
    Cancelled,
}

impl TaskState {
    pub(in crate::mcp) fn parse(status: &str) -> Option<Self> {
        Some(match status {
            "working" => TaskState::Working,
            "input_required" => TaskState::InputRequired,
            "completed" => TaskState::Completed,
            "failed" => TaskState::Failed,
            "cancelled" => TaskState::Cancelled,
            _ => return None,
        })
    }

    pub fn is_terminal(self) -> bool {
        matches!(
            self,
            TaskState::Completed | TaskState::Failed | TaskState::Cancelled
        )
    }

    pub fn label(self) -> &'static str {
        match self {
            TaskState::Working => "working",
            TaskState::InputRequired => "input required",
            TaskState::Completed => "completed",
            TaskState::Failed => "failed",
            TaskState::Cancelled => "cancelled",
        }
    }
}

/// What became of a tool the poisoning screen flagged.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SuspiciousOutcome {
    Exposed,
    Refused,
}

/// One thing that happened in the MCP layer.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum McpEvent {
    /// An alias moved to a new state.
    AliasState {
        alias: ServerAlias,
        state: AliasState,
    },
    /// A connection's exposed tools entered the registry (snapshot `version`).
    /// `flags`: what the harness noticed about some of them (exposed name →
    /// flags, e.g. `hidden_text`); absent when nothing.
    Registered {
        alias: ServerAlias,
        connection: ConnectionId,
        /// The protocol revision the connection speaks.
        protocol_version: String,
        tools: Vec<String>,
        #[serde(skip_serializing_if = "ToolFlags::is_empty")]
        flags: ToolFlags,
        version: u64,
    },
    /// A connection's exposed tools left the registry, all at once.
    Revoked {
        alias: ServerAlias,
        connection: ConnectionId,
        tools: Vec<String>,
        cause: RevokeCause,
        version: u64,
    },
    /// The server says its tool list changed (a re-list follows, coalesced).
    ToolListChanged {
        alias: ServerAlias,
        connection: ConnectionId,
    },
    /// The server says its resources or its prompts changed: views of them
    /// list again (nothing is cached in `mcp/`: every listing asks the server).
    OfferingsChanged {
        alias: ServerAlias,
        connection: ConnectionId,
        what: Offering,
    },
    /// A re-list after `tools/list_changed` still satisfies every local rule: the
    /// connection's exposed tools were replaced at once (snapshot `version`). All
    /// names are exposed names; `changed` are tools whose schema or description
    /// changed — approvals remembered for them ("always for this tool") must be
    /// forgotten. `tools` is the connection's whole exposed set now.
    ToolsChanged {
        alias: ServerAlias,
        connection: ConnectionId,
        added: Vec<String>,
        removed: Vec<String>,
        changed: Vec<String>,
        tools: Vec<String>,
        #[serde(skip_serializing_if = "ToolFlags::is_empty")]
        flags: ToolFlags,
        version: u64,
    },
    /// A call runs as a task on the server; its status changed (`task` and
    /// `message` are the server's words: untrusted).
    Task {
        alias: ServerAlias,
        connection: ConnectionId,
        /// The call that runs as this task.
        call: CallId,
        /// The exposed name of the tool.
        tool: String,
        task: String,
        state: TaskState,
        message: Option<String>,
    },
    /// Pins were written or found broken: `created` by trust on first use,
    /// `accepted` by the operator, `violated` by a definition that differs
    /// from its pin (or, under `pin = "required"`, has none).
    Pins {
        alias: ServerAlias,
        change: PinChange,
        tools: Vec<PinRecord>,
    },
    /// The poisoning screen flagged a published tool at a connect or a
    /// re-list (one event per tool): what it read as addressed to the model,
    /// and whether the tool went in.
    Suspicious {
        alias: ServerAlias,
        /// The published name.
        tool: String,
        /// `exposed`: its pin was accepted by the operator (or pins are off);
        /// `refused`: never trusted on first use, the connection was refused.
        outcome: SuspiciousOutcome,
        hits: Vec<super::screen::Suspicion>,
    },
    /// Credentials in what a call, a resource read or a prompt returned were
    /// replaced for the model by `[redacted: KIND]`; the credentials went to
    /// the operator only (server output), never into this record.
    Redacted {
        /// The server (a page of a saved result, `read_result`, names none).
        #[serde(skip_serializing_if = "Option::is_none")]
        alias: Option<ServerAlias>,
        /// The call (a prompt the operator brings in is no call: `None`).
        #[serde(skip_serializing_if = "Option::is_none")]
        call: Option<CallId>,
        /// The exposed name of the tool (`read_mcp_resource`, `prompt NAME`).
        tool: String,
        kinds: Vec<super::secrets::SecretKind>,
    },
    /// A sink call in a tainted session was escalated to the operator's
    /// approval prompt, whatever its policy says (`[flows]`).
    FlowEscalated {
        call: CallId,
        /// The exposed name of the tool.
        tool: String,
        alias: ServerAlias,
        rule: super::flows::FlowRule,
        tainted_by: Vec<super::flows::Tainter>,
    },
    /// A sink call in a tainted session was refused (`mcp_flow_denied`).
    FlowDenied {
        call: CallId,
        tool: String,
        alias: ServerAlias,
        rule: super::flows::FlowRule,
        tainted_by: Vec<super::flows::Tainter>,
    },
    /// A session became untrusted or private (what it holds now).
    Tainted {
        scope: super::flows::FlowScope,
        taint: super::flows::Taint,
    },
    /// The operator cleared a session's taint (what it held).
    TaintCleared {
        scope: super::flows::FlowScope,
        was: super::flows::Taint,
    },
    /// The server said a resource it was asked to watch
    /// (`resources/subscribe`) changed: `uri` as the server names it.
    ResourceUpdated {
        alias: ServerAlias,
        connection: ConnectionId,
        uri: String,
    },
    /// Progress of a running call, as reported by the server.
    Progress {
        alias: ServerAlias,
        connection: ConnectionId,
        /// The call it is about: the one its progress token was given to
        /// (`None`: a token no call of this connection was given).
        call: Option<CallId>,
        progress: f64,
        total: Option<f64>,
        message: Option<String>,
    },
}

impl Serialize for ServerAlias {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}
