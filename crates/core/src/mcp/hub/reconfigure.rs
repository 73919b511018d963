//! A re-read config: the configured servers replaced in one step. A new alias
//! gets a slot; a removed one is disconnected (its tools revoked at once) and
//! dropped; a changed one keeps its connection and takes the new spec for
//! everything that reads it from now on (the next connect, a resource read).
//! Re-validating a live connection against a changed policy is
//! [`Hub::revalidate`].

use super::*;
use crate::mcp::spec::SpecChange;

/// What replacing the specs changed, alias by alias, in alias order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Reconfigured {
    pub added: Vec<ServerAlias>,
    /// Gone from the config: disconnected, if it was connected or connecting
    /// (`true`), and dropped.
    pub removed: Vec<(ServerAlias, bool)>,
    pub changed: Vec<Changed>,
}

impl Reconfigured {
    pub fn is_empty(&self) -> bool {
        self.added.is_empty() && self.removed.is_empty() && self.changed.is_empty()
    }
}

/// One alias whose spec changed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Changed {
    pub alias: ServerAlias,
    pub change: SpecChange,
    /// A connection is live now (opened under the old spec).
    pub connected: bool,
    /// A connect is under way (started under the old spec).
    pub connecting: bool,
}

impl Hub {
    /// Replaces the configured servers with `specs`. Aliases are compared as
    /// they are now in the hub (a policy the operator wrote from the TUI is
    /// already in it), so only what differs from that is reported.
    pub fn reconfigure(&self, specs: Vec<ServerSpec>) -> Reconfigured {
        let mut new: BTreeMap<ServerAlias, ServerSpec> =
            specs.into_iter().map(|s| (s.alias.clone(), s)).collect();
        let mut out = Reconfigured::default();
        let mut state = self.lock();
        if state.shutting_down {
            return out;
        }
        let mut current = self.inner.specs.lock().unwrap_or_else(|e| e.into_inner());
        let gone: Vec<ServerAlias> = current
            .keys()
            .filter(|alias| !new.contains_key(*alias))
            .cloned()
            .collect();
        for alias in gone {
            current.remove(&alias);
            let Some(mut slot) = state.slots.remove(&alias) else {
                continue;
            };
            let mut live = false;
            if let Some(attempt) = slot.attempt.take() {
                attempt.cancel();
                live = true;
            }
            if let Some(connection) = slot.connection.take() {
                self.inner
                    .registry
                    .revoke(connection.id(), RevokeCause::Disconnected);
                connection.close();
                state.closing(connection);
                live = true;
            }
            if slot.state != AliasState::Disconnected {
                self.set_state(&alias, &mut slot, AliasState::Disconnected);
            }
            out.removed.push((alias, live));
        }
        for (alias, spec) in std::mem::take(&mut new) {
            match current.get(&alias) {
                None => {
                    state.slots.insert(
                        alias.clone(),
                        Slot {
                            state: AliasState::Disconnected,
                            attempt: None,
                            connection: None,
                            last_report: None,
                        },
                    );
                    out.added.push(alias.clone());
                }
                Some(old) => {
                    let change = SpecChange::between(old, &spec);
                    if change.any() {
                        let slot = state.slots.get(&alias);
                        out.changed.push(Changed {
                            alias: alias.clone(),
                            change,
                            connected: slot.is_some_and(|s| s.connection.is_some()),
                            connecting: slot.is_some_and(|s| s.attempt.is_some()),
                        });
                    }
                }
            }
            current.insert(alias, spec);
        }
        drop(current);
        drop(state);
        for (alias, _) in &out.removed {
            self.remember_era(alias, None);
        }
        out
    }
}
