//! Who decides a `confirm` call. The TUI asks the operator; headless commands
//! decide from a flag. The harness never asks the server.

use futures::future::BoxFuture;
use serde_json::Value;

use super::names::ServerAlias;
use super::pins::PinHash;
use super::policy::Effect;
use crate::protocol::{CallId, Requester};

/// What the operator is asked to approve: local facts only (exposed name, alias,
/// arguments, local effect) — never the server's claims.
#[derive(Debug, Clone)]
pub struct ApprovalRequest {
    /// The call this request is about: its answer settles this call only.
    pub call: CallId,
    /// Who asks.
    pub requester: Requester,
    /// The name the model called (exposed name, or a built-in's name).
    pub tool: String,
    /// The server behind an MCP tool; `None` for built-in tools.
    pub alias: Option<ServerAlias>,
    /// The name as the server published it; `None` for built-in tools.
    pub remote_name: Option<String>,
    pub arguments: Value,
    pub effect: Effect,
    /// The exposed tool's pin, when its server is pinned: the definition the
    /// operator approves (`None` for built-ins and unpinned servers).
    pub definition: Option<PinHash>,
}

impl ApprovalRequest {
    /// The SHA-256 of the arguments' canonical JSON (RFC 8785): what the
    /// prompt and the audit record name, so an approval is of these arguments.
    pub fn arguments_sha256(&self) -> String {
        super::pins::canonical::hash(
            super::pins::canonical::canonical_value(&self.arguments).as_bytes(),
        )
        .to_string()
    }
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

    /// Who decides, for the audit log.
    fn decider(&self) -> &'static str {
        "operator"
    }
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

    fn decider(&self) -> &'static str {
        if self.approve {
            "command-line flag (approve all)"
        } else {
            "command-line flag (approve none)"
        }
    }
}
