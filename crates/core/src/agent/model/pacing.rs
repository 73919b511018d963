//! A replay's pace: between the acts of the scripted demo, the story waits for
//! the operator (a key in the TUI) or a few seconds, so a person can follow it.
//! Headless runs never enable it: nobody is there to press a key.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use tokio::sync::{Notify, watch};

#[derive(Debug)]
pub struct Pacing {
    enabled: AtomicBool,
    go: Notify,
    /// `Some(seconds)` while the replay waits (at most that long).
    waiting: watch::Sender<Option<u64>>,
}

impl Default for Pacing {
    fn default() -> Self {
        Self {
            enabled: AtomicBool::new(false),
            go: Notify::new(),
            waiting: watch::Sender::new(None),
        }
    }
}

impl Pacing {
    /// Pauses take effect from now on (the TUI's backend turns them on).
    pub fn enable(&self) {
        self.enabled.store(true, Ordering::Relaxed);
    }

    /// Ends the current pause, if any (a pause that has not begun is not skipped).
    pub fn go(&self) {
        self.go.notify_waiters();
    }

    /// Whether (and how long at most) the replay is waiting now.
    pub fn subscribe(&self) -> watch::Receiver<Option<u64>> {
        self.waiting.subscribe()
    }

    /// Waits for `go` or `up_to`, whichever comes first; at once when disabled.
    /// Dropping the future (an interrupt) ends the pause too.
    pub async fn pause(&self, up_to: Duration) {
        if !self.enabled.load(Ordering::Relaxed) || up_to.is_zero() {
            return;
        }
        let notified = self.go.notified();
        tokio::pin!(notified);
        // Registered before the UI hears of the pause, so no `go` is lost.
        notified.as_mut().enable();
        let _waiting = Waiting::start(&self.waiting, up_to.as_secs());
        tokio::select! {
            () = notified => {}
            () = tokio::time::sleep(up_to) => {}
        }
    }
}

/// Says "waiting" while it lives.
struct Waiting<'a>(&'a watch::Sender<Option<u64>>);

impl<'a> Waiting<'a> {
    fn start(sender: &'a watch::Sender<Option<u64>>, seconds: u64) -> Self {
        sender.send_replace(Some(seconds));
        Self(sender)
    }
}

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        self.0.send_replace(None);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_pause_ends_on_go_or_by_itself_and_only_when_enabled() {
        let pacing = std::sync::Arc::new(Pacing::default());
        let t = std::time::Instant::now();
        pacing.pause(Duration::from_secs(30)).await;
        assert!(t.elapsed() < Duration::from_secs(5), "disabled: no pause");
        pacing.enable();
        let mut waiting = pacing.subscribe();
        let paused = {
            let pacing = std::sync::Arc::clone(&pacing);
            tokio::spawn(async move { pacing.pause(Duration::from_secs(30)).await })
        };
        waiting.wait_for(Option::is_some).await.unwrap();
        pacing.go();
        tokio::time::timeout(Duration::from_secs(10), paused)
            .await
            .expect("go ends the pause")
            .unwrap();
        assert_eq!(*waiting.borrow_and_update(), None);
        let t = std::time::Instant::now();
        pacing.pause(Duration::from_millis(50)).await;
        assert!(
            t.elapsed() >= Duration::from_millis(50),
            "or it ends by itself"
        );
    }
}
