//! Who decides an outside client's `confirm` call when the gateway runs
//! headless: `--approve always` approves, `--approve never` (the default)
//! refuses with an envelope that says how to approve. Nothing the client sends
//! changes the answer.

use futures::future::BoxFuture;

use super::super::approver::{ApprovalDecision, ApprovalRequest, Approver};

/// `serve --approve`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ApproveMode {
    #[default]
    Never,
    Always,
}

/// The headless gateway's approver.
#[derive(Debug, Clone, Copy)]
pub struct GatewayApprover {
    pub mode: ApproveMode,
}

impl Approver for GatewayApprover {
    fn approve(&self, request: ApprovalRequest) -> BoxFuture<'_, ApprovalDecision> {
        let decision = match self.mode {
            ApproveMode::Always => ApprovalDecision::Approved,
            ApproveMode::Never => ApprovalDecision::Denied {
                reason: format!(
                    "`{}` needs approval (local policy: confirm) and this gateway runs with \
                     `--approve never`, so nobody can approve it; the operator can restart it as \
                     `mcp-harness serve --approve always`",
                    request.tool
                ),
            },
        };
        Box::pin(std::future::ready(decision))
    }

    fn decider(&self) -> &'static str {
        match self.mode {
            ApproveMode::Always => "serve --approve always",
            ApproveMode::Never => "serve --approve never",
        }
    }
}
