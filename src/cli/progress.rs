//! A progress bar on stderr for long headless commands (`bench`), drawn only
//! when stderr is a terminal. Ten redraws a second while it runs, none after;
//! the line is cleared when it finishes, so the report starts on a clean line.

use std::io::Write as _;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

const WIDTH: usize = 30;
const EVERY: Duration = Duration::from_millis(100);

pub struct Progress {
    stop: CancellationToken,
    task: JoinHandle<()>,
}

impl Progress {
    /// Starts drawing progress towards `total`; `done` counts what is done.
    pub fn start(total: usize, done: Arc<AtomicUsize>) -> Self {
        let stop = CancellationToken::new();
        let task = tokio::spawn(draw_until(done, total, stop.clone()));
        Self { stop, task }
    }

    /// Stops drawing and clears the line.
    pub async fn finish(self) {
        self.stop.cancel();
        let _ = self.task.await;
    }
}

async fn draw_until(done: Arc<AtomicUsize>, total: usize, stop: CancellationToken) {
    let started = Instant::now();
    let mut tick = tokio::time::interval(EVERY);
    loop {
        tokio::select! {
            () = stop.cancelled() => break,
            _ = tick.tick() => {
                let line = bar(done.load(Ordering::Relaxed), total, started.elapsed());
                let _ = write!(std::io::stderr().lock(), "\r{line}");
            }
        }
    }
    // Carriage return, then erase the whole line.
    let _ = write!(std::io::stderr().lock(), "\r\x1b[2K");
}

/// `[=========>          ] 1234/2000  4321 calls/s`
pub fn bar(done: usize, total: usize, elapsed: Duration) -> String {
    let total = total.max(1);
    let filled = (done.min(total) * WIDTH) / total;
    let mut bar = "=".repeat(filled);
    if filled < WIDTH {
        bar.push('>');
        bar.push_str(&" ".repeat(WIDTH - filled - 1));
    }
    let secs = elapsed.as_secs_f64();
    let rate = if secs > 0.0 { done as f64 / secs } else { 0.0 };
    format!("[{bar}] {done}/{total}  {rate:.0} calls/s")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bar_fills_with_progress() {
        let s = Duration::from_secs(1);
        assert_eq!(
            bar(0, 10, s),
            format!("[>{}] 0/10  0 calls/s", " ".repeat(29))
        );
        assert_eq!(
            bar(5, 10, s),
            format!("[{}>{}] 5/10  5 calls/s", "=".repeat(15), " ".repeat(14))
        );
        assert_eq!(
            bar(10, 10, s),
            format!("[{}] 10/10  10 calls/s", "=".repeat(30))
        );
    }
}
