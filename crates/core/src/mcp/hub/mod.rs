//! The connection manager: one slot per configured alias, connect / disconnect /
//! kill by alias only, and the link between a connection ending and its tools
//! being revoked. Every method is async or instant; nothing blocks.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use super::auth::{AuthContext, Store};
use super::connection::Connection;
use super::connection::negotiate::Era;
use super::elicit::{DecliningElicitor, Elicitor};
use super::error::{ConnectError, HubError};
use super::events::{AliasState, McpEvent, RevokeCause};
use super::names::ServerAlias;
use super::pins::PinBook;
use super::registry::{ConnectionEntry, Registry, Snapshot};
use super::sink::EventSink;
use super::spec::{Limits, ServerSpec};
use super::vars::Vars;

pub use super::attempt::ConnectReport;
pub use builder::HubBuilder;
pub use reconfigure::{Changed, Reconfigured};

mod builder;
mod lifecycle;
mod reconfigure;

/// Cheap to clone; all clones share one set of connections.
#[derive(Clone)]
pub struct Hub {
    pub(super) inner: Arc<Inner>,
}

pub(super) struct Inner {
    specs: Mutex<BTreeMap<ServerAlias, ServerSpec>>,
    pub(super) limits: Limits,
    pub(super) vars: Vars,
    pub(super) registry: Registry,
    pub(super) events: EventSink,
    /// Answers the servers' elicitation requests.
    pub(super) elicitor: Arc<dyn Elicitor>,
    /// Who hears which running call's progress (the gateway, for its clients).
    pub(super) taps: super::taps::CallTaps,
    /// The session's `results/` directory: whole results over `max_result_bytes`.
    results: Option<std::path::PathBuf>,
    /// The protocol era each alias's server was last found to speak.
    eras: Mutex<BTreeMap<ServerAlias, Era>>,
    /// Where the tools' pins are kept (rule 14).
    pub(super) pins: Arc<PinBook>,
    /// OAuth: the token store and who takes sign-ins to a person.
    pub(super) auth: AuthContext,
    /// Each session's taint (SPEC rule 20).
    pub(super) flows: super::flows::Flows,
    state: Mutex<State>,
}

#[derive(Default)]
pub(super) struct State {
    pub(super) slots: BTreeMap<ServerAlias, Slot>,
    /// Connections told to close that may still be reaping their processes;
    /// `shutdown` waits for them too.
    closing: Vec<Arc<Connection>>,
    shutting_down: bool,
}

impl State {
    /// The slot whose current connection is `connection` (by identity, never by
    /// alias: a newer connection of the same alias is someone else's).
    pub(super) fn slot_of(&mut self, connection: &Connection) -> Option<&mut Slot> {
        self.slots.get_mut(connection.alias()).filter(|slot| {
            slot.connection
                .as_ref()
                .is_some_and(|c| c.id() == connection.id())
        })
    }

    pub(super) fn closing(&mut self, connection: Arc<Connection>) {
        self.closing.retain(|c| !c.is_finished());
        self.closing.push(connection);
    }
}

pub(super) struct Slot {
    state: AliasState,
    /// Set while connecting; cancelled by a disconnect during the attempt.
    attempt: Option<CancellationToken>,
    pub(super) connection: Option<Arc<Connection>>,
    /// The outcome of the last connection attempt (for the operator's views);
    /// after a success only the server's identity (its tools are in the registry).
    pub(super) last_report: Option<ConnectReport>,
}

impl Hub {
    pub(super) fn elicitor(&self) -> Arc<dyn Elicitor> {
        Arc::clone(&self.inner.elicitor)
    }

    /// The taps on running calls' progress.
    pub fn taps(&self) -> &super::taps::CallTaps {
        &self.inner.taps
    }

    /// Where whole results over `max_result_bytes` are kept, if anywhere.
    pub fn results_dir(&self) -> Option<std::path::PathBuf> {
        self.inner.results.clone()
    }

    /// Keeps the credentials in `text` (server text on its way to the model
    /// outside a call's result: a page of a saved result) from the model:
    /// each becomes `[redacted: KIND]`, the `redacted` event names call
    /// `call`, its session becomes private, and what was withheld comes back
    /// for the operator only.
    pub fn withhold_secrets(
        &self,
        call: &super::CallIdentity,
        tool: &str,
        text: &mut String,
    ) -> super::secrets::Redactions {
        let mut found = super::secrets::Redactions::default();
        if let Some(clean) = super::secrets::redact_str(text, &mut found) {
            *text = clean;
            self.inner.events.emit(McpEvent::Redacted {
                alias: None,
                call: Some(call.id.clone()),
                tool: tool.to_string(),
                kinds: found.kinds(),
            });
            // A credential is private data: its session holds some now.
            let private = super::flows::Labels::of(&[super::flows::Label::PrivateData]);
            self.tainted(&call.requester, &call.id, tool, private);
        }
        found
    }

    /// Where connection `id` keeps long texts until a call claims them: inside
    /// `results/` (so claiming is a rename), else in the temp dir.
    pub(super) fn spill_dir(&self, id: super::events::ConnectionId) -> std::path::PathBuf {
        let name = format!(".incoming-{}-{}", std::process::id(), id.0);
        match self.results_dir() {
            Some(dir) => dir.join(name),
            None => std::env::temp_dir().join(format!("mcp-harness{name}")),
        }
    }

    pub(super) fn known_era(&self, alias: &ServerAlias) -> Option<Era> {
        self.inner
            .eras
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(alias)
            .copied()
    }

    pub(super) fn remember_era(&self, alias: &ServerAlias, era: Option<Era>) {
        let mut eras = self.inner.eras.lock().unwrap_or_else(|e| e.into_inner());
        match era {
            Some(era) => eras.insert(alias.clone(), era),
            None => eras.remove(alias),
        };
    }

    /// The current registry snapshot: O(1).
    pub fn snapshot(&self) -> Snapshot {
        self.inner.registry.snapshot()
    }

    pub fn limits(&self) -> &Limits {
        &self.inner.limits
    }

    /// Every configured alias with its state, in config order.
    pub fn aliases(&self) -> Vec<(ServerAlias, AliasState)> {
        self.lock()
            .slots
            .iter()
            .map(|(a, s)| (a.clone(), s.state.clone()))
            .collect()
    }

    /// The spec of a configured alias (a copy: the policy can change at run time).
    pub fn spec(&self, alias: &str) -> Result<ServerSpec, HubError> {
        let specs = self.inner.specs.lock().unwrap_or_else(|e| e.into_inner());
        specs
            .get(&ServerAlias::new(alias))
            .cloned()
            .ok_or_else(|| HubError::UnknownAlias {
                alias: alias.to_string(),
                known: specs.keys().map(ToString::to_string).collect(),
            })
    }

    /// How many calls of one model reply may run on `alias` at once
    /// (`max_concurrent_calls`; the default for an alias not configured).
    /// The local labels of `remote_name` on `alias` (read at each use, so a
    /// re-read config is in force at once).
    pub fn labels(&self, alias: &ServerAlias, remote_name: &str) -> super::flows::Labels {
        let specs = self.inner.specs.lock().unwrap_or_else(|e| e.into_inner());
        specs
            .get(alias)
            .map_or(super::flows::Labels::NONE, |s| s.labels.of(remote_name))
    }

    /// Every session's taint (the operator's views; clearing it is the
    /// operator's act, which the caller logs).
    pub fn flows(&self) -> &super::flows::Flows {
        &self.inner.flows
    }

    /// Records that call `call` of `tool` (labelled `labels`) by `requester`
    /// succeeded: its session holds what it read. Built-in tools are recorded
    /// here by the agent; MCP calls by the call path itself.
    pub fn tainted(
        &self,
        requester: &crate::protocol::Requester,
        call: &crate::protocol::CallId,
        tool: &str,
        labels: super::flows::Labels,
    ) {
        if let Some((scope, taint)) = self.inner.flows.tainted(requester, call, tool, labels) {
            self.inner.events.emit(McpEvent::Tainted { scope, taint });
        }
    }

    /// The operator clears `scope`'s taint (the `taint_cleared` record says so).
    /// A resumed session holds what it held when it ended (its audit log
    /// says): restored, and reported as the session's taint.
    pub fn restore_taint(&self, scope: super::flows::FlowScope, taint: super::flows::Taint) {
        if taint.is_clean() {
            return;
        }
        self.inner.flows.restore(scope.clone(), taint.clone());
        self.inner.events.emit(McpEvent::Tainted { scope, taint });
    }

    pub fn clear_taint(&self, scope: &super::flows::FlowScope) {
        let was = self.inner.flows.clear(scope);
        if !was.is_clean() {
            self.inner.events.emit(McpEvent::TaintCleared {
                scope: scope.clone(),
                was,
            });
        }
    }

    pub fn max_concurrent_calls(&self, alias: &str) -> usize {
        let specs = self.inner.specs.lock().unwrap_or_else(|e| e.into_inner());
        specs
            .get(&ServerAlias::new(alias))
            .map_or(super::spec::MAX_CONCURRENT_CALLS, |s| {
                s.max_concurrent_calls
            })
    }

    /// Changes an alias's local policy at run time (after the operator wrote a
    /// new one into the config file). Takes effect on the next connect.
    pub fn change_policy(
        &self,
        alias: &str,
        policy: super::policy::ToolPolicy,
    ) -> Result<(), HubError> {
        let mut specs = self.inner.specs.lock().unwrap_or_else(|e| e.into_inner());
        let spec =
            specs
                .get_mut(&ServerAlias::new(alias))
                .ok_or_else(|| HubError::UnknownAlias {
                    alias: alias.to_string(),
                    known: Vec::new(),
                })?;
        spec.policy = policy;
        Ok(())
    }

    /// What the last connection attempt of this alias produced: for a rejection
    /// or failure the published tools and why; for a success only who answered
    /// (the snapshot has its tools).
    pub fn last_report(&self, alias: &str) -> Option<ConnectReport> {
        self.lock()
            .slots
            .get(&ServerAlias::new(alias))
            .and_then(|s| s.last_report.clone())
    }

    pub(super) fn set_state(&self, alias: &ServerAlias, slot: &mut Slot, state: AliasState) {
        slot.state = state.clone();
        self.inner.events.emit(McpEvent::AliasState {
            alias: alias.clone(),
            state,
        });
    }

    pub(super) fn lock(&self) -> MutexGuard<'_, State> {
        self.inner.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

fn failure_state(error: &ConnectError) -> AliasState {
    match error.kind() {
        super::error::FailureKind::Rejected => AliasState::Rejected {
            code: error.code,
            message: error.message.clone(),
        },
        super::error::FailureKind::Failed => AliasState::Failed {
            code: error.code,
            message: error.message.clone(),
        },
    }
}
