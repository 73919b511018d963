//! What a call's requester hears from its server while the call runs: the
//! progress notifications of that call, each one (the UI's progress event is
//! throttled; a client that asked for progress gets what the server sent).
//! The gateway taps its calls to pass their progress on to the outside client
//! under that client's own progress token.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use tokio::sync::mpsc;

use crate::protocol::CallId;

/// Progress notifications a tap holds before it drops newer ones: a reader
/// that cannot keep up misses progress, and the connection never waits.
const BACKLOG: usize = 64;

/// One progress notification of a call, as the server sent it.
#[derive(Debug, Clone, PartialEq)]
pub struct CallProgress {
    pub progress: f64,
    pub total: Option<f64>,
    pub message: Option<String>,
}

/// The taps of a hub's running calls, by call.
#[derive(Clone, Default)]
pub struct CallTaps(Arc<Mutex<HashMap<CallId, mpsc::Sender<CallProgress>>>>);

impl CallTaps {
    /// Hears `call`'s progress until the returned tap is dropped.
    pub fn tap(&self, call: &CallId) -> Tap {
        let (sender, receiver) = mpsc::channel(BACKLOG);
        self.lock().insert(call.clone(), sender);
        Tap {
            receiver,
            last: None,
            taps: self.clone(),
            call: call.clone(),
        }
    }

    /// Gives `progress` to `call`'s tap, if it has one.
    pub(crate) fn progress(&self, call: &CallId, progress: CallProgress) {
        if let Some(sender) = self.lock().get(call) {
            let _ = sender.try_send(progress);
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<CallId, mpsc::Sender<CallProgress>>> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// One call's progress, as it comes.
pub struct Tap {
    receiver: mpsc::Receiver<CallProgress>,
    /// The last notification taken.
    last: Option<CallProgress>,
    taps: CallTaps,
    call: CallId,
}

impl Tap {
    /// A progress notification already here, if any.
    pub fn try_next(&mut self) -> Option<CallProgress> {
        let next = self.receiver.try_recv().ok();
        self.remember(next)
    }

    /// The last notification taken, if any.
    pub fn last(&self) -> Option<&CallProgress> {
        self.last.as_ref()
    }

    fn remember(&mut self, next: Option<CallProgress>) -> Option<CallProgress> {
        if let Some(note) = &next {
            self.last = Some(note.clone());
        }
        next
    }

    /// The next progress notification (pending forever once there is none
    /// left and the call's tap is gone).
    pub async fn next(&mut self) -> Option<CallProgress> {
        let next = self.receiver.recv().await;
        self.remember(next)
    }
}

impl Drop for Tap {
    fn drop(&mut self) {
        self.taps.lock().remove(&self.call);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_tap_hears_its_call_only_and_goes_when_dropped() {
        let taps = CallTaps::default();
        let (a, b) = (CallId::new("a"), CallId::new("b"));
        let mut tap = taps.tap(&a);
        let p = |progress| CallProgress {
            progress,
            total: Some(100.0),
            message: None,
        };
        taps.progress(&b, p(1.0));
        taps.progress(&a, p(2.0));
        assert_eq!(tap.next().await, Some(p(2.0)));
        drop(tap);
        assert!(taps.lock().is_empty());
        taps.progress(&a, p(3.0));
    }
}
