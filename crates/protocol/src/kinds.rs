//! The states, effects and reasons the UI matches on, as enums: the backend
//! says what happened in these types, never in text the UI would have to parse.

use std::fmt;

/// Which transport reaches a server (the Health pane says it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TransportKind {
    Stdio,
    /// Streamable HTTP.
    Http,
    WebSocket,
}

impl TransportKind {
    pub fn label(self) -> &'static str {
        match self {
            TransportKind::Stdio => "stdio",
            TransportKind::Http => "Streamable HTTP",
            TransportKind::WebSocket => "WebSocket",
        }
    }
}

/// An alias's state, as the side panel shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AliasStatus {
    Disconnected,
    Connecting,
    Ready,
    /// The server answered, but what it publishes breaks a local rule.
    Rejected,
    /// The server could not be started or reached, or did not answer in time.
    Failed,
    /// It was ready, then its connection ended without being asked to.
    Lost,
}

impl AliasStatus {
    pub fn label(self) -> &'static str {
        match self {
            AliasStatus::Disconnected => "disconnected",
            AliasStatus::Connecting => "connecting",
            AliasStatus::Ready => "ready",
            AliasStatus::Rejected => "rejected",
            AliasStatus::Failed => "failed",
            AliasStatus::Lost => "lost",
        }
    }

    /// Rejected, failed or lost: something the operator should look at.
    pub fn is_trouble(self) -> bool {
        matches!(
            self,
            AliasStatus::Rejected | AliasStatus::Failed | AliasStatus::Lost
        )
    }
}

impl fmt::Display for AliasStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.label())
    }
}

/// The local effect a policy gives a tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PolicyEffect {
    Allow,
    Confirm,
    Deny,
}

impl PolicyEffect {
    pub fn label(self) -> &'static str {
        match self {
            PolicyEffect::Allow => "allow",
            PolicyEffect::Confirm => "confirm",
            PolicyEffect::Deny => "deny",
        }
    }
}

impl fmt::Display for PolicyEffect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.label())
    }
}

/// Where a published tool stands against its pinned definition (rule 14).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum PinStatus {
    /// Published exactly as the operator approved it.
    Pinned,
    /// No pin yet.
    New,
    /// Published differently from its pin.
    Changed,
    /// Not checked (`pin = "off"`, or a `deny` tool).
    #[default]
    Off,
}

impl PinStatus {
    pub fn label(self) -> &'static str {
        match self {
            PinStatus::Pinned => "pinned",
            PinStatus::New => "new",
            PinStatus::Changed => "changed",
            PinStatus::Off => "not pinned",
        }
    }
}

/// Who asked for a call (and so for its approval): travels with the call from
/// the moment it is proposed, never recovered from a label. An outside client
/// of the gateway becomes one more variant here.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Requester {
    Lead,
    Subagent(u32),
    Teammate(String),
    /// The operator, calling a tool by hand.
    Operator,
    /// An outside client of the gateway (`mcp-harness serve`), by the name its
    /// profile has in the config (`[serve.clients.NAME]`), never by what it
    /// says about itself.
    Client(String),
}

impl Requester {
    /// How the audit log and telemetry name it (`operator (by hand)`: the
    /// operator's own calls are never recorded as an agent's).
    pub fn record_label(&self) -> String {
        match self {
            Requester::Operator => "operator (by hand)".into(),
            other => other.to_string(),
        }
    }
}

impl fmt::Display for Requester {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Requester::Lead => f.write_str("lead"),
            Requester::Subagent(n) => write!(f, "subagent #{n}"),
            Requester::Teammate(name) => write!(f, "teammate {name}"),
            Requester::Operator => f.write_str("operator"),
            Requester::Client(name) => write!(f, "client {name}"),
        }
    }
}

/// Where a call goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    Builtin,
    Mcp {
        alias: String,
        remote_name: String,
    },
    /// Not in the tool set of the request it came from.
    Unknown,
}

/// How a turn ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TurnEnd {
    Completed,
    /// The operator interrupted it (the agent said so in a notice).
    Interrupted,
    /// It kept calling tools past the step limit (the agent said so).
    StepLimit {
        steps: u32,
    },
    /// The model provider failed; `r` retries.
    Failed,
    /// The agent's task panicked; the conversation is gone with it.
    Crashed,
}

impl fmt::Display for TurnEnd {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TurnEnd::Completed => f.write_str("completed"),
            TurnEnd::Interrupted => f.write_str("interrupted"),
            TurnEnd::StepLimit { steps } => {
                write!(f, "stopped at the step limit ({steps} requests)")
            }
            TurnEnd::Failed => f.write_str("failed"),
            TurnEnd::Crashed => f.write_str("crashed"),
        }
    }
}

/// Why a connection's tools left the registry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EndKind {
    /// The operator or the Lead disconnected it.
    Disconnected,
    /// A call did not answer in time; the connection was dropped.
    Timeout,
    /// The process exited or the transport closed.
    ConnectionLost,
    /// The operator killed its process.
    Killed,
    /// The harness is shutting down.
    Shutdown,
    /// After a re-list, what it publishes breaks a local rule.
    PolicyViolation,
    /// Its sign-in was refused and could not be renewed, or the operator
    /// signed out: it needs a new sign-in.
    AuthRequired,
}

/// Why a connection ended: the kind to act on, and the harness's own words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EndCause {
    pub kind: EndKind,
    /// Locally built (exit status, signal, the rule broken), never the server's words.
    pub text: String,
}

impl fmt::Display for EndCause {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

/// Where a call that runs as a task stands, as its server reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TaskStatus {
    Working,
    InputRequired,
    Completed,
    Failed,
    Cancelled,
}

impl TaskStatus {
    pub fn label(self) -> &'static str {
        match self {
            TaskStatus::Working => "working",
            TaskStatus::InputRequired => "input required",
            TaskStatus::Completed => "completed",
            TaskStatus::Failed => "failed",
            TaskStatus::Cancelled => "cancelled",
        }
    }
}
