//! The tasks of one connection: which are running (to cancel them when it
//! closes), the guard that cancels a task when its caller stops waiting, and
//! the cancels a closing connection waits for.

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::time::Duration;

use rmcp::model::{ClientRequest, CustomRequest};
use rmcp::service::{Peer, RoleClient};
use serde_json::json;
use tokio::task::JoinHandle;

/// How long a `tasks/cancel` may take when nobody waits for its answer.
pub(in crate::mcp) const CANCEL_GRACE: Duration = Duration::from_millis(500);

/// Which wire shape a task speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// 2025-11-25 experimental tasks.
    Experimental,
    /// The 2026-07-28 `io.modelcontextprotocol/tasks` extension.
    Extension,
}

impl Shape {
    pub(in crate::mcp) fn revision(self) -> &'static str {
        match self {
            Shape::Experimental => "2025-11-25",
            Shape::Extension => "2026-07-28",
        }
    }
}

/// The tasks running on one connection (to cancel them when it closes), and
/// the cancels already on their way for tasks whose caller stopped waiting.
#[derive(Default)]
pub struct TaskBook {
    running: Mutex<BTreeMap<String, Shape>>,
    /// A Ctrl-C drops the call and then closes the connection at once: the
    /// close waits for these (bounded), or the `tasks/cancel` would lose the
    /// race against the closing session and never reach the server.
    cancelling: Mutex<Vec<JoinHandle<()>>>,
}

impl TaskBook {
    fn lock(&self) -> std::sync::MutexGuard<'_, BTreeMap<String, Shape>> {
        self.running.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn lock_cancelling(&self) -> std::sync::MutexGuard<'_, Vec<JoinHandle<()>>> {
        self.cancelling.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub fn len(&self) -> usize {
        self.lock().len()
    }

    pub fn is_empty(&self) -> bool {
        self.lock().is_empty()
    }

    /// A task started: it runs until [`Self::remove`].
    pub(in crate::mcp) fn insert(&self, id: String, shape: Shape) {
        self.lock().insert(id, shape);
    }

    pub(in crate::mcp) fn remove(&self, id: &str) {
        self.lock().remove(id);
    }

    /// The ids of the running tasks.
    pub(in crate::mcp) fn ids(&self) -> Vec<String> {
        self.lock().keys().cloned().collect()
    }

    /// Sends `tasks/cancel` for a task nobody waits for any more, in the
    /// background; a close of the connection waits for it ([`Self::take_cancelling`]).
    pub(in crate::mcp) fn cancel_abandoned(
        &self,
        runtime: &tokio::runtime::Handle,
        peer: Peer<RoleClient>,
        id: String,
    ) {
        let handle = runtime.spawn(async move {
            let _ = tokio::time::timeout(CANCEL_GRACE, send_cancel(&peer, &id)).await;
        });
        let mut cancelling = self.lock_cancelling();
        cancelling.retain(|h| !h.is_finished());
        cancelling.push(handle);
    }

    /// The cancels still on their way (the connection is about to close).
    pub(in crate::mcp) fn take_cancelling(&self) -> Vec<JoinHandle<()>> {
        std::mem::take(&mut *self.lock_cancelling())
    }
}

/// Before a connection closes: sends `tasks/cancel` for each task still
/// running and waits for the cancels already sent for abandoned ones, at most
/// [`CANCEL_GRACE`] for all the answers (a server that does not answer must
/// not hold up the close).
pub(in crate::mcp) async fn cancel_before_close(
    peer: &Peer<RoleClient>,
    ids: &[String],
    cancelling: Vec<JoinHandle<()>>,
) {
    if ids.is_empty() && cancelling.is_empty() {
        return;
    }
    let cancels = futures::future::join_all(ids.iter().map(|id| send_cancel(peer, id)));
    let abandoned = futures::future::join_all(cancelling);
    let _ = tokio::time::timeout(CANCEL_GRACE, futures::future::join(cancels, abandoned)).await;
}

pub(in crate::mcp) async fn send_cancel(peer: &Peer<RoleClient>, task_id: &str) {
    let request = ClientRequest::CustomRequest(CustomRequest::new(
        "tasks/cancel",
        Some(json!({ "taskId": task_id })),
    ));
    if let Err(error) = peer.send_request(request).await {
        tracing::debug!(%error, "tasks/cancel failed");
    }
}
