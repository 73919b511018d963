//! The two enums that cross the UI/backend boundary, and the plain views they
//! carry. Nothing else crosses: the UI knows this module and its own state only.

use std::time::{Duration, Instant};

use serde_json::Value;

/// Identifies one approval prompt.
pub type ApprovalId = u64;

/// Identifies one elicitation form.
pub type ElicitationId = u64;

/// UI → backend.
#[derive(Debug, Clone, PartialEq)]
pub enum Command {
    /// Send the operator's message to the Lead.
    Prompt(String),
    /// Run the last turn again (after a provider error).
    Retry,
    /// Interrupt the running turn (in-flight calls are cancelled).
    Interrupt,
    /// Connect this alias.
    Connect(String),
    /// Disconnect this alias (its tools are revoked at once).
    Disconnect(String),
    /// Disconnect, then connect again.
    Reconnect(String),
    /// SIGKILL the server's processes, so the watchdog can be watched at work.
    KillServer(String),
    /// The operator's answer to an approval prompt.
    Approval { id: ApprovalId, decision: Decision },
    /// Write a policy block for exactly what `alias` publishes into the config file.
    WritePolicy(String),
    /// Call a tool by hand through the same pipeline (policy, approval, timeout).
    CallTool { name: String, arguments: Value },
    /// Send a fresh view of the servers (stderr tails change without events).
    Refresh,
    /// The operator's answer to a server's request for input.
    Elicitation {
        id: ElicitationId,
        answer: ElicitAnswer,
    },
    /// Close everything and exit.
    Quit,
}

/// An approval answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    /// Run this call.
    Once,
    /// Run this call and every later call of this tool in this session.
    Always,
    /// Refuse; the model gets a "denied by operator" envelope.
    Deny,
}

/// An answer to an elicitation form.
#[derive(Debug, Clone, PartialEq)]
pub enum ElicitAnswer {
    /// Submitted with these values.
    Accept(serde_json::Map<String, Value>),
    /// Refused.
    Decline,
    /// Dismissed.
    Cancel,
}

/// Backend → UI.
#[derive(Debug, Clone, PartialEq)]
pub enum BackendEvent {
    /// The session is up.
    Started(SessionInfo),
    /// The Lead (or a subagent/teammate) started answering.
    TurnStarted,
    /// Streamed assistant text.
    AssistantDelta { agent: String, text: String },
    /// A tool call is about to run.
    ToolCallStarted(ToolCallView),
    /// A tool call finished.
    ToolCallFinished(ToolOutcomeView),
    /// A running call's progress, as its server reports it (`message` is the
    /// server's words: untrusted).
    CallProgress {
        id: String,
        progress: f64,
        total: Option<f64>,
        message: Option<String>,
    },
    /// Something the operator should know (compaction, interruption, resume).
    Notice(String),
    /// The model provider failed; the operator can retry.
    Error(String),
    /// The turn is over (`end` is a short label: completed, interrupted, …).
    TurnEnded { end: String, failed: bool },
    /// Every configured server as it stands now (sent on every change).
    Servers(Vec<ServerView>),
    /// The registry moved to a new snapshot version.
    Snapshot(u64),
    /// Tools just left the registry (the UI strikes them out for a moment).
    ToolsRevoked {
        alias: String,
        tools: Vec<String>,
        cause: String,
    },
    /// A `confirm` call waits for the operator.
    ApprovalRequested(ApprovalView),
    /// A pending prompt was withdrawn (the turn was interrupted, or shutdown).
    ApprovalWithdrawn(ApprovalId),
    /// A server asks the operator for input.
    ElicitationRequested(ElicitationView),
    /// A pending form was withdrawn (shutdown, interruption).
    ElicitationWithdrawn(ElicitationId),
    /// The result of an operator command (connect, write policy, …).
    Status(String),
    /// The backend has closed everything; the UI may exit.
    Stopped,
}

/// Who the operator is talking to.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SessionInfo {
    pub provider: String,
    pub model: String,
    /// A scripted replay, not a live model.
    pub replay: bool,
    /// Where the config came from (a path, or "the embedded default config").
    pub config: String,
    /// The config file in use, if any: the write-policy step edits it.
    pub config_file: Option<String>,
    /// Where the harness looks for a config file (said when there is none).
    pub config_default_path: Option<String>,
    pub session_id: Option<String>,
    /// No config file and no API key: show the first-run banner.
    pub first_run: bool,
}

/// Where a call goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OriginView {
    Builtin,
    Mcp { alias: String, remote_name: String },
    Unknown,
}

/// A tool call as the conversation shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolCallView {
    pub id: String,
    pub agent: String,
    /// The name the model called (exposed name for MCP tools).
    pub name: String,
    pub origin: OriginView,
    /// `allow`, `confirm`, or none when the tool is unknown.
    pub effect: Option<String>,
    pub arguments: Value,
}

/// How a call ended.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolOutcomeView {
    pub id: String,
    pub ok: bool,
    /// The text the model got (result, or the envelope's message).
    pub text: String,
    /// The envelope's code when it failed.
    pub code: Option<String>,
    /// What the server said that the model did not see (untrusted).
    pub server_output: Option<String>,
    pub elapsed_ms: u64,
}

/// One configured server: side panel, registry and health read from this.
#[derive(Debug, Clone, PartialEq)]
pub struct ServerView {
    pub alias: String,
    /// disconnected, connecting, ready, rejected, failed, lost.
    pub state: String,
    /// Why it is rejected/failed/lost (locally built).
    pub detail: Option<String>,
    /// The error code for rejected/failed.
    pub code: Option<String>,
    /// `stdio: cmd args…` or `http: url` (no secrets: the unexpanded config text).
    pub transport: String,
    pub exposed: usize,
    pub published: Vec<ToolView>,
    /// For `policy_mismatch`: published tools without a policy, and policies without a tool.
    pub policy_missing: Vec<String>,
    pub policy_extra: Vec<String>,
    pub health: Option<HealthView>,
}

/// A published tool and what became of it locally.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolView {
    /// As published (untrusted).
    pub name: String,
    pub title: Option<String>,
    pub description: Option<String>,
    /// As published: claims, not facts.
    pub annotations: Option<Value>,
    pub input_schema: Value,
    /// `mcp__alias__tool` when exposed.
    pub exposed_as: Option<String>,
    /// The local effect (`allow`/`confirm`/`deny`), if the policy has one.
    pub effect: Option<String>,
    /// Why it is not exposed, when it is not.
    pub why_not: Option<String>,
    /// The definition holds invisible code points (SPEC rule 15): shown as
    /// `<U+XXXX>`, removed for the model.
    pub hidden_text: bool,
}

/// How a connection is doing — or, once it ended, how it was doing (kept for
/// the post-mortem until the alias connects again).
#[derive(Debug, Clone, PartialEq)]
pub struct HealthView {
    pub pid: Option<u32>,
    /// When the connection opened, on the wall clock (`HH:MM:SS UTC`).
    pub connected_at: String,
    /// The same moment on the monotonic clock: the UI shows the age from it,
    /// so it never freezes between updates.
    pub opened: Instant,
    pub protocol_version: String,
    pub server_name: String,
    pub server_version: String,
    pub calls_ok: u64,
    pub calls_failed: u64,
    pub last_latency_ms: Option<u64>,
    /// When and what.
    pub last_error: Option<(String, String)>,
    /// The last lines of stderr (untrusted).
    pub stderr_tail: Vec<String>,
    /// Set once this connection ended.
    pub ended: Option<EndedView>,
}

/// When and why a connection ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EndedView {
    /// Wall clock, `HH:MM:SS UTC`.
    pub at: String,
    /// Locally built (a revocation cause, the process's exit).
    pub why: String,
    /// How long it had been open.
    pub lasted: Duration,
}

/// A `confirm` call waiting for the operator: local facts only.
#[derive(Debug, Clone, PartialEq)]
pub struct ApprovalView {
    pub id: ApprovalId,
    /// The id of the tool call this prompt is about (its conversation cell), when
    /// known: two queued calls of the same tool are told apart by it.
    pub call_id: Option<String>,
    pub tool: String,
    /// `None` for built-in tools.
    pub alias: Option<String>,
    pub remote_name: Option<String>,
    pub arguments: Value,
    /// Always "confirm": the reason for asking.
    pub effect: String,
    /// lead, subagent #1, teammate NAME.
    pub requested_by: String,
}

/// A server's request for input, as a form: its words (untrusted) and fields
/// built from the requested schema.
#[derive(Debug, Clone, PartialEq)]
pub struct ElicitationView {
    pub id: ElicitationId,
    pub alias: String,
    /// The server's message (untrusted: shown as its words).
    pub message: String,
    pub fields: Vec<FieldView>,
}

/// One field of an elicitation form.
#[derive(Debug, Clone, PartialEq)]
pub struct FieldView {
    pub name: String,
    pub title: Option<String>,
    pub description: Option<String>,
    pub kind: FieldKind,
    pub required: bool,
    /// The schema's default, as text for the form.
    pub default: Option<String>,
}

/// What a field takes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FieldKind {
    Text,
    Number,
    Integer,
    Boolean,
    Choice(Vec<String>),
}
