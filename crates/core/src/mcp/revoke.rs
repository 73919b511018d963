//! A connection ending: after a call's timeout or loss, or on its own (the
//! watchdog fired). Revocation targets the connection object, never the alias, so
//! a late end of an old connection cannot touch a newer one of the same alias.

use std::sync::Arc;

use super::connection::Connection;
use super::connection::watchdog::EndReason;
use super::events::{AliasState, RevokeCause};
use super::hub::Hub;

impl Hub {
    /// Drops a connection because of what happened during a call: revoke now,
    /// end its process, and leave the alias `lost` with the cause. After a timeout
    /// the server gets the usual close sequence (EOF, SIGTERM, SIGKILL), so it can
    /// act on the cancellation it was just sent; a dead connection is killed.
    pub(super) fn drop_connection(&self, connection: &Arc<Connection>, cause: RevokeCause) {
        self.drop_connection_after(connection, cause, "tools/list_changed");
    }

    /// [`Hub::drop_connection`]; a rejection's message says what came before
    /// it (`after`: a re-list, or the config changing under a live connection).
    pub(super) fn drop_connection_after(
        &self,
        connection: &Arc<Connection>,
        cause: RevokeCause,
        after: &str,
    ) {
        match cause {
            // The server is alive: let it act on the cancellation, or just go.
            RevokeCause::Timeout { .. } | RevokeCause::PolicyViolation { .. } => connection.close(),
            _ => connection.kill(),
        }
        let mut state = self.lock();
        if let Some(slot) = state.slot_of(connection) {
            slot.connection = None;
            self.inner.registry.revoke(connection.id(), cause.clone());
            let next = match cause {
                // What the server now publishes breaks a rule: it is rejected,
                // and the message says what it changed.
                RevokeCause::PolicyViolation {
                    code,
                    message,
                    changes,
                    ..
                } => AliasState::Rejected {
                    code,
                    message: if changes.is_empty() {
                        format!("after {after}: {message}")
                    } else {
                        format!("after {after} ({changes}): {message}")
                    },
                },
                // Signing in again brings it back: the alias says so.
                RevokeCause::AuthRequired { detail } => AliasState::Failed {
                    code: super::error::ConnectErrorCode::AuthRequired,
                    message: detail,
                },
                cause => AliasState::Lost { cause },
            };
            self.set_state(connection.alias(), slot, next);
            state.closing(Arc::clone(connection));
        }
    }

    /// Keeps what a re-list found when it rejects the connection (the new
    /// listing, why, where each tool stands against its pin), as a failed
    /// connect's report is kept: the operator's views show it, and accepting
    /// the new definitions accepts exactly this listing.
    pub(super) fn record_rejection(
        &self,
        connection: &Connection,
        published: Arc<[super::published::PublishedTool]>,
        pins: super::pins::PinSummary,
        error: &super::error::ConnectError,
    ) {
        let mut state = self.lock();
        if let Some(slot) = state.slot_of(connection) {
            slot.last_report = Some(super::attempt::ConnectReport {
                alias: connection.alias().clone(),
                server: Some(connection.server().clone()),
                published,
                outcome: Err(error.clone()),
                pins,
            });
        }
    }

    /// After a re-list replaced a connection's tools: its alias shows the new count.
    pub(super) fn refresh_ready(&self, connection: &Connection, exposed: usize) {
        let mut state = self.lock();
        if let Some(slot) = state.slot_of(connection) {
            let ready = AliasState::Ready {
                connection: connection.id(),
                exposed,
            };
            self.set_state(connection.alias(), slot, ready);
        }
    }

    /// Revokes a connection's tools as soon as it ends on its own.
    pub(super) fn watch_end(&self, connection: Arc<Connection>) {
        let hub = Arc::downgrade(&self.inner);
        tokio::spawn(async move {
            connection.ended().await;
            let Some(inner) = hub.upgrade() else { return };
            let hub = Hub { inner };
            let cause = match connection.end_reason() {
                // Closed or killed on request: whoever asked already revoked.
                Some(EndReason::Closed | EndReason::Killed) | None => return,
                Some(EndReason::AuthLost) => RevokeCause::AuthRequired {
                    detail: connection.denial().message,
                },
                Some(reason) => RevokeCause::ConnectionLost {
                    detail: reason.to_string(),
                },
            };
            hub.drop_connection(&connection, cause);
        });
    }
}
