//! The agent's and the MCP layer's types → the protocol's, in one place: the UI
//! matches on these enums, never on the text they display as.

use crate::agent::events::{CallTarget, TurnEnd as AgentTurnEnd};
use crate::mcp::{AliasState, DefinitionChange, Effect, PinState, RevokeCause};
use crate::protocol::{
    AliasStatus, EndCause, EndKind, PinChangeView, PinStatus, PolicyEffect, Target, TaskStatus,
    TurnEnd,
};

pub fn effect(effect: Effect) -> PolicyEffect {
    match effect {
        Effect::Allow => PolicyEffect::Allow,
        Effect::Confirm => PolicyEffect::Confirm,
        Effect::Deny => PolicyEffect::Deny,
    }
}

pub fn pin(state: PinState) -> PinStatus {
    match state {
        PinState::Pinned => PinStatus::Pinned,
        PinState::New => PinStatus::New,
        PinState::Changed => PinStatus::Changed,
        PinState::Off => PinStatus::Off,
    }
}

pub fn pin_change(change: &DefinitionChange) -> PinChangeView {
    PinChangeView {
        tool: change.tool.clone(),
        old_sha256: change.old_sha256.clone(),
        new_sha256: change.new_sha256.clone(),
        diff: change.diff.clone(),
        renamed_from: change.renamed_from.clone(),
        suspicious: change.suspicious.iter().map(suspicion).collect(),
    }
}

pub fn suspicion(s: &crate::mcp::screen::Suspicion) -> crate::protocol::SuspicionView {
    crate::protocol::SuspicionView {
        rule: s.rule.to_string(),
        reason: s.reason.to_string(),
        field: s.field.clone(),
        phrase: s.phrase.clone(),
    }
}

pub fn target(target: CallTarget) -> Target {
    match target {
        CallTarget::Builtin => Target::Builtin,
        CallTarget::Mcp { alias, remote_name } => Target::Mcp { alias, remote_name },
        CallTarget::Unknown => Target::Unknown,
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
        RevokeCause::AuthRequired { .. } => EndKind::AuthRequired,
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

pub fn task_status(state: crate::mcp::TaskState) -> TaskStatus {
    use crate::mcp::TaskState as S;
    match state {
        S::Working => TaskStatus::Working,
        S::InputRequired => TaskStatus::InputRequired,
        S::Completed => TaskStatus::Completed,
        S::Failed => TaskStatus::Failed,
        S::Cancelled => TaskStatus::Cancelled,
    }
}

/// A listed prompt as the UI shows it (its text stays the server's: the UI
/// renders it inert).
pub fn prompt_row(prompt: &crate::mcp::Prompt) -> crate::protocol::PromptRow {
    crate::protocol::PromptRow {
        name: prompt.name.clone(),
        description: prompt.description.clone().or_else(|| prompt.title.clone()),
        arguments: prompt
            .arguments
            .iter()
            .map(|a| crate::protocol::PromptArgRow {
                name: a.name.clone(),
                description: a.description.clone(),
                required: a.required,
            })
            .collect(),
    }
}
