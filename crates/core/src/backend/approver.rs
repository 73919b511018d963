//! The TUI's approver. A call that needs the operator sends its request (which
//! names the call and who asks) to the backend loop, on the channel that
//! carries the session's events, and waits on a oneshot; it is denied when the
//! prompt is withdrawn (turn interrupted, shutdown) or left unanswered too long.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use futures::future::BoxFuture;
use tokio::sync::{mpsc, oneshot};

use super::Inbound;
use crate::mcp::{ApprovalDecision, ApprovalRequest, Approver};
use crate::protocol::{ApprovalId, Decision};

/// A prompt nobody answers is denied after this long.
const UNANSWERED: Duration = Duration::from_secs(15 * 60);

/// A request on its way to the backend loop.
pub struct Asked {
    pub id: ApprovalId,
    pub request: ApprovalRequest,
    pub reply: oneshot::Sender<Decision>,
}

/// The approver of the session's calls (the agents' and the operator's own).
pub struct TuiApprover {
    internal: mpsc::UnboundedSender<Inbound>,
    next: AtomicU64,
}

impl TuiApprover {
    pub fn new(internal: mpsc::UnboundedSender<Inbound>) -> Self {
        Self {
            internal,
            next: AtomicU64::new(1),
        }
    }

    /// Asks the operator about `request` and waits for the answer.
    pub async fn ask(&self, request: ApprovalRequest) -> ApprovalDecision {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        let (reply, answer) = oneshot::channel();
        let tool = request.tool.clone();
        // However this future ends — answered, timed out, or dropped because the
        // call was cancelled — the prompt leaves the screen.
        let _withdraw = Withdraw {
            id,
            internal: self.internal.clone(),
        };
        let asked = Asked { id, request, reply };
        if self.internal.send(Inbound::Asked(asked)).is_err() {
            return denied(&tool, "not approved: the harness is shutting down");
        }
        match tokio::time::timeout(UNANSWERED, answer).await {
            Ok(Ok(Decision::Once | Decision::Always)) => ApprovalDecision::Approved,
            Ok(Ok(Decision::Deny)) => denied(&tool, "denied by the operator"),
            Ok(Err(_)) => denied(
                &tool,
                "not approved: the prompt was withdrawn (interrupted or shutting down)",
            ),
            Err(_) => denied(
                &tool,
                "not approved: nobody answered the prompt within 15 minutes",
            ),
        }
    }
}

fn denied(tool: &str, why: &str) -> ApprovalDecision {
    ApprovalDecision::Denied {
        reason: format!("`{tool}` was {why}"),
    }
}

/// Takes a prompt off the screen when its asker stops waiting.
struct Withdraw {
    id: ApprovalId,
    internal: mpsc::UnboundedSender<Inbound>,
}

impl Drop for Withdraw {
    fn drop(&mut self) {
        let _ = self.internal.send(Inbound::Settled(self.id));
    }
}

impl Approver for TuiApprover {
    fn approve(&self, request: ApprovalRequest) -> BoxFuture<'_, ApprovalDecision> {
        Box::pin(self.ask(request))
    }
}
