//! The plain views the backend sends: what the UI shows, built from local
//! facts; every text that came from a server is marked as such.

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::Value;

use super::kinds::{AliasStatus, PinStatus, PolicyEffect, Requester, Target};
use super::more::{Choice, Decided, GrantView, TextFormat};
use super::{ApprovalId, CallId, ElicitationId};

/// What the UI shows that replaces itself whole (sent over a `watch` channel:
/// a newer value makes every older one irrelevant).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Views {
    /// Every configured server, in config order. A server whose tools did not
    /// change shares them (`Arc`) with the previous value.
    pub servers: Arc<[ServerView]>,
    /// The registry's snapshot version.
    pub snapshot: u64,
    /// The session's grants ("approve always"), oldest first.
    pub grants: Arc<[GrantView]>,
    /// The control room's gateway (`--serve`), while it serves.
    pub serving: Option<ServingView>,
}

/// The gateway the control room runs: where it listens and how many client
/// sessions are live there now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ServingView {
    pub addr: std::net::SocketAddr,
    /// Live MCP sessions of outside clients (one per connected host).
    pub sessions: usize,
}

/// Who the operator is talking to.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SessionInfo {
    pub provider: String,
    pub model: String,
    /// A scripted replay, not a live model.
    pub replay: bool,
    /// The Lead has no model (a config file of the operator's own, no
    /// `[model]`, no key): what to do about it. Turns are refused; servers,
    /// the registry and calls by hand work.
    pub no_model: Option<String>,
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

/// A tool call as the conversation shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolCallView {
    pub id: CallId,
    pub by: Requester,
    /// The name the model called (exposed name for MCP tools).
    pub name: String,
    pub target: Target,
    /// `allow` or `confirm`; none when the tool is unknown.
    pub effect: Option<PolicyEffect>,
    pub arguments: Value,
}

/// How a call ended.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolOutcomeView {
    pub id: CallId,
    pub ok: bool,
    /// The text the model got (result, or the envelope's message).
    pub text: String,
    /// The envelope's code when it failed.
    pub code: Option<String>,
    /// What the server said that the model did not see (untrusted).
    pub server_output: Option<String>,
    pub elapsed_ms: u64,
    /// Which local rule decided it.
    pub decided: Option<Decided>,
    /// When flow control stepped in (escalated or refused it): what it did
    /// and the calls that tainted the session, in the harness's words.
    pub flow: Option<String>,
    /// Arguments the harness left out before validation (`null`s the schema
    /// refuses at optional properties), as JSON pointers.
    pub dropped_nulls: Vec<String>,
}

/// One configured server: side panel, registry and health read from this.
#[derive(Debug, Clone, PartialEq)]
pub struct ServerView {
    pub alias: String,
    pub state: AliasStatus,
    /// Why it is rejected/failed/lost (locally built).
    pub detail: Option<String>,
    /// The error code for rejected/failed.
    pub code: Option<String>,
    /// `stdio: cmd args…` or `http: url` (no secrets: the unexpanded config text).
    pub transport: String,
    pub exposed: usize,
    /// In listing order; shared with earlier views while it does not change.
    pub published: Arc<[ToolView]>,
    /// For `policy_mismatch`: published tools without a policy, and policies without a tool.
    pub policy_missing: Vec<String>,
    pub policy_extra: Vec<String>,
    /// For `definition_changed` (and renames under `definition_unpinned`):
    /// each changed definition with its diff, for the operator to accept or not.
    pub pin_changes: Arc<[PinChangeView]>,
    /// Where its pins live (the lock file), for the acceptance's confirmation.
    pub pins_at: String,
    /// Refused because of its pins (`definition_changed`, `definition_unpinned`):
    /// the diff view can accept what it published.
    pub pins_refused: bool,
    pub health: Option<HealthView>,
    /// Signing in (OAuth): whether `s` is for it, and whether it is signed in.
    pub sign_in: SignInStatus,
    /// What the server said when its last connect failed or was rejected (its
    /// error text, an HTTP error body, its stderr tail): untrusted, for the
    /// operator only (the model never gets it), shown inert.
    pub server_output: Vec<String>,
    /// The config file changed how this live connection is launched or
    /// reached (or its timeouts, sizes, revision): it runs as it was opened
    /// until `r` reconnects it under the new config.
    pub config_changed: bool,
    /// Plaintext `http://` to a host that is not loopback, which the config
    /// allows (`allow_insecure_http`): the operator sees it marked.
    pub insecure_http: bool,
}

/// Signing in to an HTTP server (OAuth), as the operator deals with it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum SignInStatus {
    /// A stdio server, or `auth = "none"`.
    #[default]
    NotUsed,
    /// An HTTP server that may ask for a sign-in.
    Possible,
    /// It refused for want of a sign-in: `s` signs in.
    Needed,
    /// Its connection sends a token.
    SignedIn,
}

/// The token a connection sends, as the operator may see it (never the token).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TokenInfo {
    pub issuer: String,
    pub scopes: Vec<String>,
    /// `Bearer` or `DPoP`.
    pub token_type: String,
    /// When it expires, on the monotonic clock (the UI counts down from it).
    pub expires: Option<Instant>,
}

/// A sign-in waiting for the browser: the window shows the URL and waits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SignInView {
    pub alias: String,
    /// The authorization URL to open (built locally; the endpoint is the
    /// authorization server's).
    pub url: String,
    /// Where the browser comes back (the loopback listener).
    pub redirect: String,
    /// `None` when it was opened in a browser here; else why not.
    pub browser: Option<String>,
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
    /// Shared with the registry (never deep-copied for a view).
    pub input_schema: Arc<Value>,
    /// `mcp__alias__tool` when exposed.
    pub exposed_as: Option<String>,
    /// The local effect, if the policy has one.
    pub effect: Option<PolicyEffect>,
    /// Why it is not exposed, when it is not.
    pub why_not: Option<String>,
    /// The exposed tool's own compiled validator (when exposed): the call-by-hand
    /// editor checks with exactly what the call path will check.
    pub check: Option<ArgsCheck>,
    /// Against its pinned definition.
    pub pin: PinStatus,
    /// The definition holds invisible code points (SPEC rule 15): shown as
    /// `<U+XXXX>`, removed for the model.
    pub hidden_text: bool,
    /// What the poisoning screen found in the definition (empty: nothing):
    /// never trusted on first use.
    pub suspicious: Vec<SuspicionView>,
}

/// One tool whose published definition differs from its pin.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PinChangeView {
    /// The published name (untrusted).
    pub tool: String,
    pub old_sha256: String,
    pub new_sha256: String,
    /// Unified diff, pinned → published: inert, every hidden character shown
    /// as `<U+XXXX>` (it quotes the server's text: untrusted).
    pub diff: String,
    /// A new tool that is this gone tool renamed.
    pub renamed_from: Option<String>,
    /// Why the poisoning screen flags the published definition (empty:
    /// nothing). With an empty `old_sha256` the tool has no pin yet.
    pub suspicious: Vec<SuspicionView>,
}

/// One hit of the poisoning screen, as the operator reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SuspicionView {
    /// The rule's name (`model_tag`, `secret_file`, …).
    pub rule: String,
    /// Why it is suspicious (the harness's words).
    pub reason: String,
    /// Where in the definition (`description`, `inputSchema.properties.x.description`).
    pub field: String,
    /// The matched text: the server's words, untrusted.
    pub phrase: String,
}

/// One problem with a call's arguments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArgProblem {
    /// JSON pointer into the arguments (`""` for the whole object).
    pub path: String,
    /// Inert text (it may quote the schema).
    pub message: String,
}

/// Checks arguments, returning every problem.
type CheckFn = dyn Fn(&Value) -> Vec<ArgProblem> + Send + Sync;

/// A handle on an exposed tool's compiled argument validator.
#[derive(Clone)]
pub struct ArgsCheck(Arc<CheckFn>);

impl ArgsCheck {
    pub fn new(check: impl Fn(&Value) -> Vec<ArgProblem> + Send + Sync + 'static) -> Self {
        Self(Arc::new(check))
    }

    /// Every problem (bounded), or none when the call path would accept them.
    pub fn check(&self, arguments: &Value) -> Vec<ArgProblem> {
        (self.0)(arguments)
    }
}

impl PartialEq for ArgsCheck {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl std::fmt::Debug for ArgsCheck {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ArgsCheck")
    }
}

/// How a connection is doing — or, once it ended, how it was doing (kept for
/// the post-mortem until the alias connects again).
#[derive(Debug, Clone, PartialEq)]
pub struct HealthView {
    /// How the harness reaches the server.
    pub transport: crate::kinds::TransportKind,
    /// The stdio server's process (none over HTTP or WebSocket).
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
    /// Calls of this connection that run as tasks now, and that ran as tasks.
    pub tasks_running: usize,
    pub tasks_total: u64,
    pub last_latency_ms: Option<u64>,
    /// When and what.
    pub last_error: Option<(String, String)>,
    /// The last lines of stderr (untrusted).
    pub stderr_tail: Vec<String>,
    /// The OAuth token it sends: issuer, scopes, expiry (never the token).
    pub token: Option<TokenInfo>,
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
    /// The tool call this prompt is about (its conversation cell): two queued
    /// calls of the same tool are told apart by it.
    pub call_id: CallId,
    pub tool: String,
    /// `None` for built-in tools.
    pub alias: Option<String>,
    pub remote_name: Option<String>,
    pub arguments: Value,
    /// The reason for asking (`confirm`).
    pub effect: PolicyEffect,
    pub requested_by: Requester,
    /// The exposed tool's pin (SHA-256, hex) when its server is pinned.
    pub definition: Option<String>,
    /// The SHA-256 (hex) of the arguments' canonical JSON.
    pub arguments_sha256: String,
    /// Why flow control asks (a sink in a tainted session), in the harness's
    /// words naming the tainting calls; `None` when the policy alone asks.
    pub flow: Option<String>,
}

/// What the Lead's session has read (flow control): the status bar's
/// `flow: untrusted+private`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TaintView {
    pub untrusted: bool,
    pub private: bool,
}

impl TaintView {
    pub fn is_clean(self) -> bool {
        !self.untrusted && !self.private
    }

    /// `untrusted+private`, `untrusted`, `private`; `None` when clean.
    pub fn label(self) -> Option<&'static str> {
        match (self.untrusted, self.private) {
            (true, true) => Some("untrusted+private"),
            (true, false) => Some("untrusted"),
            (false, true) => Some("private"),
            (false, false) => None,
        }
    }
}

/// A server's request for input, as a form: its words (untrusted) and fields
/// built from the requested schema.
#[derive(Debug, Clone, PartialEq)]
pub struct ElicitationView {
    pub id: ElicitationId,
    pub alias: String,
    /// The call the question came during and who made it (an outside
    /// client's, through the gateway, is answered by the operator for it);
    /// `None` when the connection cannot tell (see `ElicitationRequest`).
    pub during: Option<(CallId, Requester)>,
    /// Without `during`, when two or more calls were in flight on the
    /// connection and it cannot tell which one the question came during:
    /// those calls (the form lists them; it is one of them).
    pub may_be: Vec<(CallId, Requester)>,
    /// The server's message (untrusted: shown as its words).
    pub message: String,
    pub fields: Vec<FieldView>,
}

/// One field of an elicitation form, in the server's order.
#[derive(Debug, Clone, PartialEq)]
pub struct FieldView {
    pub name: String,
    /// The server's label for it (untrusted).
    pub title: Option<String>,
    pub description: Option<String>,
    pub kind: FieldKind,
    pub required: bool,
    /// The schema's default (of the field's own type), if any.
    pub default: Option<Value>,
}

/// What a field takes (the spec's restricted schema, every type of it).
#[derive(Debug, Clone, PartialEq)]
pub enum FieldKind {
    Text {
        format: Option<TextFormat>,
        min_length: Option<u64>,
        max_length: Option<u64>,
    },
    Number {
        minimum: Option<f64>,
        maximum: Option<f64>,
    },
    Integer {
        minimum: Option<i64>,
        maximum: Option<i64>,
    },
    Boolean,
    /// One of these (plain `enum`, titled `oneOf`, legacy `enumNames`).
    Choice(Vec<Choice>),
    /// Any of these (an array of enum items), between `min` and `max` of them.
    Choices {
        options: Vec<Choice>,
        min: Option<u64>,
        max: Option<u64>,
    },
}
