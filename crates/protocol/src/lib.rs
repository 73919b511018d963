//! What crosses the UI/backend boundary: two enums (`Command` up, `BackendEvent`
//! down) and the views that replace each other (`Views`, over a `watch`
//! channel). Nothing else crosses: the UI knows this module and its own state
//! only.

pub mod diff;
mod kinds;
mod more;
mod offered;
mod views;

use serde_json::Value;

pub use kinds::{
    AliasStatus, EndCause, EndKind, PinStatus, PolicyEffect, Requester, Target, TaskStatus,
    TransportKind, TurnEnd,
};
pub use more::{
    Choice, Decided, DefaultValue, ExplainView, FieldProblem, GrantId, GrantView, HistoryItem,
    ResourceRow, ResourcesView, Rule, TextFormat, Withdrawal,
};
pub use offered::{
    ContentPart, ContentSource, MAX_ATTACHED, PromptArgRow, PromptRow, PromptUse, PromptsView,
    ResourceRef, ServerContentView, UserMessage,
};
pub use views::{
    ApprovalView, ArgProblem, ArgsCheck, ElicitationView, EndedView, FieldKind, FieldView,
    HealthView, PinChangeView, ServerView, ServingView, SessionInfo, SignInStatus, SignInView,
    SuspicionView, TaintView, TokenInfo, ToolCallView, ToolOutcomeView, ToolView, Views,
};

/// Identifies one approval prompt.
pub type ApprovalId = u64;

/// Identifies one tool call, from the moment it is proposed to its approval,
/// task status, progress, result and audit record: the model's tool-use id for
/// an agent's call, a harness-made one otherwise. Cheap to clone.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
#[serde(transparent)]
pub struct CallId(std::sync::Arc<str>);

impl CallId {
    pub fn new(id: impl Into<std::sync::Arc<str>>) -> Self {
        Self(id.into())
    }

    /// A process-unique id with this prefix (`operator-3`, `call-7`), for calls
    /// no model named.
    pub fn mint(prefix: &str) -> Self {
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        Self::new(format!("{prefix}-{n}"))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// A key that sorts ids in the order they were minted (the counter is
    /// shared by every prefix): `gw-9` before `gw-10`, which text order
    /// would reverse. Ids not minted here sort after, by their text.
    pub fn mint_order(&self) -> (u64, &str) {
        let n = self
            .0
            .rsplit_once('-')
            .and_then(|(_, n)| n.parse().ok())
            .unwrap_or(u64::MAX);
        (n, &self.0)
    }
}

impl std::fmt::Display for CallId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl PartialEq<str> for CallId {
    fn eq(&self, other: &str) -> bool {
        &*self.0 == other
    }
}

impl PartialEq<&str> for CallId {
    fn eq(&self, other: &&str) -> bool {
        &*self.0 == *other
    }
}

impl From<&str> for CallId {
    fn from(id: &str) -> Self {
        Self::new(id)
    }
}

impl From<String> for CallId {
    fn from(id: String) -> Self {
        Self::new(id)
    }
}

/// Identifies one elicitation form.
pub type ElicitationId = u64;

/// UI → backend.
#[derive(Debug, Clone, PartialEq)]
pub enum Command {
    /// Send the operator's message to the Lead (its attached resources are
    /// read first and follow the text, marked as server content).
    Prompt(UserMessage),
    /// Insert a server's prompt (`/alias:prompt key=value …`) as the server's
    /// words, and let the Lead answer it.
    UsePrompt(PromptUse),
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
    /// Write a policy block for exactly what `alias` publishes into the config file
    /// (and pin the tools it lists that have no pin yet).
    WritePolicy(String),
    /// Accept the changed definitions the operator reviewed (`seen`: the
    /// published sha256 of each, as shown), pin what `alias` published, and
    /// reconnect it. Refused if the server published something else since.
    AcceptPins { alias: String, seen: Vec<String> },
    /// Call a tool by hand through the same pipeline (policy, approval, timeout).
    CallTool { name: String, arguments: Value },
    /// Send fresh views of the servers (stderr tails change without events).
    Refresh,
    /// The operator's answer to a server's request for input.
    Elicitation {
        id: ElicitationId,
        answer: ElicitAnswer,
    },
    /// Which local rule decided this call (answered with `Explained`).
    Explain(CallId),
    /// Clear the Lead's session's flow taint (the operator's act, logged;
    /// the model has no way to do it).
    ClearTaint,
    /// Clear an outside client's session's flow taint (`serve`), by the
    /// client's configured name (the operator's act, logged).
    ClearClientTaint(String),
    /// List a connected server's resources (answered with `Resources`).
    ListResources(String),
    /// Read one resource for the operator (Enter in the Resources window):
    /// under its server's read policy (the key is the approval a `confirm`
    /// read asks for; `deny` is refused before anything is sent). Answered
    /// with `ServerContent`; the model does not get it.
    ReadResource(ResourceRef),
    /// List a connected server's prompts (answered with `Prompts`).
    ListPrompts(String),
    /// End a session grant: its tool asks again.
    RevokeGrant(GrantId),
    /// Write `allow` for a grant's tool into the config file (the operator confirmed).
    SaveGrant(GrantId),
    /// Go on with a paused replay (the scripted demo waits between acts).
    Continue,
    /// Sign in to this alias (OAuth): its authorization page is shown, then it connects.
    SignIn(String),
    /// The address the browser was sent to, pasted (for a browser on another machine).
    SignInPaste(String),
    /// Give up the sign-in in progress.
    SignInCancel,
    /// Sign out: revoke the alias's tools at once, then its token.
    SignOut(String),
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
    AssistantDelta { agent: Requester, text: String },
    /// A tool call is about to run.
    ToolCallStarted(ToolCallView),
    /// A tool call finished.
    ToolCallFinished(ToolOutcomeView),
    /// A running call's progress, as its server reports it (`message` is the
    /// server's words: untrusted).
    CallProgress {
        id: CallId,
        progress: f64,
        total: Option<f64>,
        message: Option<String>,
    },
    /// A running call runs as a task on its server; its status changed
    /// (`message` is the server's words: untrusted).
    CallTask {
        id: CallId,
        status: TaskStatus,
        message: Option<String>,
    },
    /// Something the operator should know (compaction, interruption, resume).
    Notice(String),
    /// The model provider failed; the operator can retry.
    Error(String),
    /// The turn is over.
    TurnEnded(TurnEnd),
    /// Tools just left the registry (the UI strikes them out, in place).
    ToolsRevoked {
        alias: String,
        /// Exposed names.
        tools: Vec<String>,
        cause: EndCause,
    },
    /// A `confirm` call waits for the operator.
    ApprovalRequested(ApprovalView),
    /// A pending prompt left without the operator's answer, and why.
    ApprovalWithdrawn { id: ApprovalId, why: Withdrawal },
    /// A server asks the operator for input.
    ElicitationRequested(ElicitationView),
    /// A form left: its answer was taken (and goes to the server), or it was
    /// withdrawn (shutdown, interruption).
    ElicitationWithdrawn(ElicitationId),
    /// The answer to a form does not satisfy the server's schema: the form stays,
    /// with the problems on their fields (nothing was sent).
    ElicitationInvalid {
        id: ElicitationId,
        problems: Vec<FieldProblem>,
    },
    /// How a call was decided (the answer to `Command::Explain`).
    Explained(ExplainView),
    /// A server's resources (the answer to `Command::ListResources`).
    Resources(ResourcesView),
    /// A server says its resources changed: an open listing asks again.
    ResourcesChanged(String),
    /// A server's prompts (the answer to `Command::ListPrompts`).
    Prompts(PromptsView),
    /// A server says its prompts changed.
    PromptsChanged(String),
    /// Server content the operator brought in (an attached resource, a
    /// prompt's messages), as the model got it.
    ServerContent(ServerContentView),
    /// The earlier conversation of a resumed session, and the servers it had
    /// connected (not reconnected: `Ctrl-R` does).
    Resumed {
        history: Vec<HistoryItem>,
        connected: Vec<String>,
    },
    /// A replay pauses between acts until `Continue` (or by itself after `seconds`).
    ReplayPaused { seconds: u64 },
    /// The paused replay goes on.
    ReplayResumed,
    /// A word for the status bar only (e.g. "a turn is running").
    Status(String),
    /// What the Lead's session holds now (flow control, SPEC rule 20): the
    /// status bar shows it until the operator clears it.
    Taint(TaintView),
    /// What an outside client's session (the gateway's, by its configured
    /// name) holds now; clean when the operator cleared it.
    ClientTaint { client: String, taint: TaintView },
    /// The result of an operator command (connect, write policy, …): the
    /// status bar says it, and the conversation keeps it on record.
    CommandResult(String),
    /// A sign-in waits for the browser: show its window.
    SignInStarted(SignInView),
    /// A pasted address was not the redirect the sign-in waits for (why).
    SignInPasteRefused(String),
    /// The sign-in is over (signed in and connected, failed, or cancelled).
    SignInEnded {
        alias: String,
        ok: bool,
        text: String,
    },
    /// The backend has closed everything; the UI may exit.
    Stopped,
}

#[cfg(test)]
mod tests {
    use super::CallId;

    #[test]
    fn call_ids_sort_in_the_order_they_were_minted() {
        let mut ids = [
            CallId::new("gw-10"),
            CallId::new("other"),
            CallId::new("lead-2"),
            CallId::new("gw-9"),
        ];
        ids.sort_by(|a, b| a.mint_order().cmp(&b.mint_order()));
        let order: Vec<&str> = ids.iter().map(CallId::as_str).collect();
        assert_eq!(order, ["lead-2", "gw-9", "gw-10", "other"]);
        let (first, second) = (CallId::mint("gw"), CallId::mint("lead"));
        assert!(first.mint_order() < second.mint_order());
    }
}
