//! The stdio transport: newline-delimited JSON-RPC, as rmcp's `AsyncRwTransport`
//! reads and writes it, but a request the harness sends as raw JSON
//! (`ClientRequest::CustomRequest`: `tools/call`, `tools/list`, `tasks/*`, …)
//! gets its answer's `result` parsed once, into a `serde_json::Value`, as
//! `ServerResult::CustomResult`. rmcp would parse it into its untagged
//! `ServerResult`, trying variants one by one (a serde error built per failed
//! variant) and building typed tools or content the harness turns back into
//! JSON anyway. The answers to the fast lane's requests (see `lane`) go
//! straight to their callers and rmcp never sees them. Everything else —
//! rmcp's own requests' answers (`initialize`, `server/discover`,
//! `subscriptions/listen`), notifications, the server's requests, errors — is
//! parsed exactly as rmcp does.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};

use futures::SinkExt as _;
use rmcp::RoleClient;
use rmcp::model::{
    ClientJsonRpcMessage, ClientNotification, ClientRequest, CustomResult, ErrorData,
    JsonRpcMessage, JsonRpcResponse, JsonRpcVersion2_0, RequestId, ServerJsonRpcMessage,
    ServerResult,
};
use rmcp::transport::Transport;
use serde::Deserialize;
use serde::de::IgnoredAny;
use serde_json::Value;
use tokio::io::{AsyncBufReadExt as _, AsyncRead, BufReader};

use super::lane::LaneIo;

/// The client end of a stdio session.
pub(in crate::mcp) struct StdioWire<R> {
    read: BufReader<R>,
    line: Vec<u8>,
    max_line: usize,
    discarding: bool,
    /// The writer, and the fast lane's callers waiting for answers.
    lane: Arc<LaneIo>,
    /// Requests rmcp sent as raw JSON whose answer has not come yet.
    raw_ids: Arc<Mutex<HashSet<RequestId>>>,
    invalid_request_pending: bool,
}

impl<R: AsyncRead> StdioWire<R> {
    pub(in crate::mcp) fn new(read: R, lane: Arc<LaneIo>, max_line: usize) -> Self {
        Self {
            read: BufReader::new(read),
            line: Vec::new(),
            max_line,
            discarding: false,
            lane,
            raw_ids: Arc::default(),
            invalid_request_pending: false,
        }
    }
}

impl<R> Drop for StdioWire<R> {
    fn drop(&mut self) {
        // No answer can come any more: the lane's callers learn it now.
        self.lane.abandon();
    }
}

/// A message's frame, its `result` parsed as plain JSON and the rest skipped.
#[derive(Deserialize)]
struct Frame {
    #[serde(default)]
    id: Option<RequestId>,
    #[serde(default)]
    result: Option<Value>,
    #[serde(default)]
    method: Option<IgnoredAny>,
    #[serde(default)]
    error: Option<Value>,
}

enum Line {
    Whole,
    Oversized,
    End,
}

impl<R> StdioWire<R>
where
    R: AsyncRead + Unpin + Send,
{
    /// One line into `self.line`, never more than `max_line` bytes buffered.
    /// Cancel-safe: a partial line stays in `self.line` for the next call.
    async fn read_line(&mut self) -> Line {
        loop {
            let available = match self.read.fill_buf().await {
                Ok(available) => available,
                Err(error) => {
                    tracing::debug!(%error, "reading the server's stdout");
                    return Line::End;
                }
            };
            if available.is_empty() {
                return Line::End;
            }
            let newline = available.iter().position(|b| *b == b'\n');
            let take = newline.map_or(available.len(), |at| at + 1);
            let mut oversized = false;
            if self.discarding {
                if newline.is_some() {
                    self.discarding = false;
                }
            } else if self.line.len().saturating_add(take) > self.max_line {
                self.line.clear();
                self.discarding = newline.is_none();
                oversized = true;
            } else {
                self.line.extend_from_slice(&available[..take]);
            }
            self.read.consume(take);
            if oversized {
                return Line::Oversized;
            }
            if newline.is_some() && !self.discarding && !self.line.is_empty() {
                return Line::Whole;
            }
        }
    }

    /// The message in `line`, or `None` to skip it.
    fn decode(&mut self, line: &[u8]) -> Option<ServerJsonRpcMessage> {
        let line = line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line);
        let lane = self.lane.waiting();
        if (lane || !self.ids().is_empty())
            && let Ok(Frame {
                id: Some(id),
                result,
                method: None,
                error,
            }) = serde_json::from_slice::<Frame>(line)
        {
            if lane
                && let RequestId::String(key) = &id
                && let Some(caller) = self.lane.take(key)
            {
                // A caller that stopped waiting is no one's loss.
                let _ = caller.send(match error {
                    Some(error) => Err(error),
                    None => Ok(result.unwrap_or(Value::Null)),
                });
                return None;
            }
            if let (Some(result), None) = (result, error)
                && self.ids().remove(&id)
            {
                return Some(JsonRpcMessage::Response(JsonRpcResponse {
                    jsonrpc: JsonRpcVersion2_0,
                    id,
                    result: ServerResult::CustomResult(CustomResult(result)),
                }));
            }
        }
        match serde_json::from_slice::<ServerJsonRpcMessage>(line) {
            Ok(message) => {
                if let JsonRpcMessage::Error(e) = &message
                    && let Some(id) = &e.id
                {
                    self.forget(id);
                }
                Some(message)
            }
            Err(error) => {
                use serde_json::error::Category;
                let value = serde_json::from_slice::<Value>(line).ok();
                // What rmcp ignores for compatibility: notifications it does not know.
                let notification = value.as_ref().is_some_and(|v| {
                    v.get("id").is_none() && v.get("method").and_then(Value::as_str).is_some()
                });
                match error.classify() {
                    Category::Data | Category::Io if !notification => {
                        tracing::debug!(%error, "protocol error on an incoming message");
                        self.invalid_request_pending = true;
                    }
                    _ => tracing::debug!(%error, "ignoring an incoming message"),
                }
                None
            }
        }
    }

    fn forget(&self, id: &RequestId) {
        self.ids().remove(id);
    }

    /// The ids of raw requests whose answers are still due (a poisoned lock
    /// is taken as it is: a set of ids has no invariant to break).
    fn ids(&self) -> std::sync::MutexGuard<'_, HashSet<RequestId>> {
        self.raw_ids.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// What rmcp answers to well-formed JSON that is no message: "Invalid request".
    async fn answer_invalid_request(&mut self) -> bool {
        let mut write = self.lane.writer().lock().await;
        let Some(framed) = write.as_mut() else {
            return false;
        };
        let response =
            ClientJsonRpcMessage::error(ErrorData::invalid_request("Invalid request", None), None);
        framed.send(response).await.is_ok()
    }
}

impl<R> Transport<RoleClient> for StdioWire<R>
where
    R: AsyncRead + Unpin + Send,
{
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: ClientJsonRpcMessage,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        match &item {
            JsonRpcMessage::Request(request)
                if matches!(request.request, ClientRequest::CustomRequest(_)) =>
            {
                self.ids().insert(request.id.clone());
            }
            JsonRpcMessage::Notification(n) => {
                if let ClientNotification::CancelledNotification(c) = &n.notification
                    && let Some(id) = &c.params.request_id
                {
                    self.forget(id);
                }
            }
            _ => {}
        }
        let write = Arc::clone(self.lane.writer());
        async move {
            match write.lock().await.as_mut() {
                Some(framed) => framed.send(item).await.map_err(Into::into),
                None => Err(std::io::Error::new(
                    std::io::ErrorKind::NotConnected,
                    "Transport is closed",
                )),
            }
        }
    }

    async fn receive(&mut self) -> Option<ServerJsonRpcMessage> {
        loop {
            if self.invalid_request_pending {
                if !self.answer_invalid_request().await {
                    return None;
                }
                self.invalid_request_pending = false;
            }
            match self.read_line().await {
                Line::Whole => {}
                Line::Oversized => {
                    tracing::error!(
                        max_line_length = self.max_line,
                        "an incoming message exceeded the maximum line length; discarded"
                    );
                    continue;
                }
                Line::End => return None,
            }
            let mut line = std::mem::take(&mut self.line);
            let text = line.strip_suffix(b"\n").unwrap_or(&line);
            let text = text.strip_suffix(b"\r").unwrap_or(text);
            let message = if text.is_empty() {
                None
            } else {
                self.decode(text)
            };
            line.clear();
            self.line = line;
            if let Some(message) = message {
                return Some(message);
            }
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        drop(self.lane.writer().lock().await.take());
        Ok(())
    }
}
