//! `resources/subscribe` through the gateway. A client session subscribes to
//! a resource it is offered (resolved as a read is, in a fresh listing); the
//! gateway subscribes upstream under the alias's read policy (`deny`
//! refuses) and passes the server's `notifications/resources/updated` on to
//! the sessions subscribed to that resource on that connection only, each
//! under the URI it subscribed with. A subscription ends with
//! `resources/unsubscribe`, when its session ends, or when its connection is
//! no longer what the client is offered (a disconnect, a kill, a revocation,
//! a profile that no longer sees it); when the last one on a live connection
//! ends, the gateway unsubscribes upstream too.

use std::sync::{Arc, Mutex};

use rmcp::RoleServer;
use rmcp::service::Peer;

use super::super::events::ConnectionId;
use super::super::names::ServerAlias;

/// Who hears of a subscribed resource's changes.
#[derive(Clone)]
pub(super) enum Subscriber {
    /// A session (`resources/subscribe`).
    Session(Peer<RoleServer>),
    /// A 2026-07-28 `subscriptions/listen` stream, by the gateway's key for it.
    Listen {
        key: u64,
        sink: rmcp::service::SubscriptionSink,
    },
}

impl Subscriber {
    fn same(&self, other: &Subscriber) -> bool {
        match (self, other) {
            (Subscriber::Session(a), Subscriber::Session(b)) => same_session(a, b),
            (Subscriber::Listen { key: a, .. }, Subscriber::Listen { key: b, .. }) => a == b,
            _ => false,
        }
    }

    /// A session whose transport closed (a stream is removed when it ends).
    fn gone(&self) -> bool {
        match self {
            Subscriber::Session(peer) => peer.is_transport_closed(),
            Subscriber::Listen { .. } => false,
        }
    }
}

/// One session's (or listen stream's) subscription to one resource.
#[derive(Clone)]
pub(super) struct Subscription {
    pub(super) client: String,
    pub(super) to: Subscriber,
    pub(super) alias: ServerAlias,
    pub(super) connection: ConnectionId,
    /// The URI as the server names it.
    pub(super) upstream: String,
    /// The URI as the client subscribed to it.
    pub(super) outside: String,
}

/// What the gateway must unsubscribe upstream: nobody watches it any more.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Unwatched {
    pub(super) alias: ServerAlias,
    pub(super) connection: ConnectionId,
    pub(super) upstream: String,
}

#[derive(Default)]
pub(super) struct Subscriptions(Mutex<Vec<Subscription>>);

/// Whether two peers are one session's: a session's peers share its peer
/// info (a peer has no identity of its own).
fn same_session(a: &Peer<RoleServer>, b: &Peer<RoleServer>) -> bool {
    match (a.peer_info(), b.peer_info()) {
        (Some(a), Some(b)) => Arc::ptr_eq(&a, &b),
        _ => false,
    }
}

impl Subscriptions {
    /// Adds `subscription` (once per session and outside URI).
    pub(super) fn add(&self, subscription: Subscription) {
        let mut all = self.lock();
        let known = all
            .iter()
            .any(|s| s.outside == subscription.outside && s.to.same(&subscription.to));
        if !known {
            all.push(subscription);
        }
    }

    /// Ends `peer`'s subscription to `outside`; what is left unwatched.
    pub(super) fn remove(&self, peer: &Peer<RoleServer>, outside: &str) -> Vec<Unwatched> {
        let to = Subscriber::Session(peer.clone());
        self.retain(|s| !(s.outside == outside && s.to.same(&to)))
    }

    /// Ends every subscription of the listen stream `key`; what is left unwatched.
    pub(super) fn remove_listen(&self, key: u64) -> Vec<Unwatched> {
        self.retain(|s| !matches!(s.to, Subscriber::Listen { key: k, .. } if k == key))
    }

    /// Keeps the subscriptions `keep` says to; what is left unwatched.
    pub(super) fn retain(&self, keep: impl Fn(&Subscription) -> bool) -> Vec<Unwatched> {
        let mut all = self.lock();
        let (kept, gone): (Vec<_>, Vec<_>) = all.drain(..).partition(|s| keep(s));
        *all = kept;
        let mut unwatched: Vec<Unwatched> = Vec::new();
        for s in gone {
            let watched = all
                .iter()
                .any(|k| k.connection == s.connection && k.upstream == s.upstream);
            let key = Unwatched {
                alias: s.alias,
                connection: s.connection,
                upstream: s.upstream,
            };
            if !watched && !unwatched.contains(&key) {
                unwatched.push(key);
            }
        }
        unwatched
    }

    /// The sessions to tell that `uri` of `connection` changed, each with
    /// the URI it subscribed with.
    pub(super) fn updated(&self, connection: ConnectionId, uri: &str) -> Vec<Subscription> {
        self.lock()
            .iter()
            .filter(|s| s.connection == connection && s.upstream == uri)
            .cloned()
            .collect()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Subscription>> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// Tells each session subscribed to a resource that changed, under its own
/// URI (`updated`: connection and server URI, as the hub reported them).
pub(super) async fn pass_on_updates(shared: &super::Shared, updated: Vec<(ConnectionId, String)>) {
    for (connection, uri) in updated {
        for s in shared.subscriptions.updated(connection, &uri) {
            let sent = match &s.to {
                Subscriber::Session(peer) => {
                    let param =
                        rmcp::model::ResourceUpdatedNotificationParam::new(s.outside.clone());
                    peer.notify_resource_updated(param)
                        .await
                        .map_err(|e| e.to_string())
                }
                Subscriber::Listen { sink, .. } => sink
                    .notify_resource_updated(s.outside.clone())
                    .await
                    .map_err(|e| e.to_string()),
            };
            if let Err(e) = sent {
                tracing::info!(client = s.client, "gateway: resource update not sent: {e}");
            }
        }
    }
}

/// Ends the subscriptions of sessions that ended and of connections a
/// client is no longer offered resources from (`offers`: per client, in the
/// settings' order); unsubscribes upstream what nobody watches any more on a
/// connection that is still live.
pub(super) async fn end_stale(shared: &super::Shared, offers: &[super::Offer]) {
    let clients = &shared.settings.clients;
    let unwatched = shared.subscriptions.retain(|s| {
        !s.to.gone()
            && clients
                .iter()
                .zip(offers)
                .find(|(c, _)| c.name == s.client)
                .is_some_and(|(_, offer)| {
                    offer
                        .resources
                        .iter()
                        .any(|(a, c)| *a == s.alias && *c == s.connection)
                })
    });
    unsubscribe_upstream(shared, unwatched).await;
}

/// `resources/unsubscribe` upstream of each, where its connection is still
/// the alias's (a gone connection took its subscriptions with it).
pub(super) async fn unsubscribe_upstream(shared: &super::Shared, unwatched: Vec<Unwatched>) {
    let snapshot = shared.hub.snapshot();
    for u in unwatched {
        let live = snapshot
            .connection_for(&u.alias)
            .is_some_and(|entry| entry.connection().id() == u.connection);
        if !live {
            continue;
        }
        let ended = shared
            .hub
            .resource_subscription(u.alias.as_str(), &u.upstream, false)
            .await;
        if let Err(e) = ended.result {
            tracing::info!(
                alias = u.alias.as_str(),
                "gateway: upstream unsubscribe failed: {}",
                e.message
            );
        }
    }
}
