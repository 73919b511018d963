//! The raw JSON of chosen answers. rmcp's typed model drops what it does not
//! know — a tool's `execution.taskSupport`, and over Streamable HTTP whole tools
//! whose `x-mcp-header` annotations it finds invalid — but the published tool
//! is exactly what the server sent, so the listing reads the raw answer.
//!
//! Armed around one request; while armed the transports copy what passes
//! (stdio: the bytes as read, see `linecap`; HTTP: the body or event data of a
//! tapped POST, see `rawhttp`). Idle it costs one atomic load per read.

use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use rmcp::model::{NumberOrString, RequestId};
use serde_json::Value;

enum Chunk {
    /// Bytes of a newline-delimited stream, as read (lines may span chunks).
    Stream(Vec<u8>),
    /// One whole JSON-RPC message.
    Message(Vec<u8>),
}

#[derive(Default)]
pub struct RawTap {
    armed: AtomicUsize,
    chunks: Mutex<Vec<Chunk>>,
}

/// Keeps the tap armed; disarms (and forgets what it copied) when the last one drops.
pub struct Armed<'a>(&'a RawTap);

impl Drop for Armed<'_> {
    fn drop(&mut self) {
        if self.0.armed.fetch_sub(1, Ordering::SeqCst) == 1 {
            self.0.lock().clear();
        }
    }
}

impl RawTap {
    pub fn arm(&self) -> Armed<'_> {
        self.armed.fetch_add(1, Ordering::SeqCst);
        Armed(self)
    }

    pub fn is_armed(&self) -> bool {
        self.armed.load(Ordering::Relaxed) > 0
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Chunk>> {
        self.chunks.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// stdio: bytes read from the server's stdout.
    pub fn stream(&self, bytes: &[u8]) {
        if self.is_armed() && !bytes.is_empty() {
            let mut chunks = self.lock();
            match chunks.last_mut() {
                Some(Chunk::Stream(tail)) => tail.extend_from_slice(bytes),
                _ => chunks.push(Chunk::Stream(bytes.to_vec())),
            }
        }
    }

    /// HTTP: one whole message (a JSON body, or the data of one event).
    pub fn message(&self, bytes: Vec<u8>) {
        if self.is_armed() {
            self.lock().push(Chunk::Message(bytes));
        }
    }

    /// The raw `result` of the response to `id`, if it passed while armed.
    pub fn result_for(&self, id: &RequestId) -> Option<Value> {
        let chunks = self.lock();
        chunks.iter().find_map(|chunk| match chunk {
            Chunk::Message(bytes) => result_of(bytes, id),
            Chunk::Stream(bytes) => bytes
                .split(|b| *b == b'\n')
                .find_map(|line| result_of(line, id)),
        })
    }
}

fn result_of(bytes: &[u8], id: &RequestId) -> Option<Value> {
    let mut message: Value = serde_json::from_slice(bytes).ok()?;
    let matches = match (message.get("id")?, id) {
        (Value::Number(n), NumberOrString::Number(want)) => n.as_i64() == Some(*want),
        // The same leniency as rmcp's: "4" answers request 4.
        (Value::String(s), NumberOrString::Number(want)) => s.parse::<i64>().ok() == Some(*want),
        (Value::String(s), NumberOrString::String(want)) => s.as_str() == want.as_ref(),
        _ => false,
    };
    if !matches {
        return None;
    }
    message.get_mut("result").map(Value::take)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_answer_to_its_request_in_a_stream_or_among_messages() {
        let tap = RawTap::default();
        tap.stream(
            b"{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{\"a\":1}}\n{\"jsonrpc\":\"2.0\",\"id\":4,",
        );
        assert!(
            tap.result_for(&NumberOrString::Number(3)).is_none(),
            "not armed: nothing kept"
        );
        let armed = tap.arm();
        tap.stream(b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\"}\n{\"jsonrpc\":");
        tap.stream(b"\"2.0\",\"id\":7,\"result\":{\"tools\":[]}}\n");
        tap.message(br#"{"jsonrpc":"2.0","id":"8","result":{"x":true}}"#.to_vec());
        assert_eq!(
            tap.result_for(&NumberOrString::Number(7)),
            Some(serde_json::json!({"tools": []}))
        );
        assert_eq!(
            tap.result_for(&NumberOrString::Number(8)),
            Some(serde_json::json!({"x": true}))
        );
        assert!(tap.result_for(&NumberOrString::Number(9)).is_none());
        drop(armed);
        assert!(
            tap.result_for(&NumberOrString::Number(7)).is_none(),
            "disarming forgets"
        );
    }
}
