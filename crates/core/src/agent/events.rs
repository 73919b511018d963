//! What the agent reports as it works. The backend forwards these to the UI; the
//! headless `run` prints them; nothing here prints or blocks.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use serde::Serialize;
use serde_json::Value;
use tokio::sync::mpsc;

use crate::mcp::secrets::SecretKind;
use crate::mcp::{CallId, Decision, Effect, Requester, ToolError};

/// Which agent is speaking.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum AgentId {
    Lead,
    Subagent(u32),
    Teammate(String),
}

impl fmt::Display for AgentId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AgentId::Lead => f.write_str("lead"),
            AgentId::Subagent(n) => write!(f, "subagent #{n}"),
            AgentId::Teammate(name) => write!(f, "teammate {name}"),
        }
    }
}

impl From<&AgentId> for Requester {
    /// An agent asks for its own calls.
    fn from(agent: &AgentId) -> Self {
        match agent {
            AgentId::Lead => Requester::Lead,
            AgentId::Subagent(n) => Requester::Subagent(*n),
            AgentId::Teammate(name) => Requester::Teammate(name.clone()),
        }
    }
}

/// Where a tool call goes (who asked is a [`Requester`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum CallTarget {
    Builtin,
    Mcp {
        alias: String,
        remote_name: String,
    },
    /// Not in this request's tool set.
    Unknown,
}

/// How a turn ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "end", rename_all = "snake_case")]
pub enum TurnEnd {
    /// The model finished its turn.
    Completed,
    /// The operator interrupted it; in-flight calls were cancelled.
    Interrupted,
    /// It kept calling tools past the step limit.
    StepLimit { steps: u32 },
    /// The model provider failed; the conversation is intact and can be retried.
    Failed { message: String },
}

/// One thing that happened in the agent.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum AgentEvent {
    /// A model request goes out with the tools of snapshot `snapshot_version`.
    Request {
        agent: AgentId,
        snapshot_version: u64,
        tools: usize,
        /// The names of the tools this request offers.
        offered: Vec<String>,
        /// The request carries `search_tools` in place of some exposed tools
        /// (more than `max_tools_in_request`): how many the snapshot holds.
        searched_from: Option<usize>,
    },
    /// Assistant text as it streams in.
    TextDelta { agent: AgentId, text: String },
    /// The assistant's whole text of one reply (after the stream ended).
    AssistantText { agent: AgentId, text: String },
    /// A tool call is about to run (approval, if needed, comes next).
    ToolCall {
        agent: AgentId,
        id: CallId,
        name: String,
        arguments: Value,
        origin: CallTarget,
        effect: Option<Effect>,
    },
    /// A tool call finished. `summary` is the text the model got (shortened).
    ToolResult {
        agent: AgentId,
        id: CallId,
        name: String,
        outcome: Result<String, ToolError>,
        /// How the policy (and the operator) decided it, where it was decided.
        #[serde(serialize_with = "decision_name")]
        decision: Decision,
        /// What the server said that the model did not see (operator only).
        server_output: Option<String>,
        #[serde(serialize_with = "millis")]
        elapsed: Duration,
        /// Arguments the harness left out (`null`s the schema refuses at
        /// optional properties), as JSON pointers.
        #[serde(skip_serializing_if = "Vec::is_empty")]
        dropped_nulls: Vec<String>,
        /// Kinds of credentials withheld from the model; `server_output`
        /// then holds them, and the audit log leaves it out.
        #[serde(skip_serializing_if = "Vec::is_empty")]
        redacted: Vec<SecretKind>,
    },
    /// Something the operator should know (compaction, interruption, resume).
    Notice { agent: AgentId, text: String },
    /// The model provider failed.
    Error { agent: AgentId, message: String },
    /// The turn is over.
    TurnDone { agent: AgentId, end: TurnEnd },
}

fn decision_name<S: serde::Serializer>(d: &Decision, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(match d {
        Decision::NotRun => "not_run",
        Decision::RefusedBySchema => "refused_by_schema",
        Decision::DeniedByPolicy => "denied_by_policy",
        Decision::DeniedByFlow => "denied_by_flow",
        Decision::Allow => "allow",
        Decision::Approved { .. } => "approved",
        Decision::Denied { .. } => "denied",
    })
}

fn millis<S: serde::Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_u64(d.as_millis().try_into().unwrap_or(u64::MAX))
}

/// Where agent events go. Never blocks; dropped if nobody listens.
#[derive(Clone)]
pub struct AgentEvents(Option<Arc<dyn Fn(AgentEvent) + Send + Sync>>);

impl AgentEvents {
    pub fn new() -> (Self, mpsc::UnboundedReceiver<AgentEvent>) {
        let (tx, rx) = mpsc::unbounded_channel();
        (Self::forward(move |event| drop(tx.send(event))), rx)
    }

    /// Hands every event to `f` (which must not block), e.g. onto a session's
    /// one ordered channel.
    pub fn forward(f: impl Fn(AgentEvent) + Send + Sync + 'static) -> Self {
        Self(Some(Arc::new(f)))
    }

    pub fn discard() -> Self {
        Self(None)
    }

    pub fn emit(&self, event: AgentEvent) {
        if let Some(f) = &self.0 {
            f(event);
        }
    }
}

impl std::fmt::Debug for AgentEvents {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("AgentEvents")
    }
}
