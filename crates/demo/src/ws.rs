//! `demo-server NAME --ws ADDR`: the demo over WebSocket at `ws://ADDR/mcp`,
//! one JSON-RPC message per text frame, subprotocol `mcp` (as the TypeScript
//! SDK's `WebSocketClientTransport` speaks it). Each accepted socket is one
//! session of the same service stdio runs (tasks and all).
//!
//! Under the `ws-binary-on-call` and `ws-not-json-on-call` faults the socket
//! answers the first `tools/call` with a binary frame, or a text frame that is
//! not JSON, in place of the call.

use std::io::Write as _;
use std::net::SocketAddr;

use anyhow::Context;
use futures::stream::{SplitSink, SplitStream};
use futures::{SinkExt as _, StreamExt as _};
use rmcp::RoleServer;
use rmcp::ServiceExt as _;
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::Transport;
use tokio::net::TcpStream;
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::handshake::server::{ErrorResponse, Request, Response};
use tokio_tungstenite::tungstenite::{self, Message};

use super::faults::Faults;
use super::log;
use super::service::DemoService;
use super::tools::DemoHandler;

/// The one path.
const PATH: &str = "/mcp";
const SUBPROTOCOL: &str = "mcp";

pub(super) async fn serve(
    handler: DemoHandler,
    addr: SocketAddr,
    faults: Faults,
) -> anyhow::Result<()> {
    anyhow::ensure!(
        addr.ip().is_loopback(),
        "--ws only serves on loopback addresses, not {addr}"
    );
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .with_context(|| format!("binding {addr}"))?;
    let local = listener.local_addr()?;
    // Tests read this exact line to learn the port.
    let mut stdout = std::io::stdout().lock();
    writeln!(stdout, "listening on ws://{local}{PATH}")?;
    stdout.flush()?;
    drop(stdout);
    log(format_args!(
        "ready on ws://{local}{PATH} (pid {})",
        std::process::id()
    ));
    let accepting = async {
        loop {
            match listener.accept().await {
                Ok((stream, _)) => {
                    tokio::spawn(session(handler.clone(), stream, faults.clone()));
                }
                Err(error) => log(format_args!("accept: {error}")),
            }
        }
    };
    tokio::select! {
        () = accepting => {}
        () = super::http::wait_for_stop_signal(faults.ignore_term) => {}
    }
    log("stopped");
    Ok(())
}

/// The upgrade: `/mcp` only; the subprotocol echoed when the client asks for it.
#[allow(clippy::result_large_err)] // tungstenite's callback signature
fn upgrade(request: &Request, mut response: Response) -> Result<Response, ErrorResponse> {
    if request.uri().path() != PATH {
        let mut refusal =
            ErrorResponse::new(Some(format!("no WebSocket endpoint here; try {PATH}\n")));
        *refusal.status_mut() = http::StatusCode::NOT_FOUND;
        return Err(refusal);
    }
    let asks = request
        .headers()
        .get_all(http::header::SEC_WEBSOCKET_PROTOCOL)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .any(|p| p.trim() == SUBPROTOCOL);
    if asks {
        response.headers_mut().insert(
            http::header::SEC_WEBSOCKET_PROTOCOL,
            http::HeaderValue::from_static(SUBPROTOCOL),
        );
    }
    Ok(response)
}

async fn session(handler: DemoHandler, stream: TcpStream, faults: Faults) {
    let _ = stream.set_nodelay(true);
    let socket = match tokio_tungstenite::accept_hdr_async(stream, upgrade).await {
        Ok(socket) => socket,
        Err(error) => {
            log(format_args!("WebSocket upgrade refused or failed: {error}"));
            return;
        }
    };
    let (write, read) = socket.split();
    let transport = DemoWs {
        read,
        write: std::sync::Arc::new(tokio::sync::Mutex::new(write)),
        faults,
    };
    match DemoService(handler).serve(transport).await {
        Ok(service) => {
            let reason = service.waiting().await;
            log(format_args!("WebSocket session ended ({reason:?})"));
        }
        Err(error) => log(format_args!("WebSocket session did not start: {error}")),
    }
}

type Socket = WebSocketStream<TcpStream>;

/// The server end of one socket.
struct DemoWs {
    read: SplitStream<Socket>,
    write: std::sync::Arc<tokio::sync::Mutex<SplitSink<Socket, Message>>>,
    faults: Faults,
}

impl DemoWs {
    /// The frame a fault puts in place of a `tools/call`, if one is on.
    fn fault_frame(&self, text: &str) -> Option<Message> {
        if !(self.faults.ws_binary_on_call || self.faults.ws_not_json_on_call) {
            return None;
        }
        let method = serde_json::from_str::<serde_json::Value>(text)
            .ok()
            .and_then(|v| v.get("method").and_then(|m| m.as_str()).map(str::to_owned));
        if method.as_deref() != Some("tools/call") {
            return None;
        }
        Some(if self.faults.ws_binary_on_call {
            Message::Binary(b"\x00\x01 not text".to_vec().into())
        } else {
            Message::Text("this is not JSON".into())
        })
    }
}

impl Transport<RoleServer> for DemoWs {
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: ServerJsonRpcMessage,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let write = std::sync::Arc::clone(&self.write);
        async move {
            let text = serde_json::to_string(&item).map_err(std::io::Error::other)?;
            write
                .lock()
                .await
                .send(Message::Text(text.into()))
                .await
                .map_err(std::io::Error::other)
        }
    }

    async fn receive(&mut self) -> Option<ClientJsonRpcMessage> {
        loop {
            let frame = match self.read.next().await? {
                Ok(frame) => frame,
                Err(tungstenite::Error::ConnectionClosed | tungstenite::Error::AlreadyClosed) => {
                    return None;
                }
                Err(error) => {
                    log(format_args!("reading the WebSocket: {error}"));
                    return None;
                }
            };
            match frame {
                Message::Text(text) => {
                    if let Some(bad) = self.fault_frame(text.as_str()) {
                        log("fault: answering tools/call with a frame that breaks the framing");
                        let _ = self.write.lock().await.send(bad).await;
                        continue;
                    }
                    match serde_json::from_str::<ClientJsonRpcMessage>(text.as_str()) {
                        Ok(message) => return Some(message),
                        Err(error) => log(format_args!("ignoring a frame: {error}")),
                    }
                }
                Message::Binary(_) => log("ignoring a binary frame"),
                Message::Close(_) => return None,
                Message::Ping(_) | Message::Pong(_) | Message::Frame(_) => {}
            }
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        let _ = self.write.lock().await.close().await;
        Ok(())
    }
}
