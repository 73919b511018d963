//! The control room: the TUI serving MCP (`mcp-harness --serve ADDR`) beside
//! its own session. Outside clients get the gateway of `mcp-harness serve` on
//! this session's hub; their `confirm` calls open the same approval prompt as
//! the Lead's (the client named as who asks), and each of their calls shows in
//! the conversation as a call by that client, counted in Health and explained
//! like any other.

use std::net::SocketAddr;
use std::sync::Arc;

use serde_json::Value;
use tokio::sync::mpsc::UnboundedSender;
use tokio_util::sync::CancellationToken;

use super::{Backend, Inbound};
use crate::agent::toolbox::from_mcp;
use crate::mcp::gateway::relay::{Relay, RelayListener};
use crate::mcp::gateway::{
    Changes, ClientCallRecord, ClientCallStart, Gateway, GatewayError, PATH, Watcher,
};
use crate::mcp::{CallId, CallOutcome, Requester};
use crate::protocol::{BackendEvent, ServingView};
use crate::store::Store;

/// An outside call, as the backend loop hears of it.
pub struct ClientCall {
    pub id: CallId,
    pub client: String,
    /// The outside name the client called.
    pub name: String,
    pub exposed: Option<String>,
    pub arguments: Value,
}

/// Tells the backend loop of every outside call, on the channel the approval
/// prompts take (so a call's row comes before its prompt), and audits it.
struct Watch {
    inbound: UnboundedSender<Inbound>,
    store: Option<Arc<Store>>,
}

impl Watcher for Watch {
    fn started(&self, call: &ClientCallStart<'_>) {
        let _ = self.inbound.send(Inbound::ClientCall(ClientCall {
            id: call.call.clone(),
            client: call.client.to_string(),
            name: call.tool.to_string(),
            exposed: call.exposed.map(str::to_string),
            arguments: call.arguments.clone(),
        }));
    }

    fn finished(&self, record: &ClientCallRecord<'_>, outcome: &CallOutcome) {
        if let Some(store) = &self.store {
            store.audit_client_call(record);
        }
        let _ = self.inbound.send(Inbound::HandCallDone {
            id: record.call.clone(),
            run: from_mcp(outcome.clone()),
        });
    }
}

impl Backend {
    /// Serves MCP at `addr` for as long as the session runs, and to the
    /// `serve --stdio` processes of this config that relay here; says where
    /// (or why not: the TUI runs on without it).
    pub(super) async fn serve(&mut self, addr: SocketAddr, changes: Changes) {
        let watcher = Arc::new(Watch {
            inbound: self.inbound.clone(),
            store: self.store.clone(),
        });
        let gateway = match Gateway::control_room(
            self.hub.clone(),
            self.config.serve.clone(),
            Arc::clone(&self.approver),
            watcher,
            |var| std::env::var(var).ok(),
        ) {
            Ok(gateway) => gateway,
            Err(e) => {
                self.send(BackendEvent::Error(format!(
                    "not serving MCP: {e}; the session runs on without the gateway"
                )));
                return;
            }
        };
        let relay = gateway.relay();
        // The HTTP side tells every session of changes; without it, the relay does.
        let mut changes = Some(changes);
        if let Err(e) = self.serve_http(gateway, addr, &mut changes).await {
            self.send(BackendEvent::Error(format!(
                "not serving MCP at {addr}: {e}; the session runs on without it"
            )));
        }
        self.serve_relay(relay, changes);
    }

    async fn serve_http(
        &mut self,
        gateway: Gateway,
        addr: SocketAddr,
        changes: &mut Option<Changes>,
    ) -> Result<(), String> {
        if !addr.ip().is_loopback() {
            return Err(GatewayError::NotLoopback(addr).to_string());
        }
        if !gateway.serves_http() {
            return Err(GatewayError::NoClients.to_string());
        }
        let listener = tokio::net::TcpListener::bind(addr)
            .await
            .map_err(|e| format!("cannot listen there ({e})"))?;
        let local = listener.local_addr().map_err(|e| e.to_string())?;
        let clients: Vec<String> = self
            .config
            .serve
            .clients
            .iter()
            .filter(|c| c.token_env.is_some())
            .map(|c| format!("`{}`", c.name))
            .collect();
        self.send(BackendEvent::Notice(format!(
            "serving MCP at http://{local}{PATH} to {}: their calls show here, and their \
             confirm calls wait for you",
            clients.join(", ")
        )));
        // The status bar's `serving :PORT · N clients`, as sessions come and go.
        let mut sessions = gateway.sessions();
        let inbound = self.inbound.clone();
        self.jobs.spawn(async move {
            loop {
                let live = *sessions.borrow_and_update();
                let view = ServingView {
                    addr: local,
                    sessions: live,
                };
                if inbound.send(Inbound::Serving(Some(view))).is_err() {
                    break;
                }
                if sessions.changed().await.is_err() {
                    break;
                }
            }
        });
        let changes = changes.take().unwrap_or_default();
        // Aborted with the backend's other jobs at shutdown, before the hub
        // closes: no client is answered by a hub that is going.
        let inbound = self.inbound.clone();
        self.jobs.spawn(async move {
            if let Err(e) = gateway
                .serve(listener, changes, CancellationToken::new())
                .await
            {
                tracing::warn!("the gateway stopped: {e}");
            }
            let _ = inbound.send(Inbound::Serving(None));
        });
        Ok(())
    }

    /// Listens for `serve --stdio` processes of this config (same user) and
    /// serves their hosts here, so their `confirm` calls wait for the operator.
    fn serve_relay(&mut self, relay: Relay, changes: Option<Changes>) {
        let Some(path) = self.config.relay_socket() else {
            return;
        };
        match RelayListener::bind(&path) {
            Ok(listener) => {
                self.send(BackendEvent::Notice(
                    "stdio hosts of this config (`mcp-harness serve --stdio`) relay here: their \
                     calls show here too"
                        .into(),
                ));
                self.jobs
                    .spawn(relay.serve(listener, changes, CancellationToken::new()));
            }
            Err(e) => self.send(BackendEvent::Error(format!(
                "stdio hosts cannot relay here: {e}; they run headless (`--approve`)"
            ))),
        }
    }

    /// An outside client's call started: a row by that client.
    pub(super) fn client_call(&mut self, call: ClientCall) {
        self.mcp_call_started(
            &call.id,
            Requester::Client(call.client),
            call.name,
            call.exposed.as_deref(),
            call.arguments,
        );
    }
}
