//! Server-sent events off a streamed reqwest body, parsed by `sse-stream`, with a
//! bound on how much one event may make us buffer (the parser itself has none).
//!
//! `sse-stream` reassembles lines across chunk boundaries as bytes and decodes
//! UTF-8 per complete line, so a character or a `\r\n` split between two reads
//! is fine. Two things it does not do for us: bound its buffers (hence the byte
//! counter below), and report a final event that lacks its blank line — at the
//! end of the body it drops it silently. The providers notice that as a missing
//! terminal event (`message_stop`, `[DONE]`).

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use bytes::Bytes;
use futures::StreamExt;
use futures::stream::BoxStream;
use sse_stream::{ByteStreamBody, Sse, SseStream};

use super::http::READ_TIMEOUT;

/// The largest event we accept; a reply's single delta is a few bytes, a
/// whole tool call's arguments rarely more than a few hundred KiB.
pub(crate) const MAX_EVENT_BYTES: usize = 16 << 20;

/// Why the body stopped yielding bytes.
#[derive(Debug, thiserror::Error)]
enum BodyError {
    #[error("{}", super::http::describe(.0))]
    Transport(reqwest::Error),
    #[error("one event grew past {} MiB without ending", MAX_EVENT_BYTES >> 20)]
    TooLarge,
}

type Body = ByteStreamBody<BoxStream<'static, Result<Bytes, BodyError>>, Bytes>;

/// The events of one streamed reply.
pub(crate) struct Events {
    inner: SseStream<Body>,
    /// Bytes received since the last event came out of the parser.
    pending: Arc<AtomicUsize>,
}

/// Why the event stream ended in the middle (the detail of
/// `ModelError::Malformed`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Broken {
    #[error("the stream stalled (no data for {} s)", READ_TIMEOUT.as_secs())]
    Stalled,
    /// The body went over its cap (the message says which).
    #[error("{0}")]
    TooLarge(String),
    #[error("the stream broke off: {0}")]
    BrokeOff(String),
    #[error("the event stream is not valid SSE: {0}")]
    NotSse(String),
}

impl Events {
    pub fn new(response: reqwest::Response) -> Self {
        let pending = Arc::new(AtomicUsize::new(0));
        let counter = Arc::clone(&pending);
        let bytes = response
            .bytes_stream()
            .map(move |chunk| {
                let chunk = chunk.map_err(BodyError::Transport)?;
                let total = counter.fetch_add(chunk.len(), Ordering::Relaxed) + chunk.len();
                if total > MAX_EVENT_BYTES {
                    return Err(BodyError::TooLarge);
                }
                Ok(chunk)
            })
            .boxed();
        Self {
            inner: SseStream::from_bytes_stream(bytes),
            pending,
        }
    }

    /// The next event; `Ok(None)` at the end of the body. `Err` says what broke,
    /// for `ModelError::Malformed`.
    pub async fn next(&mut self) -> Result<Option<Sse>, Broken> {
        match self.inner.next().await {
            None => Ok(None),
            Some(Ok(event)) => {
                self.pending.store(0, Ordering::Relaxed);
                Ok(Some(event))
            }
            Some(Err(sse_stream::Error::Body(error))) => {
                Err(match error.downcast_ref::<BodyError>() {
                    Some(BodyError::Transport(e)) if e.is_timeout() => Broken::Stalled,
                    Some(BodyError::TooLarge) => Broken::TooLarge(error.to_string()),
                    _ => Broken::BrokeOff(error.to_string()),
                })
            }
            Some(Err(other)) => Err(Broken::NotSse(other.to_string())),
        }
    }
}
