//! `notifications/tools/list_changed`: re-list and re-validate, coalesced.
//!
//! The client handler only counts notifications. One task per registered
//! connection waits for the count to move past what the current tool list
//! reflects, lets a storm settle, and re-lists at most once per
//! [`RELIST_INTERVAL`]: thousands of notifications cost a handful of re-lists.
//! The new list goes through the same pipeline as a first connect; if it breaks
//! any local rule the whole connection is rejected and revoked, otherwise the
//! registry replaces the connection's tools at once.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use tokio::time::Instant;

use super::connection::Connection;
use super::error::{ConnectError, ConnectErrorCode, FailureKind};
use super::events::{RevokeCause, ToolChanges};
use super::hub::Hub;
use super::published::PublishedTool;
use super::registry::Snapshot;

/// At most one re-list per connection in this interval.
pub const RELIST_INTERVAL: Duration = Duration::from_millis(250);
/// How long a first notification waits for the rest of a burst.
const SETTLE: Duration = Duration::from_millis(25);

impl Hub {
    /// Starts the re-list task of a freshly registered connection; it ends with
    /// the connection (or the hub).
    pub(super) fn follow_list_changes(&self, connection: Arc<Connection>) {
        let hub = Arc::downgrade(&self.inner);
        tokio::spawn(async move {
            let mut changes = connection.list_changes.clone();
            let mut last: Option<Instant> = None;
            loop {
                let listed = connection.listed.load(Ordering::SeqCst);
                tokio::select! {
                    seen = changes.wait_for(|n| *n != listed) => if seen.is_err() { return },
                    () = connection.ended() => return,
                }
                let now = Instant::now();
                let due = last.map_or(now, |t| t + RELIST_INTERVAL).max(now + SETTLE);
                tokio::select! {
                    () = tokio::time::sleep_until(due) => {}
                    () = connection.ended() => return,
                }
                let Some(inner) = hub.upgrade() else { return };
                if !(Hub { inner })
                    .relist(&connection, Trigger::ListChanged)
                    .await
                {
                    return;
                }
                last = Some(Instant::now());
            }
        });
    }

    /// The current snapshot, after re-listing (and re-validating) every
    /// connection whose tool list has expired (`ttlMs`, 2026-07-28): what a
    /// model request must be built from. Bounded by each server's connect timeout.
    pub async fn fresh_snapshot(&self) -> Snapshot {
        let snapshot = self.snapshot();
        let now = Instant::now();
        let expired: Vec<Arc<Connection>> = snapshot
            .connections()
            .filter(|e| e.connection.list_expired(now))
            .map(|e| Arc::clone(&e.connection))
            .collect();
        if expired.is_empty() {
            return snapshot;
        }
        futures::future::join_all(expired.iter().map(|c| self.relist(c, Trigger::ListChanged)))
            .await;
        self.snapshot()
    }

    /// Re-validates a connected alias against its spec as it is now (after
    /// [`Hub::reconfigure`] changed its policy): its tools are listed again
    /// and go through the exposure pipeline and the pins, as after
    /// `tools/list_changed`. The registry takes the new set in one snapshot;
    /// a set that breaks a rule now rejects the connection and revokes its
    /// tools. `None`: not connected; `Some(false)`: revoked.
    pub async fn revalidate(&self, alias: &str) -> Option<bool> {
        let connection = self
            .lock()
            .slots
            .get(&super::names::ServerAlias::new(alias))
            .and_then(|slot| slot.connection.clone())?;
        Some(self.relist(&connection, Trigger::ConfigChanged).await)
    }

    /// Re-lists and re-validates one registered connection. False when the
    /// connection is no longer registered afterwards.
    async fn relist(&self, connection: &Arc<Connection>, trigger: Trigger) -> bool {
        let Ok(spec) = self.spec(connection.alias().as_str()) else {
            return false;
        };
        let Some(old) = self
            .snapshot()
            .connections()
            .find(|e| e.connection.id() == connection.id())
            .cloned()
        else {
            return false;
        };
        let deadline = tokio::time::Instant::now() + spec.connect_timeout;
        let loading = self.load_pins(&spec);
        let listed = self.list_and_expose(connection, &spec, deadline).await;
        let changes = listed
            .published
            .as_deref()
            .map(|new| diff(&old.published, new))
            .unwrap_or_default();
        let exposed = match listed.outcome {
            Ok(exposed) => exposed,
            Err(error) => {
                if let Some(published) = listed.published {
                    let (pins, _) = self
                        .check_pins(&spec, &published, listed.hashes, loading, false)
                        .await;
                    self.record_rejection(connection, published, pins, &error);
                }
                self.reject_after_change(connection, error, changes, trigger);
                return false;
            }
        };
        // The same tools as before were checked against their pins then —
        // unless the policy changed, which may expose a tool that was `deny`.
        let Some(published) = listed
            .published
            .filter(|_| !changes.is_empty() || trigger == Trigger::ConfigChanged)
        else {
            return true;
        };
        // Rule 14 holds after every re-list too: a changed definition revokes.
        let (pins, verdict) = self
            .check_pins(&spec, &published, listed.hashes, loading, true)
            .await;
        let new: Vec<String> = changes
            .added
            .iter()
            .chain(&changes.changed)
            .cloned()
            .collect();
        let screened = verdict.as_ref().map(|()| exposed.as_slice());
        self.report_suspicious(&spec, screened, Some(&new));
        if let Err(error) = verdict {
            self.record_rejection(connection, published, pins, &error);
            self.reject_after_change(connection, error, changes, trigger);
            return false;
        }
        let count = exposed.len();
        match self
            .inner
            .registry
            .replace(connection.id(), published, exposed)
        {
            Ok(Some(_)) => {
                self.refresh_ready(connection, count);
                true
            }
            Ok(None) => false,
            Err(error) => {
                self.reject_after_change(connection, error, changes, trigger);
                false
            }
        }
    }

    /// Revokes a connection whose re-list failed: a broken rule rejects it (with
    /// what changed); a timeout or a lost connection is what it is.
    fn reject_after_change(
        &self,
        connection: &Arc<Connection>,
        error: ConnectError,
        changes: ToolChanges,
        trigger: Trigger,
    ) {
        let cause = match (error.kind(), error.code) {
            (FailureKind::Rejected, code) => RevokeCause::PolicyViolation {
                code,
                definition_changes: error.changes().to_vec(),
                message: error.message,
                changes,
            },
            (FailureKind::Failed, ConnectErrorCode::McpTimeout) => RevokeCause::Timeout {
                tool: "tools/list".into(),
            },
            (FailureKind::Failed, _) => RevokeCause::ConnectionLost {
                detail: error.message,
            },
        };
        let after = match trigger {
            Trigger::ListChanged => "tools/list_changed",
            Trigger::ConfigChanged => "the config changed",
        };
        self.drop_connection_after(connection, cause, after);
    }
}

/// Why a connection's tools are listed and validated again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Trigger {
    /// The server said its list changed (or the list expired).
    ListChanged,
    /// Its spec changed (a re-read config): validated even if the list did not.
    ConfigChanged,
}

/// What changed between two listings, by published name, sorted.
pub fn diff(old: &[PublishedTool], new: &[PublishedTool]) -> ToolChanges {
    let before: BTreeMap<&str, &PublishedTool> = old.iter().map(|t| (t.name.as_str(), t)).collect();
    let after: BTreeMap<&str, &PublishedTool> = new.iter().map(|t| (t.name.as_str(), t)).collect();
    let names = |it: &mut dyn Iterator<Item = &&str>| it.map(|n| n.to_string()).collect();
    ToolChanges {
        added: names(&mut after.keys().filter(|n| !before.contains_key(*n))),
        removed: names(&mut before.keys().filter(|n| !after.contains_key(*n))),
        changed: names(
            &mut after
                .iter()
                .filter(|(n, t)| before.get(*n).is_some_and(|old| old != *t))
                .map(|(n, _)| n),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn tool(name: &str, description: &str) -> PublishedTool {
        PublishedTool {
            name: name.into(),
            title: None,
            description: Some(description.into()),
            input_schema: Arc::new(json!({"type": "object"})),
            output_schema: None,
            annotations: None,
            task_support: Default::default(),
        }
    }

    #[test]
    fn diff_names_added_removed_and_changed_tools() {
        let old = [tool("a", "x"), tool("b", "x"), tool("c", "x")];
        let new = [tool("a", "x"), tool("c", "changed"), tool("d", "x")];
        let changes = diff(&old, &new);
        assert_eq!(changes.added, ["d"]);
        assert_eq!(changes.removed, ["b"]);
        assert_eq!(changes.changed, ["c"]);
        assert!(diff(&old, &old).is_empty());
        assert_eq!(changes.to_string(), "added `d`; removed `b`; changed `c`");
    }
}
