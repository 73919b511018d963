//! A cap on one stdio message. rmcp drops a line longer than 16 MiB and keeps
//! the connection, so the request it answered would only end at its timeout.
//! This reader sits under rmcp, counts the bytes of the current line, and ends
//! the stream once a line passes the cap: the connection ends at once with a
//! reason of its own ("a message larger than its max_message_bytes"), memory stays bounded
//! (rmcp discards as it reads), and the call fails fast with that reason.

use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, ReadBuf};

use super::rawtap::RawTap;

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

    /// Hands out `data` in pieces of `size` bytes, one piece per read, so a test
    /// says exactly how the bytes arrive instead of depending on buffer sizes.
    struct Pieces<'a> {
        data: &'a [u8],
        size: usize,
    }

    impl AsyncRead for Pieces<'_> {
        fn poll_read(
            mut self: Pin<&mut Self>,
            _cx: &mut Context<'_>,
            buf: &mut ReadBuf<'_>,
        ) -> Poll<std::io::Result<()>> {
            let n = self.size.min(self.data.len()).min(buf.remaining());
            let (piece, rest) = self.data.split_at(n);
            buf.put_slice(piece);
            self.data = rest;
            Poll::Ready(Ok(()))
        }
    }

    async fn read_all(data: &[u8], size: usize, limit: usize) -> (Vec<u8>, bool) {
        let tripped = Arc::new(AtomicBool::new(false));
        let mut reader = LineCap::new(Pieces { data, size }, limit, Arc::clone(&tripped));
        let mut out = Vec::new();
        // A buffer larger than any piece: each read returns exactly one piece.
        let mut buf = [0u8; 256];
        loop {
            let n = reader.read(&mut buf).await.unwrap();
            if n == 0 {
                break;
            }
            out.extend_from_slice(&buf[..n]);
        }
        (out, tripped.load(Ordering::Relaxed))
    }

    #[tokio::test]
    async fn a_line_over_the_limit_ends_the_stream_after_the_read_that_passed_it() {
        let data = b"short\nalso short\n0123456789012345678901234567890123456789\nnever read\n";
        let long_starts = data.iter().position(|b| *b == b'0').unwrap();
        // The limit is passed at the 21st byte of the long line; the stream ends
        // with the read that carried it, whatever the read sizes.
        let passed_at = long_starts + 21;
        for size in [1, 2, 7, 20, 64, data.len()] {
            let (out, tripped) = read_all(data, size, 20).await;
            assert!(tripped, "read size {size}");
            let delivered = passed_at.div_ceil(size) * size;
            assert_eq!(out, &data[..delivered.min(data.len())], "read size {size}");
        }
    }

    #[tokio::test]
    async fn lines_within_the_limit_pass_whole() {
        let data = b"a\nbb\nccc\n";
        for size in [1, 2, 4, data.len()] {
            let (out, tripped) = read_all(data, size, 3).await;
            assert!(!tripped, "read size {size}");
            assert_eq!(out, data, "read size {size}");
        }
    }
}
