//! The WebSocket transport (`url = "ws://…"` or `"wss://…"`): one JSON-RPC
//! message per text frame, subprotocol `mcp`, as the TypeScript SDK's
//! `WebSocketClientTransport` speaks it. rmcp has none, so this is ours on
//! tungstenite's handshake and framing, over our own TCP (and, for `wss://`,
//! rustls with the verifier the HTTP client uses: the same roots).
//!
//! Answers are read as the stdio wire reads them (`rawresult`). A frame over
//! `max_message_bytes` is refused from its header, before its payload is read.
//! A server silent for half the idle timeout gets a ping; silent for all of
//! it, it is lost. What ended the socket is left in [`WsSignals`] for the
//! watchdog to name.

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use futures::stream::{SplitSink, SplitStream};
use futures::{SinkExt as _, StreamExt as _};
use rmcp::RoleClient;
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::Transport;
use rustls_platform_verifier::BuilderVerifierExt as _;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::time::Instant;
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::client::IntoClientRequest as _;
use tokio_tungstenite::tungstenite::error::{CapacityError, ProtocolError};
use tokio_tungstenite::tungstenite::protocol::WebSocketConfig;
use tokio_tungstenite::tungstenite::{self, Message};

use super::rawresult::{Decoded, RawIds};
use crate::mcp::error::{ConnectError, ConnectErrorCode as Code};

/// The subprotocol MCP clients ask for on the upgrade.
pub const SUBPROTOCOL: &str = "mcp";

const HINT: &str = "check `url`, and that an MCP server speaking WebSocket (subprotocol `mcp`) \
                    is running there";

/// Why the server's side of the socket ended, when it was not a plain close.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WsEnd {
    /// A binary frame: MCP over WebSocket is text frames only.
    Binary,
    /// A text frame that is not JSON.
    NotJson,
    /// No message and no pong for the whole idle timeout.
    Silent(Duration),
    /// A close frame, with its code (its reason is server text: not kept).
    Closed(Option<u16>),
}

impl std::fmt::Display for WsEnd {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            WsEnd::Binary => f.write_str(
                "the server sent a binary WebSocket frame; MCP over WebSocket is JSON-RPC in \
                 text frames",
            ),
            WsEnd::NotJson => {
                f.write_str("the server sent a WebSocket text frame that is not JSON")
            }
            WsEnd::Silent(idle) => write!(
                f,
                "the server stopped answering: no message and no pong for {} ms (idle_timeout_ms)",
                idle.as_millis()
            ),
            WsEnd::Closed(Some(code)) => {
                write!(f, "the server closed the WebSocket (close code {code})")
            }
            WsEnd::Closed(None) => f.write_str("the server closed the WebSocket"),
        }
    }
}

/// What the socket tells the watchdog.
#[derive(Debug, Clone, Default)]
pub struct WsSignals {
    pub end: Arc<OnceLock<WsEnd>>,
    /// A frame went over `max_message_bytes` (shared with the other transports' flag).
    pub oversized: Arc<std::sync::atomic::AtomicBool>,
}

/// A byte stream, plain or TLS.
pub(in crate::mcp) trait Io: AsyncRead + AsyncWrite + Send + Unpin {}
impl<T: AsyncRead + AsyncWrite + Send + Unpin> Io for T {}

type Socket = WebSocketStream<Box<dyn Io>>;

/// Opens the socket: TCP (and TLS for `wss://`), then the upgrade with
/// subprotocol `mcp` and the configured headers. The caller bounds it by the
/// connect timeout.
pub(in crate::mcp) async fn connect(
    url: &str,
    headers: &[(String, String)],
    max_message_bytes: usize,
    idle: Duration,
    signals: WsSignals,
) -> Result<WsWire, ConnectError> {
    let bad = super::open::bad_url;
    let parsed = url::Url::parse(url).map_err(|e| bad(format!("the url is not valid: {e}")))?;
    let tls = match parsed.scheme() {
        "ws" => false,
        "wss" => true,
        _ => return Err(bad("a WebSocket url must start with ws:// or wss://".into())),
    };
    let host = match parsed.host() {
        Some(url::Host::Domain(d)) => d.to_string(),
        Some(url::Host::Ipv4(ip)) => ip.to_string(),
        Some(url::Host::Ipv6(ip)) => ip.to_string(),
        None => return Err(bad("the url names no host".into())),
    };
    let port = parsed
        .port_or_known_default()
        .unwrap_or(if tls { 443 } else { 80 });
    let mut request = url
        .into_client_request()
        .map_err(|e| bad(format!("the url is not a WebSocket url: {e}")))?;
    let configured: Vec<_> = super::open::header_map(headers)?;
    for (name, value) in configured {
        // Replacing, not appending: the config's value is the one sent.
        request.headers_mut().insert(name, value);
    }
    request.headers_mut().insert(
        http::header::SEC_WEBSOCKET_PROTOCOL,
        http::HeaderValue::from_static(SUBPROTOCOL),
    );
    let unreachable = |e: std::io::Error| {
        ConnectError::new(
            Code::InitializeFailed,
            format!("could not reach the server at {host}:{port}: {e}"),
            HINT,
        )
    };
    let tcp = tokio::net::TcpStream::connect((host.as_str(), port))
        .await
        .map_err(unreachable)?;
    // One small message each way per call: Nagle would hold the second.
    let _ = tcp.set_nodelay(true);
    let stream: Box<dyn Io> = if tls {
        let config = tls_config().map_err(|e| {
            ConnectError::new(
                Code::SpawnFailed,
                format!("TLS is not available: {e}"),
                "the system's certificate roots could not be loaded",
            )
        })?;
        let name = rustls::pki_types::ServerName::try_from(host.clone())
            .map_err(|e| bad(format!("`{host}` is not a TLS server name: {e}")))?;
        let tls = tokio_rustls::TlsConnector::from(config)
            .connect(name, tcp)
            .await
            .map_err(|e| {
                ConnectError::new(
                    Code::InitializeFailed,
                    format!("the TLS handshake with {host}:{port} failed: {e}"),
                    HINT,
                )
            })?;
        Box::new(tls)
    } else {
        Box::new(tcp)
    };
    let config = WebSocketConfig::default()
        .max_message_size(Some(max_message_bytes))
        .max_frame_size(Some(max_message_bytes));
    // tungstenite traces the request, headers and all, through `log`, which
    // no logger here receives (no `tracing-log` bridge): keep it that way.
    let (socket, _response) =
        tokio_tungstenite::client_async_with_config(request, stream, Some(config))
            .await
            .map_err(upgrade_failed)?;
    Ok(WsWire::new(socket, idle, signals))
}

/// The upgrade did not happen: in the harness's words, never the body.
fn upgrade_failed(error: tungstenite::Error) -> ConnectError {
    use tungstenite::Error as E;
    let failed = |message: String| ConnectError::new(Code::InitializeFailed, message, HINT);
    match error {
        E::Http(response) => {
            let status = response.status();
            if status == http::StatusCode::UNAUTHORIZED || status == http::StatusCode::FORBIDDEN {
                return ConnectError::new(
                    Code::AuthRequired,
                    format!(
                        "the server requires authorization (HTTP {}) and refused the WebSocket \
                         upgrade",
                        status.as_u16()
                    ),
                    "give this server a token: headers = { Authorization = \"Bearer ${TOKEN}\" }",
                );
            }
            let mut error = failed(format!(
                "the server refused the WebSocket upgrade: HTTP {}{}",
                status.as_u16(),
                match status.as_u16() {
                    404 => " (no such path there)",
                    426 => " (it wants another protocol)",
                    _ => "",
                }
            ));
            if let Some(body) = response.body().as_deref().filter(|b| !b.is_empty()) {
                error
                    .server_output
                    .push(super::initfail::cap(&String::from_utf8_lossy(body)));
            }
            error
        }
        E::Protocol(ProtocolError::SecWebSocketSubProtocolError(_)) => failed(format!(
            "the server accepted the WebSocket upgrade but not the subprotocol `{SUBPROTOCOL}`"
        )),
        E::Io(e) => failed(format!("the WebSocket upgrade failed: {e}")),
        E::Protocol(e) => failed(format!("the WebSocket upgrade failed: {e}")),
        other => failed(format!("the WebSocket upgrade failed: {other}")),
    }
}

/// rustls with ring and the platform verifier, as reqwest builds it for
/// `https://` (built once: loading the roots is not free).
fn tls_config() -> Result<Arc<rustls::ClientConfig>, String> {
    static CONFIG: OnceLock<Result<Arc<rustls::ClientConfig>, String>> = OnceLock::new();
    CONFIG
        .get_or_init(|| {
            let provider = Arc::new(rustls::crypto::ring::default_provider());
            let config = rustls::ClientConfig::builder_with_provider(provider)
                .with_safe_default_protocol_versions()
                .map_err(|e| e.to_string())?
                .with_platform_verifier()
                .map_err(|e| e.to_string())?
                .with_no_client_auth();
            Ok(Arc::new(config))
        })
        .clone()
}

/// The client end of a WebSocket session.
pub(in crate::mcp) struct WsWire {
    read: SplitStream<Socket>,
    write: Arc<tokio::sync::Mutex<SplitSink<Socket, Message>>>,
    raw: RawIds,
    idle: Duration,
    /// When the server was last heard from (any frame).
    heard: Instant,
    /// When the last ping went out.
    pinged: Option<Instant>,
    alarm: std::pin::Pin<Box<tokio::time::Sleep>>,
    signals: WsSignals,
}

impl WsWire {
    fn new(socket: Socket, idle: Duration, signals: WsSignals) -> Self {
        let (write, read) = socket.split();
        let now = Instant::now();
        Self {
            read,
            write: Arc::new(tokio::sync::Mutex::new(write)),
            raw: RawIds::default(),
            idle,
            heard: now,
            pinged: None,
            alarm: Box::pin(tokio::time::sleep_until(now + idle / 2)),
            signals,
        }
    }

    fn end(&self, why: WsEnd) {
        let _ = self.signals.end.set(why);
    }

    /// The alarm went off: ping a server silent for half the idle timeout,
    /// give up on one silent for all of it. `false`: it is lost.
    async fn alarm(&mut self) -> bool {
        let now = Instant::now();
        if now >= self.heard + self.idle {
            self.end(WsEnd::Silent(self.idle));
            return false;
        }
        let half = self.heard + self.idle / 2;
        let next = if now < half {
            half
        } else {
            if self.pinged.is_none_or(|at| at < self.heard) {
                let mut write = self.write.lock().await;
                if write.send(Message::Ping(Default::default())).await.is_err() {
                    return false;
                }
                // Only once sent: a ping given up half way is sent again.
                self.pinged = Some(now);
            }
            self.heard + self.idle
        };
        self.alarm.as_mut().reset(next);
        true
    }
}

fn io_error(error: tungstenite::Error) -> std::io::Error {
    match error {
        tungstenite::Error::Io(e) => e,
        other => std::io::Error::other(other),
    }
}

impl Transport<RoleClient> for WsWire {
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: ClientJsonRpcMessage,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        self.raw.sending(&item);
        let write = Arc::clone(&self.write);
        async move {
            let text = serde_json::to_string(&item).map_err(std::io::Error::other)?;
            write
                .lock()
                .await
                .send(Message::Text(text.into()))
                .await
                .map_err(io_error)
        }
    }

    async fn receive(&mut self) -> Option<ServerJsonRpcMessage> {
        loop {
            // Cancel-safe: rmcp drops this future whenever it has other work;
            // the stream and the alarm keep their state in `self`.
            let frame = tokio::select! {
                frame = self.read.next() => frame,
                () = self.alarm.as_mut() => {
                    if self.alarm().await {
                        continue;
                    }
                    return None;
                }
            };
            let frame = match frame {
                Some(Ok(frame)) => frame,
                Some(Err(tungstenite::Error::Capacity(CapacityError::MessageTooLong {
                    ..
                }))) => {
                    self.signals
                        .oversized
                        .store(true, std::sync::atomic::Ordering::Relaxed);
                    return None;
                }
                Some(Err(error)) => {
                    tracing::debug!(%error, "reading the WebSocket");
                    return None;
                }
                None => return None,
            };
            self.heard = Instant::now();
            match frame {
                Message::Text(text) => match self.raw.decode(text.as_bytes()) {
                    Decoded::Message(message) => return Some(*message),
                    Decoded::Skip => {}
                    Decoded::NotJson => {
                        self.end(WsEnd::NotJson);
                        return None;
                    }
                },
                Message::Binary(_) => {
                    self.end(WsEnd::Binary);
                    return None;
                }
                Message::Close(frame) => {
                    self.end(WsEnd::Closed(frame.map(|f| u16::from(f.code))));
                    return None;
                }
                // Pongs (and pings, which tungstenite answers) only say it lives.
                Message::Ping(_) | Message::Pong(_) | Message::Frame(_) => {}
            }
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        // A close frame, briefly: a server that stopped reading must not hold us.
        let mut write = self.write.lock().await;
        let _ = tokio::time::timeout(Duration::from_millis(200), write.close()).await;
        Ok(())
    }
}
