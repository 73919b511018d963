//! A connect timeout that stops counting while a person is at the browser:
//! nothing in a connection attempt may take longer than `connect_timeout_ms`,
//! except the sign-in step, which the operator ends (or cancels) themselves.

use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::time::Duration;

use tokio::sync::Notify;
use tokio::time::Instant;

/// Shared by a connection attempt and its OAuth session. Cheap to clone.
#[derive(Clone, Default)]
pub struct Budget(Arc<Inner>);

#[derive(Default)]
struct Inner {
    paused: AtomicU32,
    /// Milliseconds spent paused, over the budget's whole life.
    paused_ms: AtomicU64,
    changed: Notify,
}

/// Resumes the budget when dropped.
pub struct Pause {
    budget: Budget,
    since: Instant,
}

impl Drop for Pause {
    fn drop(&mut self) {
        let ms = u64::try_from(self.since.elapsed().as_millis()).unwrap_or(u64::MAX);
        self.budget.0.paused_ms.fetch_add(ms, Ordering::SeqCst);
        self.budget.0.paused.fetch_sub(1, Ordering::SeqCst);
        self.budget.0.changed.notify_waiters();
    }
}

/// The budget ran out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Elapsed;

impl Budget {
    /// Stops the clock until the guard is dropped.
    pub fn pause(&self) -> Pause {
        self.0.paused.fetch_add(1, Ordering::SeqCst);
        self.0.changed.notify_waiters();
        Pause {
            budget: self.clone(),
            since: Instant::now(),
        }
    }

    fn paused_ms(&self) -> u64 {
        self.0.paused_ms.load(Ordering::SeqCst)
    }

    /// Like `tokio::time::timeout`, with time paused from now on not counted.
    pub async fn timeout<F: Future>(&self, limit: Duration, fut: F) -> Result<F::Output, Elapsed> {
        self.run(Instant::now() + limit, self.paused_ms(), fut)
            .await
    }

    /// Like `tokio::time::timeout_at` for a deadline set when the budget's
    /// attempt began: every pause of the budget moves it (a sign-in during
    /// `initialize` leaves `tools/list` its whole share).
    pub async fn until<F: Future>(&self, deadline: Instant, fut: F) -> Result<F::Output, Elapsed> {
        self.run(deadline, 0, fut).await
    }

    /// `deadline`, moved by the time paused beyond `base` ms.
    async fn run<F: Future>(
        &self,
        deadline: Instant,
        base: u64,
        fut: F,
    ) -> Result<F::Output, Elapsed> {
        tokio::pin!(fut);
        loop {
            let changed = self.0.changed.notified();
            tokio::pin!(changed);
            changed.as_mut().enable();
            let extra = Duration::from_millis(self.paused_ms() - base);
            let paused = self.0.paused.load(Ordering::SeqCst) > 0;
            tokio::select! {
                out = &mut fut => return Ok(out),
                // A pause or its end moves the deadline: look again.
                _ = &mut changed => continue,
                _ = tokio::time::sleep_until(deadline + extra), if !paused => {
                    if self.paused_ms() - base == extra.as_millis() as u64
                        && self.0.paused.load(Ordering::SeqCst) == 0
                    {
                        return Err(Elapsed);
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn paused_time_does_not_count() {
        let budget = Budget::default();
        let b = budget.clone();
        let started = Instant::now();
        // 1.5 s of work, of which 1.4 s paused, within a 1 s budget.
        let work = async move {
            tokio::time::sleep(Duration::from_millis(50)).await;
            let pause = b.pause();
            tokio::time::sleep(Duration::from_millis(1400)).await;
            drop(pause);
            tokio::time::sleep(Duration::from_millis(50)).await;
            7
        };
        assert_eq!(
            budget.timeout(Duration::from_millis(1000), work).await,
            Ok(7)
        );
        let slow = tokio::time::sleep(Duration::from_millis(1500));
        assert_eq!(
            budget.timeout(Duration::from_millis(300), slow).await,
            Err(Elapsed)
        );
        // A deadline set before the pause (the attempt's) moves by all of it.
        let rest = tokio::time::sleep(Duration::from_millis(100));
        assert_eq!(
            budget
                .until(started + Duration::from_millis(1000), rest)
                .await,
            Ok(())
        );
    }
}
