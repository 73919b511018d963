//! Who decides a `confirm` call. The TUI asks the operator; headless commands
//! decide from a flag. The harness never asks the server.

use futures::future::BoxFuture;
use serde_json::Value;

use super::names::ServerAlias;
use super::policy::Effect;

/// What the operator is asked to approve: local facts only (exposed name, alias,
/// arguments, local effect) — never the server's claims.
#[derive(Debug, Clone)]
pub struct ApprovalRequest {
    pub tool: String,
    pub alias: ServerAlias,
    pub remote_name: String,
    pub arguments: Value,
    pub effect: Effect,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ApprovalDecision {
    Approved,
    /// `reason` goes into the envelope the model gets.
    Denied {
        reason: String,
    },
}

/// Decides `confirm` calls. Must not block; may take as long as the operator needs.
pub trait Approver: Send + Sync {
    fn approve(&self, request: ApprovalRequest) -> BoxFuture<'_, ApprovalDecision>;
}

/// The approver of headless commands: `--yes` approves, otherwise refused.
#[derive(Debug, Clone, Copy)]
pub struct FlagApprover {
    pub approve: bool,
}

impl Approver for FlagApprover {
    fn approve(&self, request: ApprovalRequest) -> BoxFuture<'_, ApprovalDecision> {
        let decision = if self.approve {
            ApprovalDecision::Approved
        } else {
            ApprovalDecision::Denied {
                reason: format!(
                    "`{}` needs confirmation (local policy: confirm) and no operator approved it",
                    request.tool
                ),
            }
        };
        Box::pin(std::future::ready(decision))
    }
}
