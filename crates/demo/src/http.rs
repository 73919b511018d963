//! `demo-server NAME --http ADDR`: rmcp's Streamable HTTP server service at
//! `/mcp`, served by hyper directly (see `mcp::serve`).

use std::io::Write;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use http_body_util::BodyExt as _;
use hyper::body::Incoming;
use hyper::{Request, StatusCode};
use rmcp::transport::streamable_http_server::{
    StreamableHttpServerConfig, StreamableHttpService, session::local::LocalSessionManager,
};
use tokio::signal::unix::{SignalKind, signal};
use tokio_util::sync::CancellationToken;

use super::log;
use super::oauth_gate::{Gate, PRM_PATH};
use mcp_harness::mcp::serve::{self as http, reply};

/// The one route.
const PATH: &str = "/mcp";
/// Open SSE streams can hold a graceful shutdown open: give them this long, not forever.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(2);

pub(super) async fn serve<H>(
    handler: H,
    addr: SocketAddr,
    ignore_term: bool,
    gate: Option<Gate>,
) -> anyhow::Result<()>
where
    H: rmcp::ServerHandler + Clone + Send + Sync + 'static,
{
    anyhow::ensure!(
        addr.ip().is_loopback(),
        "--http only serves on loopback addresses, not {addr}"
    );
    let ct = CancellationToken::new();
    let config = StreamableHttpServerConfig::default().with_cancellation_token(ct.child_token());
    let service: StreamableHttpService<H, LocalSessionManager> = StreamableHttpService::new(
        move || Ok(handler.clone()),
        Arc::new(LocalSessionManager::default()),
        config,
    );
    let gate = gate.map(Arc::new);
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .with_context(|| format!("binding {addr}"))?;
    let local = listener.local_addr()?;
    // Tests read this exact line to learn the port.
    let mut stdout = std::io::stdout().lock();
    writeln!(stdout, "listening on http://{local}{PATH}")?;
    stdout.flush()?;
    drop(stdout);
    log(format_args!(
        "ready on http://{local}{PATH} (pid {})",
        std::process::id()
    ));

    let stop = CancellationToken::new();
    let route = move |request: Request<Incoming>| {
        let service = service.clone();
        let gate = gate.clone();
        async move {
            let path = request.uri().path();
            if let Some(gate) = &gate {
                if path == PRM_PATH {
                    return gate.metadata(request.headers());
                }
                if path == PATH
                    && let Some(refused) = gate.check(request.headers())
                {
                    return refused;
                }
                if path == PATH && gate.step_up_tool.is_some() {
                    // The body decides (a call of the step-up tool): read it whole.
                    let (parts, body) = request.into_parts();
                    let Ok(body) = body.collect().await.map(|b| b.to_bytes()) else {
                        return reply(StatusCode::BAD_REQUEST, "text/plain", "bad body\n");
                    };
                    if gate.wants_step_up(&body) {
                        return gate.step_up(&parts.headers);
                    }
                    let request = Request::from_parts(parts, http_body_util::Full::new(body));
                    return service.handle(request).await;
                }
            }
            if path == PATH {
                service.handle(request).await
            } else {
                reply(StatusCode::NOT_FOUND, "text/plain", "not found\n")
            }
        }
    };
    let serving = tokio::spawn(http::serve(listener, route, stop.clone()));
    wait_for_stop_signal(ignore_term).await;
    // Stop taking connections, end the sessions, let open ones finish briefly.
    stop.cancel();
    ct.cancel();
    let drained = tokio::time::timeout(SHUTDOWN_GRACE, async {
        if let Ok(mut connections) = serving.await {
            while connections.join_next().await.is_some() {}
        }
    })
    .await;
    if drained.is_err() {
        log("shutdown: gave up waiting for open connections");
    }
    log("stopped");
    Ok(())
}

/// Resolves on SIGTERM or SIGINT; never, under the `ignore-term` fault (which installs its own
/// handlers that swallow them).
pub(super) async fn wait_for_stop_signal(ignore_term: bool) {
    if ignore_term {
        return std::future::pending().await;
    }
    let (mut term, mut int) = match (
        signal(SignalKind::terminate()),
        signal(SignalKind::interrupt()),
    ) {
        (Ok(term), Ok(int)) => (term, int),
        (Err(error), _) | (_, Err(error)) => {
            log(format_args!(
                "cannot watch signals ({error}); running until killed"
            ));
            return std::future::pending().await;
        }
    };
    tokio::select! {
        _ = term.recv() => log("SIGTERM: shutting down"),
        _ = int.recv() => log("SIGINT: shutting down"),
    }
}
