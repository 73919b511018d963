//! A 2026-07-28 client's resource subscriptions: the `resourceSubscriptions`
//! of its `subscriptions/listen`. rmcp acknowledges a listen before the
//! gateway's handler sees it, from a filter worked out without the request
//! (so without knowing who asks, or listing anything). So the front door
//! resolves the URIs first, as a `resources/subscribe` would be (a URI the
//! client is offered now, under the read policy), and rewrites the request
//! to name only those: the acknowledgment honours exactly what will be
//! delivered. The handler's `listen` then subscribes upstream and books them
//! on the stream (`subscriptions.rs`) until it ends.
//!
//! rmcp checks that the `Mcp-Method` header names the body's method, so a
//! listen always comes with `Mcp-Method: subscriptions/listen`, and only
//! those requests are read here.

use bytes::Bytes;
use http_body_util::BodyExt as _;
use hyper::body::Incoming;
use hyper::{Request, StatusCode};
use serde_json::Value;

use super::super::names::ServerAlias;
use super::super::serve::{self as http, Reply};
use super::settings::ClientProfile;
use super::subscriptions::{self, Subscriber, Subscription};
use super::{Shared, resources};

/// The largest listen request read (its URIs): far above any real one.
const MAX_BODY: usize = 256 * 1024;

/// The request body rmcp reads, whichever way it came.
pub(super) type Body = http_body_util::combinators::BoxBody<Bytes, hyper::Error>;

/// One resource a listen asked for, resolved for its client.
#[derive(Debug, Clone)]
pub(super) struct Resolved {
    /// As the client named it (and as updates name it).
    outside: String,
    alias: ServerAlias,
    /// As the server names it.
    upstream: String,
}

/// What the front door resolved, in the request's extensions.
#[derive(Debug, Clone, Default)]
pub(super) struct ListenResources(Vec<Resolved>);

/// Whether `parts` is a listen request (by its `Mcp-Method` header).
pub(super) fn is_listen(parts: &hyper::http::request::Parts) -> bool {
    parts.method == hyper::Method::POST
        && parts
            .headers
            .get("mcp-method")
            .is_some_and(|v| v.as_bytes() == b"subscriptions/listen")
}

/// Reads a listen request's body, keeps in its `resourceSubscriptions` the
/// URIs `client` is offered now (resolved, under the read policy), and puts
/// what they resolved to in its extensions. A body that is not such a
/// request goes on unchanged (rmcp answers it).
pub(super) async fn resolve(
    shared: &Shared,
    client: &ClientProfile,
    mut parts: hyper::http::request::Parts,
    body: Incoming,
) -> Result<Request<Body>, Reply> {
    let limited = http_body_util::Limited::new(body, MAX_BODY);
    let Ok(collected) = limited.collect().await else {
        return Err(http::reply(
            StatusCode::PAYLOAD_TOO_LARGE,
            "text/plain",
            "payload too large: a subscriptions/listen request this long is refused\n",
        ));
    };
    let bytes = collected.to_bytes();
    let mut resolved = ListenResources::default();
    let rewritten = match serde_json::from_slice::<Value>(&bytes) {
        Ok(mut message) => {
            let uris = message
                .pointer_mut("/params/notifications/resourceSubscriptions")
                .and_then(Value::as_array_mut);
            match uris {
                Some(uris) => {
                    let asked: Vec<String> = uris
                        .iter()
                        .filter_map(Value::as_str)
                        .map(str::to_string)
                        .collect();
                    for uri in asked {
                        if resolved.0.iter().any(|r| r.outside == uri) {
                            continue;
                        }
                        match resources::resolve(shared, client, &uri).await {
                            Ok((alias, upstream)) => resolved.0.push(Resolved {
                                outside: uri,
                                alias,
                                upstream,
                            }),
                            Err(refused) => tracing::info!(
                                client = client.name,
                                "gateway: a listen's resource subscription not honoured: {}",
                                refused.message
                            ),
                        }
                    }
                    *uris = resolved
                        .0
                        .iter()
                        .map(|r| Value::String(r.outside.clone()))
                        .collect();
                    serde_json::to_vec(&message).map(Bytes::from).ok()
                }
                None => None,
            }
        }
        Err(_) => None,
    };
    parts.extensions.insert(resolved);
    let body = http_body_util::Full::new(rewritten.unwrap_or(bytes))
        .map_err(|never| match never {})
        .boxed();
    Ok(Request::from_parts(parts, body))
}

/// Subscribes upstream to what the front door resolved for this listen
/// (`extensions`) and rmcp acknowledged (`sink`), booked on stream `key`.
pub(super) async fn subscribe(
    shared: &Shared,
    client: &ClientProfile,
    key: u64,
    sink: &rmcp::service::SubscriptionSink,
    extensions: &rmcp::model::Extensions,
) {
    let Some(wanted) = extensions
        .get::<hyper::http::request::Parts>()
        .and_then(|parts| parts.extensions.get::<ListenResources>())
    else {
        return;
    };
    let acknowledged = sink.accepted().resource_subscriptions.clone();
    for r in &wanted.0 {
        if !acknowledged
            .as_ref()
            .is_some_and(|a| a.contains(&r.outside))
        {
            continue;
        }
        let subscribed = shared
            .hub
            .resource_subscription(r.alias.as_str(), &r.upstream, true)
            .await;
        match subscribed.result {
            Ok(connection) => shared.subscriptions.add(Subscription {
                client: client.name.clone(),
                to: Subscriber::Listen {
                    key,
                    sink: sink.clone(),
                },
                alias: r.alias.clone(),
                connection,
                upstream: r.upstream.clone(),
                outside: r.outside.clone(),
            }),
            // Acknowledged, then the upstream failed: its updates cannot come.
            Err(e) => tracing::warn!(
                client = client.name,
                alias = r.alias.as_str(),
                "gateway: a listen's resource subscription failed upstream: {}",
                e.message
            ),
        }
    }
}

/// The stream `key` ended: its subscriptions end, and what nobody watches
/// any more is unsubscribed upstream.
pub(super) async fn ended(shared: &Shared, key: u64) {
    let unwatched = shared.subscriptions.remove_listen(key);
    subscriptions::unsubscribe_upstream(shared, unwatched).await;
}
