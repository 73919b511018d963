//! The agent's and the MCP layer's types → the protocol's, in one place: the UI
//! matches on these enums, never on the text they display as.

use crate::agent::events::{AgentId, Origin as CallOrigin, TurnEnd as AgentTurnEnd};
use crate::mcp::{AliasState, Effect, RevokeCause};
use crate::protocol::{AliasStatus, EndCause, EndKind, Origin, PolicyEffect, Target, TurnEnd};

pub fn origin(agent: &AgentId) -> Origin {
    match agent {
        AgentId::Lead => Origin::Lead,
        AgentId::Subagent(n) => Origin::Subagent(*n),
        AgentId::Teammate(name) => Origin::Teammate(name.clone()),
    }
}

pub fn effect(effect: Effect) -> PolicyEffect {
    match effect {
        Effect::Allow => PolicyEffect::Allow,
        Effect::Confirm => PolicyEffect::Confirm,
        Effect::Deny => PolicyEffect::Deny,
    }
}

pub fn target(origin: CallOrigin) -> Target {
    match origin {
        CallOrigin::Builtin => Target::Builtin,
        CallOrigin::Mcp { alias, remote_name } => Target::Mcp { alias, remote_name },
        CallOrigin::Unknown => Target::Unknown,
    }
}

pub fn status(state: &AliasState) -> AliasStatus {
    match state {
        AliasState::Disconnected => AliasStatus::Disconnected,
        AliasState::Connecting => AliasStatus::Connecting,
        AliasState::Ready { .. } => AliasStatus::Ready,
        AliasState::Rejected { .. } => AliasStatus::Rejected,
        AliasState::Failed { .. } => AliasStatus::Failed,
        AliasState::Lost { .. } => AliasStatus::Lost,
    }
}

pub fn cause(cause: &RevokeCause) -> EndCause {
    let kind = match cause {
        RevokeCause::Disconnected => EndKind::Disconnected,
        RevokeCause::Timeout { .. } => EndKind::Timeout,
        RevokeCause::ConnectionLost { .. } => EndKind::ConnectionLost,
        RevokeCause::Killed => EndKind::Killed,
        RevokeCause::Shutdown => EndKind::Shutdown,
        RevokeCause::PolicyViolation { .. } => EndKind::PolicyViolation,
    };
    EndCause {
        kind,
        text: cause.to_string(),
    }
}

pub fn turn_end(end: &AgentTurnEnd) -> TurnEnd {
    match end {
        AgentTurnEnd::Completed => TurnEnd::Completed,
        AgentTurnEnd::Interrupted => TurnEnd::Interrupted,
        AgentTurnEnd::StepLimit { steps } => TurnEnd::StepLimit { steps: *steps },
        AgentTurnEnd::Failed { .. } => TurnEnd::Failed,
    }
}
