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
    /// Serves MCP at `addr` for as long as the session runs, and says where
    /// (or why it cannot: the TUI runs on without it).
    pub(super) async fn serve(&mut self, addr: SocketAddr, changes: Changes) {
        if let Err(e) = self.start_serving(addr, changes).await {
            self.send(BackendEvent::Error(format!(
                "not serving MCP at {addr}: {e}; the session runs on without the gateway"
            )));
        }
    }

    async fn start_serving(&mut self, addr: SocketAddr, changes: Changes) -> Result<(), String> {
        if !addr.ip().is_loopback() {
            return Err(GatewayError::NotLoopback(addr).to_string());
        }
        let settings = self.config.serve.clone();
        let watcher = Arc::new(Watch {
            inbound: self.inbound.clone(),
            store: self.store.clone(),
        });
        let gateway = Gateway::new(
            self.hub.clone(),
            settings.clone(),
            Arc::clone(&self.approver),
            watcher,
            |var| std::env::var(var).ok(),
        )
        .map_err(|e| e.to_string())?;
        let listener = tokio::net::TcpListener::bind(addr)
            .await
            .map_err(|e| format!("cannot listen there ({e})"))?;
        let local = listener.local_addr().map_err(|e| e.to_string())?;
        let clients: Vec<String> = settings
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
