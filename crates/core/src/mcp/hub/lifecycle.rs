//! An alias's life through the hub: connect (a new connection replaces the
//! old one atomically), disconnect, kill, and shutting every server down.

use super::*;

impl Hub {
    /// Connects an alias: start/reach the server, initialize, list, validate,
    /// expose, register — or report why not. Takes only an alias, by design.
    pub async fn connect(&self, alias: &str) -> Result<ConnectReport, HubError> {
        self.connect_with(alias, false).await
    }

    pub(in crate::mcp) async fn connect_with(
        &self,
        alias: &str,
        interactive: bool,
    ) -> Result<ConnectReport, HubError> {
        let token = CancellationToken::new();
        let spec = {
            let mut state = self.lock();
            // Read under the state lock: a re-read config either comes before
            // (this attempt uses it) or sees this attempt under way.
            let spec = self.spec(alias)?;
            let alias = spec.alias.clone();
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
            spec
        };
        let alias = spec.alias.clone();
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
                    pins: crate::mcp::pins::PinSummary {
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
    pub(in crate::mcp) fn disconnect_with(
        &self,
        alias: &str,
        cause: RevokeCause,
    ) -> Result<(), HubError> {
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
                code: crate::mcp::error::ConnectErrorCode::AuthRequired,
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
}
