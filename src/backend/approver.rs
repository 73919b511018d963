//! The TUI's approvers. A call that needs the operator sends its request to the
//! backend loop (which knows the calls in flight, so the prompt names the call
//! it is about) and waits on a oneshot; it is denied when the prompt is
//! withdrawn (turn interrupted, shutdown) or left unanswered too long.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use futures::future::BoxFuture;
use tokio::sync::{mpsc, oneshot};

use super::Internal;
use crate::mcp::{ApprovalDecision, ApprovalRequest, Approver};
use crate::protocol::{ApprovalId, Decision};
use crate::store::Store;

/// A prompt nobody answers is denied after this long.
const UNANSWERED: Duration = Duration::from_secs(15 * 60);

/// A request on its way to the backend loop.
pub struct Asked {
    pub id: ApprovalId,
    pub request: ApprovalRequest,
    /// The call's id when the asker knows it (the operator's hand-made calls);
    /// otherwise the loop finds the asking agent's call in flight.
    pub call_id: Option<String>,
    pub reply: oneshot::Sender<Decision>,
}

/// The approver the session's agents use.
pub struct TuiApprover {
    internal: mpsc::UnboundedSender<Internal>,
    next: AtomicU64,
}

impl TuiApprover {
    pub fn new(internal: mpsc::UnboundedSender<Internal>) -> Self {
        Self {
            internal,
            next: AtomicU64::new(1),
        }
    }

    /// Asks the operator about `request` and waits for the answer.
    pub async fn ask(&self, request: ApprovalRequest, call_id: Option<String>) -> ApprovalDecision {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        let (reply, answer) = oneshot::channel();
        let tool = request.tool.clone();
        // However this future ends — answered, timed out, or dropped because the
        // call was cancelled — the prompt leaves the screen.
        let _withdraw = Withdraw {
            id,
            internal: self.internal.clone(),
        };
        let asked = Asked {
            id,
            request,
            call_id,
            reply,
        };
        if self.internal.send(Internal::Asked(asked)).is_err() {
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
    internal: mpsc::UnboundedSender<Internal>,
}

impl Drop for Withdraw {
    fn drop(&mut self) {
        let _ = self.internal.send(Internal::Settled(self.id));
    }
}

impl Approver for TuiApprover {
    fn approve(&self, request: ApprovalRequest) -> BoxFuture<'_, ApprovalDecision> {
        Box::pin(self.ask(request, None))
    }
}

/// The approver of one call the operator made by hand: its prompt names that
/// call, it is recorded as the operator's (not the Lead's), and audited.
pub struct HandApprover {
    pub tui: Arc<TuiApprover>,
    pub call_id: String,
    pub store: Option<Arc<Store>>,
}

/// Who asks for hand-made calls, in the prompt and the audit log.
pub const BY_HAND: &str = "operator (by hand)";

impl Approver for HandApprover {
    fn approve(&self, request: ApprovalRequest) -> BoxFuture<'_, ApprovalDecision> {
        Box::pin(async move {
            let tool = request.tool.clone();
            let decision = self.tui.ask(request, Some(self.call_id.clone())).await;
            if let Some(store) = &self.store {
                let label = match &decision {
                    ApprovalDecision::Approved => "approved",
                    ApprovalDecision::Denied { .. } => "denied",
                };
                store.audit_approval(&tool, BY_HAND, label, self.decider());
            }
            decision
        })
    }

    fn requester(&self) -> String {
        BY_HAND.into()
    }
}
