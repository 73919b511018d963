//! The harness's two small HTTP servers — the demo server's Streamable HTTP
//! mode and the OAuth redirect listener — on hyper directly: HTTP/1.1, one
//! task per connection, and a graceful close of every open connection when
//! asked to stop (a router framework would add a dozen crates for two routes).

use std::convert::Infallible;
use std::future::Future;

use bytes::Bytes;
use http_body_util::{BodyExt as _, Full, combinators::BoxBody};
use hyper::body::Incoming;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

/// What a handler answers.
pub type Reply = Response<BoxBody<Bytes, Infallible>>;

/// Accepts connections on `listener` and answers each request with
/// `handle`, until `stop` is cancelled; then asks every open connection to
/// close once its request in flight is answered. The returned set holds the
/// connections still closing: the caller decides how long to wait for them.
pub async fn serve<H, F>(listener: TcpListener, handle: H, stop: CancellationToken) -> JoinSet<()>
where
    H: Fn(Request<Incoming>) -> F + Clone + Send + Sync + 'static,
    F: Future<Output = Reply> + Send + 'static,
{
    let mut connections = JoinSet::new();
    loop {
        tokio::select! {
            () = stop.cancelled() => break,
            accepted = listener.accept() => {
                let Ok((stream, _)) = accepted else {
                    // Out of file descriptors or a reset before accept: keep serving.
                    continue;
                };
                // Answers are small writes (an SSE event, then the stream's end):
                // with Nagle's algorithm each waits for the client's delayed ACK,
                // ~40 ms a call.
                let _ = stream.set_nodelay(true);
                let (handle, stop) = (handle.clone(), stop.clone());
                connections.spawn(async move {
                    let service = hyper::service::service_fn(move |request| {
                        let reply = handle(request);
                        async move { Ok::<_, Infallible>(reply.await) }
                    });
                    let conn = hyper::server::conn::http1::Builder::new()
                        .serve_connection(TokioIo::new(stream), service);
                    tokio::pin!(conn);
                    tokio::select! {
                        _ = conn.as_mut() => {}
                        () = stop.cancelled() => {
                            conn.as_mut().graceful_shutdown();
                            let _ = conn.await;
                        }
                    }
                });
            }
            // Reap finished connections as we go.
            Some(_) = connections.join_next(), if !connections.is_empty() => {}
        }
    }
    connections
}

/// A reply with `status`, a content type and a fixed body.
pub fn reply(status: StatusCode, content_type: &'static str, body: &'static str) -> Reply {
    let mut response = Response::new(Full::new(Bytes::from_static(body.as_bytes())).boxed());
    *response.status_mut() = status;
    response.headers_mut().insert(
        hyper::header::CONTENT_TYPE,
        hyper::header::HeaderValue::from_static(content_type),
    );
    response
}
