//! The TUI's elicitor: a server's request for input becomes a form in the UI;
//! the call waits for the operator's answer (or a cancel on shutdown). An
//! answer the server's own schema refuses is never sent as a silent `cancel`:
//! the form stays open with the problems on their fields.

use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use futures::future::BoxFuture;
use serde_json::Value;
use tokio::sync::{mpsc, oneshot};

use crate::mcp::elicit::{ElicitationRequest, ElicitationResponse, Elicitor};
use crate::mcp::schema;
use crate::protocol::{BackendEvent, ElicitAnswer, ElicitationId, ElicitationView, FieldProblem};

mod fields;

pub use fields::fields;

struct Open {
    reply: oneshot::Sender<ElicitAnswer>,
    /// The requested schema, to check an answer before it is sent.
    schema: Value,
    /// The fields' names (to put a problem on its field).
    names: Vec<String>,
}

pub struct TuiElicitor {
    events: mpsc::UnboundedSender<BackendEvent>,
    pending: Mutex<HashMap<ElicitationId, Open>>,
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

    /// The operator's answer. An accepted answer is checked against the
    /// server's schema (compiled offline, as every server schema) first: if it
    /// does not satisfy it, the form stays and the UI is told why.
    pub fn answer(&self, id: ElicitationId, answer: ElicitAnswer) {
        let mut pending = self.pending.lock().unwrap_or_else(|e| e.into_inner());
        if let (ElicitAnswer::Accept(content), Some(open)) = (&answer, pending.get(&id)) {
            let problems = check(&open.schema, &open.names, &Value::Object(content.clone()));
            if !problems.is_empty() {
                let _ = self
                    .events
                    .send(BackendEvent::ElicitationInvalid { id, problems });
                return;
            }
        }
        if let Some(open) = pending.remove(&id) {
            let _ = open.reply.send(answer);
            let _ = self.events.send(BackendEvent::ElicitationWithdrawn(id));
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

/// Every problem of `content` against the requested schema, each on its field
/// where the error names one.
fn check(requested: &Value, names: &[String], content: &Value) -> Vec<FieldProblem> {
    let validator = match schema::compile(requested) {
        Ok(v) => v,
        Err(e) => {
            let why = match e {
                schema::SchemaProblem::NotObject(d)
                | schema::SchemaProblem::ExternalRef(d)
                | schema::SchemaProblem::Invalid(d) => d,
            };
            return vec![FieldProblem {
                field: None,
                message: format!(
                    "the server's form schema cannot be checked ({why}); decline or cancel it"
                ),
            }];
        }
    };
    schema::validate(&validator, content)
        .into_iter()
        .map(|e| {
            let at = e.instance_path.trim_start_matches('/');
            let top = at.split('/').next().unwrap_or_default();
            let field = names
                .iter()
                .find(|n| n.as_str() == top)
                // A missing required property is reported on the object: the
                // message quotes its name.
                .or_else(|| {
                    names
                        .iter()
                        .find(|n| at.is_empty() && e.message.contains(&format!("\"{n}\"")))
                })
                .cloned();
            FieldProblem {
                field,
                message: e.message,
            }
        })
        .collect()
}

impl Elicitor for TuiElicitor {
    fn elicit(&self, request: ElicitationRequest) -> BoxFuture<'_, ElicitationResponse> {
        Box::pin(async move {
            let id = self.next.fetch_add(1, Ordering::Relaxed);
            let (tx, rx) = oneshot::channel();
            let fields = fields(&request.requested_schema, &request.order);
            self.pending
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .insert(
                    id,
                    Open {
                        reply: tx,
                        schema: request.requested_schema.clone(),
                        names: fields.iter().map(|f| f.name.clone()).collect(),
                    },
                );
            let view = ElicitationView {
                id,
                alias: request.alias.to_string(),
                during: request.call.map(|c| (c.id, c.requester)),
                may_be: request
                    .may_be
                    .into_iter()
                    .map(|c| (c.id, c.requester))
                    .collect(),
                message: request.message.clone(),
                fields,
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
