//! One JSON-RPC message from a server, read as `wire` reads a stdio line: the
//! answer to a request the harness sent as raw JSON
//! (`ClientRequest::CustomRequest`) gets its `result` parsed once, as plain
//! JSON (`ServerResult::CustomResult`); everything else is parsed as rmcp
//! does. For transports that carry whole messages (WebSocket frames).

use std::collections::HashSet;
use std::sync::{Arc, Mutex};

use rmcp::model::{
    ClientJsonRpcMessage, ClientNotification, ClientRequest, CustomResult, JsonRpcMessage,
    JsonRpcResponse, JsonRpcVersion2_0, RequestId, ServerJsonRpcMessage, ServerResult,
};
use serde::Deserialize;
use serde::de::IgnoredAny;
use serde_json::Value;

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
    error: Option<IgnoredAny>,
}

/// What one incoming message is.
#[derive(Debug)]
pub(in crate::mcp) enum Decoded {
    Message(Box<ServerJsonRpcMessage>),
    /// JSON that is no message rmcp knows (an unknown notification, say):
    /// ignored, as rmcp ignores it.
    Skip,
    /// Not JSON at all.
    NotJson,
}

/// The ids of raw requests whose answers are still due (shared by the
/// sending and the reading half of a transport).
#[derive(Debug, Clone, Default)]
pub(in crate::mcp) struct RawIds(Arc<Mutex<HashSet<RequestId>>>);

impl RawIds {
    /// Notes what a message going out means for the answers to come: a raw
    /// request's answer is read raw; a cancelled one's never comes.
    pub(in crate::mcp) fn sending(&self, message: &ClientJsonRpcMessage) {
        match message {
            JsonRpcMessage::Request(request)
                if matches!(request.request, ClientRequest::CustomRequest(_)) =>
            {
                self.ids().insert(request.id.clone());
            }
            JsonRpcMessage::Notification(n) => {
                if let ClientNotification::CancelledNotification(c) = &n.notification
                    && let Some(id) = &c.params.request_id
                {
                    self.ids().remove(id);
                }
            }
            _ => {}
        }
    }

    /// Reads one message.
    pub(in crate::mcp) fn decode(&self, text: &[u8]) -> Decoded {
        let text = text.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(text);
        let waiting = !self.ids().is_empty();
        if waiting
            && let Ok(Frame {
                id: Some(id),
                result: Some(result),
                method: None,
                error: None,
            }) = serde_json::from_slice::<Frame>(text)
            && self.ids().remove(&id)
        {
            return Decoded::Message(Box::new(JsonRpcMessage::Response(JsonRpcResponse {
                jsonrpc: JsonRpcVersion2_0,
                id,
                result: ServerResult::CustomResult(CustomResult(result)),
            })));
        }
        match serde_json::from_slice::<ServerJsonRpcMessage>(text) {
            Ok(message) => {
                if let JsonRpcMessage::Error(e) = &message
                    && let Some(id) = &e.id
                {
                    self.ids().remove(id);
                }
                Decoded::Message(Box::new(message))
            }
            Err(error) if error.classify() == serde_json::error::Category::Data => {
                tracing::debug!(%error, "ignoring an incoming message");
                Decoded::Skip
            }
            Err(error) => {
                tracing::debug!(%error, "an incoming message is not JSON");
                Decoded::NotJson
            }
        }
    }

    /// A poisoned lock is taken as it is: a set of ids has no invariant to break.
    fn ids(&self) -> std::sync::MutexGuard<'_, HashSet<RequestId>> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::model::{CustomRequest, JsonRpcRequest};

    fn raw_request(id: i64) -> ClientJsonRpcMessage {
        JsonRpcMessage::Request(JsonRpcRequest {
            jsonrpc: JsonRpcVersion2_0,
            id: RequestId::Number(id),
            request: ClientRequest::CustomRequest(CustomRequest::new(
                "tools/call",
                Some(serde_json::json!({"name": "lookup"})),
            )),
        })
    }

    #[test]
    fn a_raw_requests_answer_is_plain_json_and_read_once() {
        let ids = RawIds::default();
        ids.sending(&raw_request(7));
        let answer = br#"{"jsonrpc":"2.0","id":7,"result":{"content":[],"weird":1}}"#;
        let Decoded::Message(message) = ids.decode(answer) else {
            panic!("not a message");
        };
        let JsonRpcMessage::Response(response) = *message else {
            panic!("not a response");
        };
        let ServerResult::CustomResult(CustomResult(value)) = response.result else {
            panic!("not read raw");
        };
        assert_eq!(value["weird"], 1);
        // The id is forgotten: a second answer is read as rmcp reads it.
        assert!(ids.ids().is_empty());
    }

    #[test]
    fn text_that_is_not_json_is_told_apart_from_an_unknown_message() {
        let ids = RawIds::default();
        assert!(matches!(ids.decode(b"hello"), Decoded::NotJson));
        assert!(matches!(ids.decode(b"{\"jsonrpc\":"), Decoded::NotJson));
        assert!(matches!(ids.decode(b"[1,2]"), Decoded::Skip));
    }
}
