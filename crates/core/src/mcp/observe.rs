//! Who watches the MCP layer from outside (telemetry): every finished call and
//! every event, as local facts only — names, effects, decisions, codes, times.
//! An observer rides on the hub's `EventSink` (`sink`); the call
//! path pays for it only when one is installed.

use std::time::{Duration, SystemTime};

use serde_json::Value;

use super::envelope::ToolErrorCode;
use super::events::McpEvent;
use super::policy::Effect;
use crate::protocol::{CallId, Requester};

/// Watches the MCP layer. Both methods run on the caller's path (the call
/// path, the event path): they must not block and should cost microseconds.
pub trait Observer: Send + Sync {
    /// Whether [`CallRecord::arguments`] should be filled (a copy per call).
    fn wants_arguments(&self) -> bool {
        false
    }

    /// A call finished: it ran, failed, or was refused before the wire.
    fn call(&self, record: &CallRecord<'_>);

    /// Something happened: an alias changed state, tools were registered or revoked.
    fn event(&self, event: &McpEvent);

    /// An outside client's request through the gateway finished (a tool
    /// call, after its own [`Observer::call`]; a resource read; a prompt):
    /// who asked and what the gateway added to its time.
    fn client_call(&self, _record: &super::gateway::ClientCallRecord<'_>) {}
}

/// One finished call, as the harness knows it.
#[derive(Debug)]
pub struct CallRecord<'a> {
    /// The call, as it was proposed.
    pub id: &'a CallId,
    /// The exposed name that was called (`mcp__alias__tool`).
    pub tool: &'a str,
    /// The server's alias; `None` when the name resolved to no server.
    pub alias: Option<&'a str>,
    /// The tool's name as the server published it, when it resolved.
    pub remote_name: Option<&'a str>,
    /// The local policy's effect, when known (`deny` for a tool the policy denies).
    pub effect: Option<Effect>,
    pub decision: Decision,
    /// Who asked: the Lead (also for the headless commands), a subagent, the operator by hand.
    pub requester: &'a Requester,
    /// `Ok` or the envelope's code.
    pub outcome: Result<(), ToolErrorCode>,
    /// When the call entered the pipeline, and how long it took in all
    /// (validation, approval, the wire).
    pub started: SystemTime,
    pub latency: Duration,
    /// Only when the observer asked for them.
    pub arguments: Option<&'a Value>,
}

/// How the policy and the operator decided a call: made once, where the call
/// is decided, and carried in its outcome (nobody works it out again later).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    /// The call stopped before any decision: unknown tool, not in this
    /// request's tool set, connection gone, interrupted.
    NotRun,
    /// The arguments do not match the input schema: nothing was asked or sent.
    RefusedBySchema,
    /// The local policy denies the tool outright.
    DeniedByPolicy,
    /// Flow control refused it (`[flows] on_trifecta = "deny"`): a sink in a
    /// session holding untrusted content and private data; nothing was asked
    /// or sent.
    DeniedByFlow,
    /// The policy says `allow`: nobody was asked.
    Allow,
    /// A `confirm` tool, approved by `decider` (the operator, a flag).
    Approved { decider: &'static str },
    /// A `confirm` tool, denied by `decider`.
    Denied { decider: &'static str },
}

impl Decision {
    pub fn label(self) -> &'static str {
        match self {
            Decision::NotRun
            | Decision::RefusedBySchema
            | Decision::DeniedByPolicy
            | Decision::DeniedByFlow => "none",
            Decision::Allow => "allow",
            Decision::Approved { .. } => "approved",
            Decision::Denied { .. } => "denied",
        }
    }
}
