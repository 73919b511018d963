//! `demo-server NAME --http ADDR`: rmcp's Streamable HTTP server service at
//! `/mcp`, served by hyper directly (HTTP/1.1; a router framework would add
//! dozens of crates for one route).

use std::convert::Infallible;
use std::io::Write;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use bytes::Bytes;
use http_body_util::{BodyExt, Full, combinators::BoxBody};
use hyper::body::Incoming;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use rmcp::transport::streamable_http_server::{
    StreamableHttpServerConfig, StreamableHttpService, session::local::LocalSessionManager,
};
use tokio::signal::unix::{SignalKind, signal};
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

use super::log;
use super::tools::DemoHandler;

/// The one route.
const PATH: &str = "/mcp";
/// Open SSE streams can hold a graceful shutdown open: give them this long, not forever.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(2);

type Service = StreamableHttpService<DemoHandler, LocalSessionManager>;

pub(super) async fn serve(
    handler: DemoHandler,
    addr: SocketAddr,
    ignore_term: bool,
) -> anyhow::Result<()> {
    anyhow::ensure!(
        addr.ip().is_loopback(),
        "--http only serves on loopback addresses, not {addr}"
    );
    let ct = CancellationToken::new();
    let config = StreamableHttpServerConfig::default().with_cancellation_token(ct.child_token());
    let service: Service = StreamableHttpService::new(
        move || Ok(handler.clone()),
        Arc::new(LocalSessionManager::default()),
        config,
    );
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

    let mut connections = JoinSet::new();
    let stop = wait_for_stop_signal(ignore_term);
    tokio::pin!(stop);
    loop {
        tokio::select! {
            () = &mut stop => break,
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => {
                    connections.spawn(connection(stream, service.clone(), ct.clone()));
                }
                Err(error) => log(format_args!("accept failed: {error}")),
            },
            // Reap finished connections as we go.
            Some(_) = connections.join_next(), if !connections.is_empty() => {}
        }
    }
    // Stop taking connections, end the sessions, let open ones finish briefly.
    drop(listener);
    ct.cancel();
    let drained = tokio::time::timeout(SHUTDOWN_GRACE, async {
        while connections.join_next().await.is_some() {}
    })
    .await;
    if drained.is_err() {
        log("shutdown: gave up waiting for open connections");
    }
    log("stopped");
    Ok(())
}

/// One HTTP/1.1 connection, shut down gracefully when the server stops.
async fn connection(stream: tokio::net::TcpStream, service: Service, ct: CancellationToken) {
    let route = hyper::service::service_fn(move |request: Request<Incoming>| {
        let service = service.clone();
        async move {
            if request.uri().path() == PATH {
                Ok::<_, Infallible>(service.handle(request).await)
            } else {
                Ok(not_found())
            }
        }
    });
    let conn =
        hyper::server::conn::http1::Builder::new().serve_connection(TokioIo::new(stream), route);
    tokio::pin!(conn);
    let result = tokio::select! {
        result = conn.as_mut() => result,
        () = ct.cancelled() => {
            conn.as_mut().graceful_shutdown();
            conn.await
        }
    };
    if let Err(error) = result {
        log(format_args!("connection ended: {error}"));
    }
}

fn not_found() -> Response<BoxBody<Bytes, Infallible>> {
    let mut response = Response::new(Full::new(Bytes::from_static(b"not found\n")).boxed());
    *response.status_mut() = StatusCode::NOT_FOUND;
    response
}

/// Resolves on SIGTERM or SIGINT; never, under the `ignore-term` fault (which installs its own
/// handlers that swallow them).
async fn wait_for_stop_signal(ignore_term: bool) {
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
