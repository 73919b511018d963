//! The TUI's elicitor: a server's request for input becomes a form in the UI;
//! the call waits for the operator's answer (or a cancel on shutdown).

use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use futures::future::BoxFuture;
use serde_json::Value;
use tokio::sync::{mpsc, oneshot};

use crate::mcp::elicit::{ElicitationRequest, ElicitationResponse, Elicitor};
use crate::protocol::{
    BackendEvent, ElicitAnswer, ElicitationId, ElicitationView, FieldKind, FieldView,
};

pub struct TuiElicitor {
    events: mpsc::UnboundedSender<BackendEvent>,
    pending: Mutex<HashMap<ElicitationId, oneshot::Sender<ElicitAnswer>>>,
    next: AtomicU64,
}

impl TuiElicitor {
    pub fn new(events: mpsc::UnboundedSender<BackendEvent>) -> Self {
        Self {
            events,
            pending: Mutex::default(),
            next: AtomicU64::new(1),
        }
    }

    pub fn answer(&self, id: ElicitationId, answer: ElicitAnswer) {
        if let Some(tx) = self
            .pending
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&id)
        {
            let _ = tx.send(answer);
        }
    }

    /// Cancels every open form (shutdown, interruption).
    pub fn withdraw_all(&self) {
        let ids: Vec<ElicitationId> = self
            .pending
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .drain()
            .map(|(id, _)| id)
            .collect();
        for id in ids {
            let _ = self.events.send(BackendEvent::ElicitationWithdrawn(id));
        }
    }
}

impl Elicitor for TuiElicitor {
    fn elicit(&self, request: ElicitationRequest) -> BoxFuture<'_, ElicitationResponse> {
        Box::pin(async move {
            let id = self.next.fetch_add(1, Ordering::Relaxed);
            let (tx, rx) = oneshot::channel();
            self.pending
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .insert(id, tx);
            let view = ElicitationView {
                id,
                alias: request.alias.to_string(),
                message: request.message.clone(),
                fields: fields(&request.requested_schema),
            };
            let _ = self.events.send(BackendEvent::ElicitationRequested(view));
            match rx.await {
                Ok(ElicitAnswer::Accept(content)) => ElicitationResponse::Accept { content },
                Ok(ElicitAnswer::Decline) => ElicitationResponse::Decline,
                Ok(ElicitAnswer::Cancel) | Err(_) => ElicitationResponse::Cancel,
            }
        })
    }
}

/// The form's fields, from the requested schema's properties.
pub fn fields(schema: &Value) -> Vec<FieldView> {
    let required: Vec<&str> = schema["required"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    let Some(properties) = schema["properties"].as_object() else {
        return Vec::new();
    };
    properties
        .iter()
        .map(|(name, p)| {
            let choices: Option<Vec<String>> = p["enum"]
                .as_array()
                .map(|e| {
                    e.iter()
                        .filter_map(Value::as_str)
                        .map(str::to_string)
                        .collect()
                })
                .or_else(|| {
                    p["oneOf"].as_array().map(|o| {
                        o.iter()
                            .filter_map(|c| c["const"].as_str())
                            .map(str::to_string)
                            .collect()
                    })
                });
            let kind = match (choices, p["type"].as_str()) {
                (Some(c), _) if !c.is_empty() => FieldKind::Choice(c),
                (_, Some("boolean")) => FieldKind::Boolean,
                (_, Some("integer")) => FieldKind::Integer,
                (_, Some("number")) => FieldKind::Number,
                _ => FieldKind::Text,
            };
            let default = p.get("default").map(|d| match d {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            });
            FieldView {
                name: name.clone(),
                title: p["title"].as_str().map(str::to_string),
                description: p["description"].as_str().map(str::to_string),
                kind,
                required: required.contains(&name.as_str()),
                default,
            }
        })
        .collect()
}
