//! When the screen changes by itself: the loop sleeps until the next such
//! moment and no longer, so idle means no wake-ups at all.

use std::time::{Duration, Instant};

use super::cells::{CallStatus, Cell};
use super::layout::layout;
use super::state::AppState;

impl AppState {
    /// When the screen next changes by itself, if ever: a running call's clock
    /// (every `tick`), a status message expiring, an approval prompt, a form or
    /// "kill?" arming, the age of a live connection in a visible Health
    /// pane (once a second). The loop sleeps until then and no longer:
    /// idle means no wake-ups at all.
    pub fn next_wakeup(&self, tick: Duration) -> Option<Instant> {
        let running = self.cells.iter().rev().take(200).any(
            |c| matches!(c, Cell::ToolCall(t) if matches!(t.status, CallStatus::Running { .. })),
        );
        let deadlines = [
            running.then(|| self.now + tick),
            self.status.as_ref().map(|(_, until)| *until),
            self.arms_at().filter(|t| *t > self.now),
            self.form_arms_at().filter(|t| *t > self.now),
            self.kill_arms_at().filter(|t| *t > self.now),
            self.health_tick(),
        ];
        deadlines.into_iter().flatten().min()
    }

    /// The next whole second of the shown connection's age, while Health is on
    /// screen with a live connection (and never otherwise).
    fn health_tick(&self) -> Option<Instant> {
        layout(self.area, self).health?;
        let health = self.selected_server()?.health.as_ref()?;
        if health.ended.is_some() {
            return None;
        }
        let age = self.now.saturating_duration_since(health.opened);
        Some(health.opened + Duration::from_secs(age.as_secs() + 1))
    }

    /// Whether anything will change by itself (see [`Self::next_wakeup`]).
    pub fn animating(&self) -> bool {
        self.next_wakeup(Duration::from_millis(100)).is_some()
    }
}
