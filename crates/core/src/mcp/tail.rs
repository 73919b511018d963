//! The last bytes a server wrote to stderr, bounded: shown to the operator
//! (inert), never to the model.

use std::collections::VecDeque;
use std::sync::Mutex;
use std::time::Duration;

/// The last bytes a server wrote to stderr, bounded. Shown to the operator (inert),
/// never to the model.
#[derive(Debug)]
pub struct StderrTail {
    inner: Mutex<TailInner>,
    capacity: usize,
    /// Fired when the pipe reaches EOF (every writer has exited).
    eof: tokio_util::sync::CancellationToken,
}

#[derive(Debug, Default)]
struct TailInner {
    bytes: VecDeque<u8>,
    total: u64,
}

impl StderrTail {
    pub fn new(capacity: usize) -> Self {
        Self {
            inner: Mutex::new(TailInner::default()),
            capacity,
            eof: tokio_util::sync::CancellationToken::new(),
        }
    }

    /// Waits (at most `max`) until everything the server wrote has been read, so a
    /// report about a dead server includes its last words.
    pub async fn wait_eof(&self, max: Duration) {
        let _ = tokio::time::timeout(max, self.eof.cancelled()).await;
    }

    /// Every writer has closed the pipe.
    pub(super) fn mark_eof(&self) {
        self.eof.cancel();
    }

    pub fn push(&self, chunk: &[u8]) {
        let mut inner = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        inner.total += chunk.len() as u64;
        let keep = &chunk[chunk.len().saturating_sub(self.capacity)..];
        let overflow = (inner.bytes.len() + keep.len()).saturating_sub(self.capacity);
        inner.bytes.drain(..overflow);
        inner.bytes.extend(keep);
    }

    /// Total bytes ever written, including those no longer kept.
    pub fn total_bytes(&self) -> u64 {
        self.inner.lock().unwrap_or_else(|e| e.into_inner()).total
    }

    /// The last `max_lines` lines (lossy UTF-8, not yet sanitized).
    pub fn last_lines(&self, max_lines: usize) -> Vec<String> {
        let inner = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        let (a, b) = inner.bytes.as_slices();
        let text = String::from_utf8_lossy(&[a, b].concat()).into_owned();
        let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
        lines[lines.len().saturating_sub(max_lines)..]
            .iter()
            .map(|l| l.to_string())
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stderr_tail_keeps_only_the_last_bytes() {
        let tail = StderrTail::new(16);
        tail.push(b"first line\n");
        tail.push(b"second line\nthird\n");
        assert_eq!(tail.total_bytes(), 29);
        assert_eq!(tail.last_lines(5), vec!["cond line", "third"]);
        tail.push(&[b'x'; 100]);
        assert_eq!(tail.last_lines(1), vec!["x".repeat(16)]);
    }
}
