//! The backend's book of approval prompts: which are open, which call each one
//! is about, and what the operator approved "always".
//!
//! "Always" is remembered per tool *definition on one connection* — the
//! connection id (never reused) plus the exposed tool's name, description,
//! schema and effect — not per name. A reconnected server, or a tool whose
//! definition changed, is a different identity and prompts again; nothing has
//! to be reset when that happens, so there is no moment in which a changed tool
//! could ride on an old approval.

use std::collections::HashMap;
use std::sync::Arc;

use serde_json::Value;
use tokio::sync::{mpsc, oneshot};

use super::approver::{Asked, BY_HAND};
use super::convert;
use crate::agent::events::AgentId;
use crate::mcp::{ConnectionId, Effect, Snapshot};
use crate::protocol::{ApprovalId, ApprovalView, BackendEvent, Decision, Origin};

/// What "approve always" was given to.
#[derive(Debug, Clone, PartialEq)]
enum Identity {
    /// A built-in tool (its definition is the harness's own).
    Builtin(String),
    /// An exposed MCP tool, as defined on one connection.
    Mcp {
        connection: ConnectionId,
        name: String,
        description: Option<String>,
        schema: Arc<Value>,
        effect: Effect,
    },
}

struct Pending {
    reply: oneshot::Sender<Decision>,
    /// `None` when the tool is no longer in the registry (the call will fail
    /// before anything is sent; "always" then has nothing to remember).
    identity: Option<Identity>,
}

pub struct Approvals {
    events: mpsc::UnboundedSender<BackendEvent>,
    pending: HashMap<ApprovalId, Pending>,
    always: Vec<Identity>,
    /// The call each agent has in flight, by agent label (`lead`, `subagent #1`):
    /// an agent runs its calls one at a time, so this names the call a prompt
    /// from that agent is about.
    in_flight: HashMap<String, String>,
    /// Who each agent label stands for (labels are how requests name their asker).
    origins: HashMap<String, Origin>,
}

impl Approvals {
    pub fn new(events: mpsc::UnboundedSender<BackendEvent>) -> Self {
        Self {
            events,
            pending: HashMap::new(),
            always: Vec::new(),
            in_flight: HashMap::new(),
            origins: HashMap::from([(BY_HAND.to_string(), Origin::Operator)]),
        }
    }

    pub fn call_started(&mut self, agent: &AgentId, id: &str) {
        let label = agent.to_string();
        self.origins
            .entry(label.clone())
            .or_insert_with(|| convert::origin(agent));
        self.in_flight.insert(label, id.to_string());
    }

    pub fn call_finished(&mut self, agent: &AgentId, id: &str) {
        let label = agent.to_string();
        if self.in_flight.get(&label).is_some_and(|open| open == id) {
            self.in_flight.remove(&label);
        }
    }

    /// Who a request's label stands for: every agent's call is announced (and
    /// recorded here) before it can ask; MCP calls are the Lead's by default.
    fn origin(&self, label: &str) -> Origin {
        self.origins.get(label).cloned().unwrap_or(Origin::Lead)
    }

    /// A call asks: approve it at once if its exact definition was approved
    /// "always", otherwise put the prompt on the screen.
    pub fn ask(&mut self, asked: Asked, snapshot: &Snapshot) {
        let Asked {
            id,
            request,
            call_id,
            reply,
        } = asked;
        if reply.is_closed() {
            // The call was cancelled before its prompt got here.
            return;
        }
        let identity = match &request.alias {
            None => Some(Identity::Builtin(request.tool.clone())),
            Some(_) => snapshot.resolve(&request.tool).map(|t| Identity::Mcp {
                connection: t.connection_id(),
                name: t.name.clone(),
                description: t.description.clone(),
                schema: Arc::clone(&t.input_schema),
                effect: t.effect,
            }),
        };
        if identity.as_ref().is_some_and(|i| self.always.contains(i)) {
            let _ = reply.send(Decision::Once);
            return;
        }
        let call_id = call_id.or_else(|| self.in_flight.get(&request.requested_by).cloned());
        let view = ApprovalView {
            id,
            call_id,
            tool: request.tool,
            alias: request.alias.as_ref().map(ToString::to_string),
            remote_name: request.remote_name,
            arguments: request.arguments,
            effect: convert::effect(request.effect),
            requested_by: self.origin(&request.requested_by),
        };
        self.pending.insert(id, Pending { reply, identity });
        let _ = self.events.send(BackendEvent::ApprovalRequested(view));
    }

    /// The operator answered prompt `id`.
    pub fn answer(&mut self, id: ApprovalId, decision: Decision) {
        let Some(pending) = self.pending.remove(&id) else {
            return;
        };
        if decision == Decision::Always
            && let Some(identity) = pending.identity
            && !self.always.contains(&identity)
        {
            self.always.push(identity);
        }
        let _ = pending.reply.send(decision);
    }

    /// The asker stopped waiting (answered, timed out or cancelled): if the
    /// prompt is still open, take it off the screen.
    pub fn settled(&mut self, id: ApprovalId) {
        if self.pending.remove(&id).is_some() {
            let _ = self.events.send(BackendEvent::ApprovalWithdrawn(id));
        }
    }

    /// Denies every open prompt (the turn was interrupted, or the harness quits).
    pub fn withdraw_all(&mut self) {
        for (id, _) in self.pending.drain() {
            let _ = self.events.send(BackendEvent::ApprovalWithdrawn(id));
        }
    }

    /// A connection ended: its approvals can never match again; drop them.
    pub fn connection_ended(&mut self, ended: ConnectionId) {
        self.always
            .retain(|i| !matches!(i, Identity::Mcp { connection, .. } if *connection == ended));
    }
}
