//! A cap on one stdio message. rmcp drops a line longer than 16 MiB and keeps
//! the connection, so the request it answered would only end at its timeout.
//! This reader sits under rmcp, counts the bytes of the current line, and ends
//! the stream once a line passes the cap: the connection ends at once with a
//! reason of its own ("a message larger than 16 MiB"), memory stays bounded
//! (rmcp discards as it reads), and the call fails fast with that reason.

use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, ReadBuf};

use super::rawtap::RawTap;

/// The largest stdio message accepted, in bytes: rmcp's own line limit.
pub const MAX_MESSAGE_BYTES: usize = rmcp::transport::async_rw::DEFAULT_MAX_LINE_LENGTH;

/// Wraps the server's stdout.
pub struct LineCap<R> {
    inner: R,
    line: usize,
    limit: usize,
    /// Set when a line passed the limit; read by the watchdog to say why the
    /// connection ended.
    tripped: Arc<AtomicBool>,
    /// Copies what is read while a listing wants the raw answer.
    tap: Option<Arc<RawTap>>,
}

impl<R> LineCap<R> {
    pub fn new(inner: R, limit: usize, tripped: Arc<AtomicBool>) -> Self {
        Self {
            inner,
            line: 0,
            limit,
            tripped,
            tap: None,
        }
    }

    /// Also hands what is read to `tap` (when it is armed).
    pub fn with_tap(mut self, tap: Arc<RawTap>) -> Self {
        self.tap = Some(tap);
        self
    }
}

impl<R: AsyncRead + Unpin> AsyncRead for LineCap<R> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        if self.tripped.load(Ordering::Relaxed) {
            // End of stream: rmcp closes the session.
            return Poll::Ready(Ok(()));
        }
        let before = buf.filled().len();
        let this = &mut *self;
        let polled = Pin::new(&mut this.inner).poll_read(cx, buf);
        if let Poll::Ready(Ok(())) = polled {
            if let Some(tap) = &this.tap {
                tap.stream(&buf.filled()[before..]);
            }
            let mut segments = buf.filled()[before..].split(|b| *b == b'\n');
            // The first segment continues the current line; every later one starts anew.
            let mut current = this
                .line
                .saturating_add(segments.next().map_or(0, <[u8]>::len));
            let mut longest = current;
            for segment in segments {
                current = segment.len();
                longest = longest.max(current);
            }
            this.line = current;
            if longest > this.limit {
                this.tripped.store(true, Ordering::Relaxed);
            }
        }
        polled
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::AsyncReadExt as _;

    #[tokio::test]
    async fn a_line_over_the_limit_ends_the_stream() {
        let tripped = Arc::new(AtomicBool::new(false));
        let data = b"short\nalso short\n0123456789012345678901234567890123456789\nnever read\n";
        let mut reader = LineCap::new(&data[..], 20, Arc::clone(&tripped));
        let mut out = Vec::new();
        reader.read_to_end(&mut out).await.unwrap();
        assert!(tripped.load(Ordering::Relaxed));
        assert!(out.len() < data.len());

        let ok = Arc::new(AtomicBool::new(false));
        let mut reader = LineCap::new(&b"a\nbb\nccc\n"[..], 3, Arc::clone(&ok));
        let mut out = Vec::new();
        reader.read_to_end(&mut out).await.unwrap();
        assert!(!ok.load(Ordering::Relaxed));
        assert_eq!(out, b"a\nbb\nccc\n");
    }
}
