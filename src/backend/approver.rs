//! The TUI's approver: a queue of prompts the operator answers in a modal. The
//! call waits on a oneshot per prompt; a prompt is denied when withdrawn (turn
//! interrupted, shutdown) or left unanswered too long.

use std::collections::{HashMap, HashSet};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use futures::future::BoxFuture;
use tokio::sync::{mpsc, oneshot};

use crate::mcp::{ApprovalDecision, ApprovalRequest, Approver};
use crate::protocol::{ApprovalId, ApprovalView, BackendEvent, Decision};

/// A prompt nobody answers is denied after this long.
const UNANSWERED: Duration = Duration::from_secs(15 * 60);

pub struct TuiApprover {
    events: mpsc::UnboundedSender<BackendEvent>,
    pending: Mutex<HashMap<ApprovalId, oneshot::Sender<Decision>>>,
    /// Tools the operator approved "always" for this session.
    always: Mutex<HashSet<String>>,
    next: AtomicU64,
}

impl TuiApprover {
    pub fn new(events: mpsc::UnboundedSender<BackendEvent>) -> Self {
        Self {
            events,
            pending: Mutex::default(),
            always: Mutex::default(),
            next: AtomicU64::new(1),
        }
    }

    /// The operator answered prompt `id`.
    pub fn answer(&self, id: ApprovalId, decision: Decision) {
        if let Some(tx) = self
            .pending
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&id)
        {
            let _ = tx.send(decision);
        }
    }

    /// Forgets "approve always" for tools whose definition changed.
    pub fn forget(&self, tools: &[String]) {
        let mut always = self.always.lock().unwrap_or_else(|e| e.into_inner());
        for tool in tools {
            always.remove(tool);
        }
    }

    /// Denies every open prompt (the turn was interrupted, or the harness quits).
    pub fn withdraw_all(&self) {
        let pending: Vec<ApprovalId> = self
            .pending
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .drain()
            .map(|(id, _)| id)
            .collect();
        for id in pending {
            let _ = self.events.send(BackendEvent::ApprovalWithdrawn(id));
        }
    }
}

impl Approver for TuiApprover {
    fn approve(&self, request: ApprovalRequest) -> BoxFuture<'_, ApprovalDecision> {
        Box::pin(async move {
            if self
                .always
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .contains(&request.tool)
            {
                return ApprovalDecision::Approved;
            }
            let id = self.next.fetch_add(1, Ordering::Relaxed);
            let (tx, rx) = oneshot::channel();
            self.pending
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .insert(id, tx);
            let view = ApprovalView {
                id,
                tool: request.tool.clone(),
                alias: request.alias.as_ref().map(ToString::to_string),
                remote_name: request.remote_name.clone(),
                arguments: request.arguments.clone(),
                effect: request.effect.to_string(),
                requested_by: request.requested_by.clone(),
            };
            let _ = self.events.send(BackendEvent::ApprovalRequested(view));
            let denied = |why: &str| ApprovalDecision::Denied {
                reason: format!("`{}` was {why}", request.tool),
            };
            match tokio::time::timeout(UNANSWERED, rx).await {
                Ok(Ok(Decision::Once)) => ApprovalDecision::Approved,
                Ok(Ok(Decision::Always)) => {
                    self.always
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .insert(request.tool.clone());
                    ApprovalDecision::Approved
                }
                Ok(Ok(Decision::Deny)) => denied("denied by the operator"),
                Ok(Err(_)) => {
                    denied("not approved: the prompt was withdrawn (interrupted or shutting down)")
                }
                Err(_) => {
                    self.pending
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .remove(&id);
                    let _ = self.events.send(BackendEvent::ApprovalWithdrawn(id));
                    denied("not approved: nobody answered the prompt within 15 minutes")
                }
            }
        })
    }
}
