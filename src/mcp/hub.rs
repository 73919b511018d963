//! The connection manager: one slot per configured alias, connect / disconnect /
//! kill by alias only, and the link between a connection ending and its tools
//! being revoked. Every method is async or instant; nothing blocks.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use super::auth::{AuthContext, Store};
use super::connection::Connection;
use super::elicit::{DecliningElicitor, Elicitor};
use super::error::{ConnectError, HubError};
use super::events::{AliasState, EventSink, McpEvent, RevokeCause};
use super::names::ServerAlias;
use super::negotiate::Era;
use super::pins::PinBook;
use super::registry::{ConnectionEntry, Registry, Snapshot};
use super::spec::{Limits, ServerSpec};
use super::vars::Vars;

pub use super::attempt::ConnectReport;

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
    /// Answers elicitation requests of connections opened from now on.
    pub(super) elicitor: Mutex<Arc<dyn Elicitor>>,
    /// The session's `results/` directory: whole results over `max_result_bytes`.
    results: Mutex<Option<std::path::PathBuf>>,
    /// The protocol era each alias's server was last found to speak.
    eras: Mutex<BTreeMap<ServerAlias, Era>>,
    /// Where the tools' pins are kept (rule 14).
    pub(super) pins: Mutex<Arc<PinBook>>,
    /// OAuth: the token store and who takes sign-ins to a person.
    pub(super) auth: Mutex<AuthContext>,
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
    /// `reserved` are the built-in tool names no server may take.
    pub fn new(
        specs: Vec<ServerSpec>,
        limits: Limits,
        vars: Vars,
        reserved: Vec<String>,
        events: EventSink,
    ) -> Self {
        let slots = specs
            .iter()
            .map(|s| {
                (
                    s.alias.clone(),
                    Slot {
                        state: AliasState::Disconnected,
                        attempt: None,
                        connection: None,
                        last_report: None,
                    },
                )
            })
            .collect();
        Self {
            inner: Arc::new(Inner {
                specs: Mutex::new(specs.into_iter().map(|s| (s.alias.clone(), s)).collect()),
                limits,
                vars,
                registry: Registry::new(reserved, events.clone()),
                events,
                elicitor: Mutex::new(Arc::new(DecliningElicitor)),
                results: Mutex::new(None),
                eras: Mutex::new(BTreeMap::new()),
                pins: Mutex::new(Arc::new(PinBook::in_memory())),
                auth: Mutex::new(AuthContext::new(Arc::new(Store::default_location()))),
                state: Mutex::new(State {
                    slots,
                    ..State::default()
                }),
            }),
        }
    }

    /// Who answers servers' elicitation requests on connections opened from now
    /// on (default: [`DecliningElicitor`]). The TUI installs one that shows the
    /// operator a form. The advertised capabilities do not depend on it.
    pub fn set_elicitor(&self, elicitor: Arc<dyn Elicitor>) {
        *self
            .inner
            .elicitor
            .lock()
            .unwrap_or_else(|e| e.into_inner()) = elicitor;
    }

    pub(super) fn elicitor(&self) -> Arc<dyn Elicitor> {
        Arc::clone(
            &self
                .inner
                .elicitor
                .lock()
                .unwrap_or_else(|e| e.into_inner()),
        )
    }

    /// Where whole results over `max_result_bytes` are kept (the session's
    /// `results/`). Without one, such results are cut and the rest is lost,
    /// which the notice says.
    pub fn set_results_dir(&self, dir: std::path::PathBuf) {
        *self.inner.results.lock().unwrap_or_else(|e| e.into_inner()) = Some(dir);
    }

    pub fn results_dir(&self) -> Option<std::path::PathBuf> {
        self.inner
            .results
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
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

    /// Replaces an alias's local policy (after the operator wrote a new one into
    /// the config file). Takes effect on the next connect.
    pub fn set_policy(
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

    /// Connects an alias: start/reach the server, initialize, list, validate,
    /// expose, register — or report why not. Takes only an alias, by design.
    pub async fn connect(&self, alias: &str) -> Result<ConnectReport, HubError> {
        self.connect_with(alias, false).await
    }

    pub(super) async fn connect_with(
        &self,
        alias: &str,
        interactive: bool,
    ) -> Result<ConnectReport, HubError> {
        let spec = self.spec(alias)?;
        let alias = spec.alias.clone();
        let token = CancellationToken::new();
        {
            let mut state = self.lock();
            if state.shutting_down {
                return Err(HubError::ShuttingDown);
            }
            let slot = state.slots.get_mut(&alias).ok_or(HubError::ShuttingDown)?;
            match slot.state {
                AliasState::Connecting => return Err(HubError::AlreadyConnecting(alias)),
                AliasState::Ready { .. } => return Err(HubError::AlreadyConnected(alias)),
                _ => {}
            }
            slot.attempt = Some(token.clone());
            self.set_state(&alias, slot, AliasState::Connecting);
        }
        let attempt = tokio::select! {
            attempt = self.attempt(&spec, interactive) => attempt,
            _ = token.cancelled() => return Err(HubError::ConnectCancelled(alias)),
        };
        let (connection, mut report) = attempt;
        let mut state = self.lock();
        if token.is_cancelled() {
            // Disconnected (or shut down) while we were connecting.
            if let Some(c) = connection {
                c.close();
                state.closing(c);
            }
            return Err(HubError::ConnectCancelled(alias));
        }
        let slot = state.slots.get_mut(&alias).ok_or(HubError::ShuttingDown)?;
        slot.attempt = None;
        let (Some(connection), Ok(exposed)) = (connection, &report.outcome) else {
            let error = report.outcome.as_ref().err().cloned();
            if let Some(e) = error {
                self.set_state(&alias, slot, failure_state(&e));
            }
            slot.last_report = Some(report.clone());
            return Ok(report);
        };
        let entry = ConnectionEntry {
            connection: Arc::clone(&connection),
            published: Arc::clone(&report.published),
            exposed: exposed.clone(),
        };
        match self.inner.registry.register(entry) {
            Ok(_) => {
                let ready = AliasState::Ready {
                    connection: connection.id(),
                    exposed: exposed.len(),
                };
                slot.connection = Some(Arc::clone(&connection));
                // While it is connected the registry holds its tools; the slot
                // keeps only who answered (not a second reference to every tool,
                // which would outlive the connection).
                let previous = slot.last_report.replace(ConnectReport {
                    alias: report.alias.clone(),
                    server: report.server.clone(),
                    published: Arc::from(Vec::new()),
                    outcome: Ok(Vec::new()),
                    pins: super::pins::PinSummary {
                        states: Vec::new(),
                        ..report.pins.clone()
                    },
                });
                self.set_state(&alias, slot, ready);
                drop(state);
                // An earlier attempt's tools are freed outside the lock.
                drop(previous);
                self.follow_list_changes(Arc::clone(&connection));
                self.watch_end(connection);
            }
            Err(e) => {
                connection.close();
                self.set_state(&alias, slot, failure_state(&e));
                report.outcome = Err(e);
                slot.last_report = Some(report.clone());
            }
        }
        Ok(report)
    }

    /// Revokes the alias's tools at once and closes its connection in the background.
    pub fn disconnect(&self, alias: &str) -> Result<(), HubError> {
        self.disconnect_with(alias, RevokeCause::Disconnected)
    }

    /// Disconnects, revoking with `cause` (a sign-out says so).
    pub(super) fn disconnect_with(&self, alias: &str, cause: RevokeCause) -> Result<(), HubError> {
        let alias = self.spec(alias)?.alias.clone();
        let mut state = self.lock();
        let slot = state.slots.get_mut(&alias).ok_or(HubError::ShuttingDown)?;
        if let Some(attempt) = slot.attempt.take() {
            attempt.cancel();
            self.set_state(&alias, slot, AliasState::Disconnected);
            return Ok(());
        }
        let connection = slot
            .connection
            .take()
            .ok_or_else(|| HubError::NotConnected(alias.clone()))?;
        let next = match &cause {
            RevokeCause::AuthRequired { detail } => AliasState::Failed {
                code: super::error::ConnectErrorCode::AuthRequired,
                message: detail.clone(),
            },
            _ => AliasState::Disconnected,
        };
        self.inner.registry.revoke(connection.id(), cause);
        self.set_state(&alias, slot, next);
        connection.close();
        state.closing(connection);
        Ok(())
    }

    /// SIGKILLs the server's process group *without* telling the watchdog, so the
    /// operator can watch it notice the death and revoke the tools.
    pub fn kill_process(&self, alias: &str) -> Result<(), HubError> {
        let alias = self.spec(alias)?.alias.clone();
        let state = self.lock();
        let connection = state
            .slots
            .get(&alias)
            .and_then(|s| s.connection.clone())
            .ok_or_else(|| HubError::NotConnected(alias.clone()))?;
        drop(state);
        connection.kill_process_group();
        Ok(())
    }

    /// Closes every connection (revoking all tools) and waits, bounded, for the
    /// servers to exit. Call before the runtime ends.
    pub async fn shutdown(&self) {
        let connections: Vec<Arc<Connection>> = {
            let mut state = self.lock();
            state.shutting_down = true;
            let aliases: Vec<ServerAlias> = state.slots.keys().cloned().collect();
            let mut connections = std::mem::take(&mut state.closing);
            for alias in aliases {
                let Some(slot) = state.slots.get_mut(&alias) else {
                    continue;
                };
                if let Some(attempt) = slot.attempt.take() {
                    attempt.cancel();
                }
                if let Some(c) = slot.connection.take() {
                    self.inner.registry.revoke(c.id(), RevokeCause::Shutdown);
                    connections.push(c);
                }
                if slot.state != AliasState::Disconnected {
                    self.set_state(&alias, slot, AliasState::Disconnected);
                }
            }
            connections
        };
        for c in &connections {
            c.close();
        }
        let bound = self.inner.limits.close_grace * 3 + Duration::from_millis(500);
        let all_closed = futures::future::join_all(connections.iter().map(|c| c.finished()));
        let _ = tokio::time::timeout(bound, all_closed).await;
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
