//! The demo server's own doings around a session: start-up faults, the
//! list-changed notices it sends (to a 2025 peer or a 2026 listener), and
//! the rug pull that changes its tools.

use super::*;

impl DemoHandler {
    /// `hang-on-initialize` and `slow-initialize`, for either way of opening.
    pub(super) async fn startup_faults(&self) {
        let faults = &self.inner.faults;
        if faults.hang_on_initialize {
            log("hang-on-initialize: never answering");
            std::future::pending::<()>().await;
        }
        if let Some(ms) = faults.slow_initialize_ms {
            log(format_args!("slow-initialize: answering in {ms} ms"));
            tokio::time::sleep(Duration::from_millis(ms)).await;
        }
    }

    pub(super) fn sinks(&self) -> std::sync::MutexGuard<'_, Vec<SubscriptionSink>> {
        self.inner
            .sinks
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The list's cache hint on 2026-07-28 (`list-ttl-ms`, else five minutes:
    /// changes are announced through `subscriptions/listen`).
    pub(super) fn cache_hint(&self, mut result: ListToolsResult) -> ListToolsResult {
        result.ttl_ms = Some(self.inner.faults.list_ttl_ms.unwrap_or(300_000));
        result
    }

    /// What starts once a client is connected: the `list-changed-storm` and a
    /// timed `mutate-tools`.
    pub(super) async fn after_connect(&self, peer: Option<Peer<RoleServer>>) {
        if self.inner.faults.mutate_on_signal {
            let (handler, peer) = (self.clone(), peer.clone());
            match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::user_defined1()) {
                Ok(mut usr1) => {
                    tokio::spawn(async move {
                        if usr1.recv().await.is_some() {
                            log("mutate-on-signal: SIGUSR1");
                            handler.mutate_and_notify(peer).await;
                        }
                    });
                }
                Err(error) => log(format_args!(
                    "mutate-on-signal: cannot watch SIGUSR1: {error}"
                )),
            }
        }
        if let Some(ms) = self.inner.faults.mutate_after_ms {
            let (handler, peer) = (self.clone(), peer.clone());
            tokio::spawn(async move {
                tokio::time::sleep(Duration::from_millis(ms)).await;
                handler.mutate_and_notify(peer).await;
            });
        }
        let Some(count) = self.inner.faults.list_changed_storm else {
            return;
        };
        log(format_args!(
            "list-changed-storm: sending {count} notifications"
        ));
        for _ in 0..count {
            if let Err(error) = self.notify_list_changed(peer.as_ref()).await {
                log(format_args!("list-changed-storm: send failed: {error}"));
                return;
            }
        }
        // Tests wait for a re-list after this line instead of sleeping.
        if let Some(recorder) = &self.inner.recorder {
            recorder.storm_sent(count);
        }
    }

    /// Tells every client that listens (and `peer`, on a handshake connection).
    pub(super) async fn notify_list_changed(
        &self,
        peer: Option<&Peer<RoleServer>>,
    ) -> Result<(), String> {
        if let Some(peer) = peer {
            peer.notify_tool_list_changed()
                .await
                .map_err(|e| e.to_string())?;
        }
        let sinks = self.sinks().clone();
        for sink in sinks {
            let notification = ServerNotification::ToolListChangedNotification(
                ToolListChangedNotification::default(),
            );
            if let Err(error) = sink.send(notification).await {
                log(format_args!("subscription: notify failed: {error}"));
            }
        }
        Ok(())
    }

    /// `mutate-tools`: switch to the mutated tool set (once) and tell the client.
    pub(super) async fn mutate_and_notify(&self, peer: Option<Peer<RoleServer>>) {
        if !self.mutate() {
            return;
        }
        log("mutate-tools: the published tools changed; notifying");
        if let Err(error) = self.notify_list_changed(peer.as_ref()).await {
            log(format_args!("mutate-tools: notify failed: {error}"));
        }
    }
}
