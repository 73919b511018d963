//! The backend's book of approval prompts: which are open, which call each one
//! is about, what the operator granted "always", and how each call was decided.
//!
//! A grant ("always") is remembered per tool *definition on one connection* —
//! the connection id (never reused) plus the exposed tool's name, description,
//! schema and effect — not per name. A reconnected server, or a tool whose
//! definition changed, is a different identity and prompts again. The queue is
//! kept honest: a prompt whose tool was revoked or changed is withdrawn with a
//! notice, and an "always" settles the queued prompts it covers.

use std::collections::HashMap;
use std::sync::Arc;

use serde_json::Value;
use tokio::sync::{mpsc, oneshot};

use super::approver::Asked;
use super::convert;
use crate::mcp::pins::PinHash;
use crate::mcp::{CallId, ConnectionId, Effect, Snapshot};
use crate::protocol::{
    ApprovalId, ApprovalView, BackendEvent, Decided, Decision, GrantId, GrantView, Withdrawal,
};

/// What "approve always" was given to.
#[derive(Debug, Clone, PartialEq)]
enum Identity {
    /// A built-in tool (its definition is the harness's own).
    Builtin(String),
    /// An exposed MCP tool, as defined on one connection, for one outside
    /// client or (`None`) the session's own requesters.
    Mcp {
        client: Option<String>,
        connection: ConnectionId,
        name: String,
        description: Option<String>,
        schema: Arc<Value>,
        effect: Effect,
        /// The pin, when pinned: it covers what the fields above do not
        /// (title, annotations, output schema).
        definition: Option<PinHash>,
    },
}

impl Identity {
    /// The same tool, as the current snapshot has it (`false`: gone or changed).
    fn holds_in(&self, snapshot: &Snapshot) -> bool {
        match self {
            Identity::Builtin(_) => true,
            Identity::Mcp {
                connection,
                name,
                description,
                schema,
                effect,
                definition,
                ..
            } => snapshot.resolve(name).is_some_and(|t| {
                t.connection_id() == *connection
                    && t.description == *description
                    && t.input_schema == *schema
                    && t.effect == *effect
                    && t.definition == *definition
            }),
        }
    }

    fn connection(&self) -> Option<ConnectionId> {
        match self {
            Identity::Mcp { connection, .. } => Some(*connection),
            Identity::Builtin(_) => None,
        }
    }
}

struct Pending {
    reply: oneshot::Sender<Decision>,
    /// `None` when the tool is no longer in the registry (the call will fail
    /// before anything is sent; "always" then has nothing to remember).
    identity: Option<Identity>,
    /// The call the prompt is about (its request said so).
    call_id: CallId,
    tool: String,
    alias: Option<String>,
    remote_name: Option<String>,
}

struct Grant {
    view: GrantView,
    identity: Identity,
}

pub struct Approvals {
    events: mpsc::UnboundedSender<BackendEvent>,
    pending: HashMap<ApprovalId, Pending>,
    grants: Vec<Grant>,
    next_grant: GrantId,
    /// The grants changed (the views must be sent again).
    dirty: bool,
    /// How each call's approval went, by call id, until its result takes it.
    decided: HashMap<CallId, Decided>,
}

impl Approvals {
    pub fn new(events: mpsc::UnboundedSender<BackendEvent>) -> Self {
        Self {
            events,
            pending: HashMap::new(),
            grants: Vec::new(),
            next_grant: 1,
            dirty: false,
            decided: HashMap::new(),
        }
    }

    /// How call `id`'s approval went, if it was asked about (taken once).
    pub fn take_decided(&mut self, id: &CallId) -> Option<Decided> {
        self.decided.remove(id)
    }

    /// A call asks: approve it at once if a grant covers its exact definition,
    /// otherwise put the prompt on the screen.
    pub fn ask(&mut self, asked: Asked, snapshot: &Snapshot) {
        let Asked { id, request, reply } = asked;
        if reply.is_closed() {
            // The call was cancelled before its prompt got here.
            return;
        }
        let identity = match &request.alias {
            None => Some(Identity::Builtin(request.tool.clone())),
            Some(_) => snapshot.resolve(&request.tool).map(|t| Identity::Mcp {
                // An outside client's "always" holds for that client alone.
                client: match &request.requester {
                    crate::protocol::Requester::Client(name) => Some(name.clone()),
                    _ => None,
                },
                connection: t.connection_id(),
                name: t.name.clone(),
                description: t.description.clone(),
                schema: Arc::clone(&t.input_schema),
                effect: t.effect,
                definition: t.definition.clone(),
            }),
        };
        let arguments_sha256 = request.arguments_sha256();
        let call_id = request.call;
        // A flow escalation is never answered by an "always" grant: the
        // grant was given before the session held what it holds now.
        let granted = match &request.flow {
            Some(_) => None,
            None => identity.as_ref().and_then(|i| self.grant_for(i)),
        };
        if let Some(grant) = granted {
            self.record(&call_id, Decided::SessionGrant(grant));
            let _ = reply.send(Decision::Once);
            return;
        }
        let view = ApprovalView {
            id,
            call_id: call_id.clone(),
            tool: request.tool.clone(),
            alias: request.alias.as_ref().map(ToString::to_string),
            remote_name: request.remote_name.clone(),
            arguments_sha256,
            definition: request.definition.as_ref().map(ToString::to_string),
            arguments: request.arguments,
            effect: convert::effect(request.effect),
            requested_by: request.requester,
            flow: request.flow.as_ref().map(ToString::to_string),
        };
        self.pending.insert(
            id,
            Pending {
                reply,
                identity,
                call_id,
                tool: request.tool,
                alias: request.alias.as_ref().map(ToString::to_string),
                remote_name: request.remote_name,
            },
        );
        let _ = self.events.send(BackendEvent::ApprovalRequested(view));
    }

    /// The grant covering `identity`, counting one more use.
    fn grant_for(&mut self, identity: &Identity) -> Option<GrantId> {
        let grant = self.grants.iter_mut().find(|g| g.identity == *identity)?;
        grant.view.uses += 1;
        self.dirty = true;
        Some(grant.view.id)
    }

    fn record(&mut self, call_id: &CallId, decided: Decided) {
        self.decided.insert(call_id.clone(), decided);
    }

    /// The operator answered prompt `id`. "Always" becomes a grant, which
    /// settles every queued prompt of the same definition at once.
    pub fn answer(&mut self, id: ApprovalId, decision: Decision) {
        let Some(pending) = self.pending.remove(&id) else {
            return;
        };
        let decided = match (decision, &pending.identity) {
            (Decision::Once, _) | (Decision::Always, None) => Decided::ApprovedOnce,
            (Decision::Deny, _) => Decided::DeniedByOperator,
            (Decision::Always, Some(identity)) => {
                let grant = self.grant(identity.clone(), &pending);
                self.settle_covered(identity, grant);
                Decided::ApprovedAlways(grant)
            }
        };
        self.record(&pending.call_id, decided);
        let _ = pending.reply.send(decision);
    }

    fn grant(&mut self, identity: Identity, pending: &Pending) -> GrantId {
        if let Some(existing) = self.grants.iter().find(|g| g.identity == identity) {
            return existing.view.id;
        }
        let id = self.next_grant;
        self.next_grant += 1;
        self.grants.push(Grant {
            view: GrantView {
                id,
                tool: pending.tool.clone(),
                alias: pending.alias.clone(),
                remote_name: pending.remote_name.clone(),
                given_at: chrono::Utc::now().format("%H:%M:%S UTC").to_string(),
                uses: 0,
                client: match &identity {
                    Identity::Mcp { client, .. } => client.clone(),
                    Identity::Builtin(_) => None,
                },
            },
            identity,
        });
        self.dirty = true;
        id
    }

    /// Approves every queued prompt the new grant covers.
    fn settle_covered(&mut self, identity: &Identity, grant: GrantId) {
        let covered: Vec<ApprovalId> = self
            .pending
            .iter()
            .filter(|(_, p)| p.identity.as_ref() == Some(identity))
            .map(|(id, _)| *id)
            .collect();
        for id in covered {
            let Some(pending) = self.pending.remove(&id) else {
                continue;
            };
            if let Some(g) = self.grants.iter_mut().find(|g| g.view.id == grant) {
                g.view.uses += 1;
            }
            self.record(&pending.call_id, Decided::SessionGrant(grant));
            let _ = pending.reply.send(Decision::Once);
            let _ = self.events.send(BackendEvent::ApprovalWithdrawn {
                id,
                why: Withdrawal::Granted(grant),
            });
        }
    }

    /// The asker stopped waiting (answered, timed out or cancelled): if the
    /// prompt is still open, take it off the screen.
    pub fn settled(&mut self, id: ApprovalId) {
        if let Some(pending) = self.pending.remove(&id) {
            self.record(&pending.call_id, Decided::NotApproved);
            let _ = self.events.send(BackendEvent::ApprovalWithdrawn {
                id,
                why: Withdrawal::Settled,
            });
        }
    }

    /// Denies every open prompt (the turn was interrupted, or the harness quits).
    pub fn withdraw_all(&mut self) {
        let ids: Vec<ApprovalId> = self.pending.keys().copied().collect();
        for id in ids {
            self.withdraw(id, Withdrawal::Interrupted);
        }
    }

    fn withdraw(&mut self, id: ApprovalId, why: Withdrawal) {
        if let Some(pending) = self.pending.remove(&id) {
            self.record(&pending.call_id, Decided::NotApproved);
            // Dropping the reply tells the asker; the call path then finds
            // its tool gone and says so.
            let _ = self
                .events
                .send(BackendEvent::ApprovalWithdrawn { id, why });
        }
    }

    /// A connection ended: its prompts are withdrawn (with a notice) and its
    /// grants can never match again.
    pub fn connection_ended(&mut self, ended: ConnectionId, cause: &str) {
        let before = self.grants.len();
        self.grants
            .retain(|g| g.identity.connection() != Some(ended));
        self.dirty |= self.grants.len() != before;
        let gone: Vec<(ApprovalId, String)> = self
            .pending
            .iter()
            .filter(|(_, p)| p.identity.as_ref().and_then(Identity::connection) == Some(ended))
            .map(|(id, p)| (*id, p.tool.clone()))
            .collect();
        for (id, tool) in gone {
            self.withdraw(id, Withdrawal::Revoked(cause.to_string()));
            let _ = self.events.send(BackendEvent::Notice(format!(
                "withdrew the approval prompt for `{tool}`: its tools were revoked ({cause})"
            )));
        }
    }

    /// The registry changed (a re-list): a prompt or grant whose tool is gone
    /// or defined differently no longer stands.
    pub fn registry_changed(&mut self, snapshot: &Snapshot) {
        let before = self.grants.len();
        self.grants.retain(|g| g.identity.holds_in(snapshot));
        self.dirty |= self.grants.len() != before;
        let changed: Vec<(ApprovalId, String)> = self
            .pending
            .iter()
            .filter(|(_, p)| p.identity.as_ref().is_some_and(|i| !i.holds_in(snapshot)))
            .map(|(id, p)| (*id, p.tool.clone()))
            .collect();
        for (id, tool) in changed {
            self.withdraw(id, Withdrawal::Changed);
            let _ = self.events.send(BackendEvent::Notice(format!(
                "withdrew the approval prompt for `{tool}`: the server changed or withdrew the tool \
                 since it was asked (a changed tool is approved anew)"
            )));
        }
    }

    /// The grants as the Rules view shows them.
    pub fn grants(&self) -> Arc<[GrantView]> {
        self.grants.iter().map(|g| g.view.clone()).collect()
    }

    /// One grant's view (for `save to config`).
    pub fn grant_view(&self, id: GrantId) -> Option<GrantView> {
        self.grants
            .iter()
            .find(|g| g.view.id == id)
            .map(|g| g.view.clone())
    }

    /// Ends a grant: its tool asks again.
    pub fn revoke(&mut self, id: GrantId) -> Option<GrantView> {
        let at = self.grants.iter().position(|g| g.view.id == id)?;
        self.dirty = true;
        Some(self.grants.remove(at).view)
    }

    /// Whether the grants changed since the last call (the views must go out).
    pub fn take_dirty(&mut self) -> bool {
        std::mem::take(&mut self.dirty)
    }
}
