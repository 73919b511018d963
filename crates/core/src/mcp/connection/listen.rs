//! Tool-list changes on 2026-07-28 connections: there is no standing stream
//! for unsolicited notifications any more, so the harness asks for them with
//! `subscriptions/listen` (tools only) and counts each
//! `notifications/tools/list_changed` it delivers exactly like a notification
//! on a handshake connection — the same coalesced re-list follows (`relist`).
//! A resource watched for a client of the gateway gets a `subscriptions/listen`
//! of its own (`resourceSubscriptions`), whose `notifications/resources/updated`
//! become the same event a handshake connection's give.

use std::sync::Arc;
use std::time::Duration;

use std::num::NonZeroUsize;

use rmcp::model::{ServerNotification, SubscriptionFilter};
use rmcp::service::{Subscription, SubscriptionEnd};

use super::client::HarnessClient;
use crate::mcp::connection::Connection;
use crate::mcp::events::Offering;

/// Consecutive failures to (re)establish the subscription before giving up on
/// it (the list's `ttlMs` still bounds how stale it can get).
const MAX_FAILURES: u32 = 3;
/// Wait before re-subscribing after the subscription ended.
const RESUBSCRIBE_AFTER: Duration = Duration::from_secs(1);
/// Notifications buffered: a storm beyond this ends the subscription as
/// lagged, which costs one re-list and a re-subscribe, never a lost change.
const CAPACITY: NonZeroUsize = NonZeroUsize::new(1024).expect("non-zero");

/// Opens the tools subscription of `connection` (waiting, within `within`, for
/// the server to acknowledge it, so that a change made after the first listing
/// is announced) and keeps it open for the life of the connection.
pub(in crate::mcp) async fn start(connection: &Arc<Connection>, within: Duration) {
    if !connection.listens {
        return;
    }
    let first = tokio::time::timeout(within, subscribe(connection)).await;
    let first = match first {
        Ok(Ok(subscription)) => Some(subscription),
        Ok(Err(error)) => {
            tracing::debug!(alias = %connection.alias, %error, "subscriptions/listen failed");
            None
        }
        Err(_) => None,
    };
    tokio::spawn(follow(Arc::clone(connection), first));
}

async fn subscribe(connection: &Connection) -> Result<Subscription, rmcp::ServiceError> {
    let mut filter = SubscriptionFilter::new();
    filter.tools_list_changed = Some(true);
    filter.resources_list_changed = Some(true);
    filter.prompts_list_changed = Some(true);
    connection.peer.listen_with_capacity(filter, CAPACITY).await
}

async fn follow(connection: Arc<Connection>, mut current: Option<Subscription>) {
    let mut failures = u32::from(current.is_none());
    while failures < MAX_FAILURES && !connection.is_ended() {
        let mut subscription = match current.take() {
            Some(subscription) => subscription,
            None => {
                let listening = tokio::select! {
                    listening = subscribe(&connection) => listening,
                    () = connection.ended() => return,
                };
                match listening {
                    Ok(subscription) => subscription,
                    Err(error) => {
                        failures += 1;
                        tracing::debug!(alias = %connection.alias, %error, "subscriptions/listen failed");
                        let unanswered = !matches!(error, rmcp::ServiceError::McpError(_));
                        if unanswered && failures >= MAX_FAILURES {
                            // An HTTP server that no longer answers at all is
                            // gone: the watchdog revokes its tools (a stdio
                            // server's exit is noticed directly).
                            connection.unreachable.cancel();
                        }
                        wait(&connection).await;
                        continue;
                    }
                }
            }
        };
        if subscription.acknowledged().tools_list_changed != Some(true) {
            tracing::debug!(alias = %connection.alias, "the server does not announce tool-list changes");
            return;
        }
        failures = 0;
        connection.listening.set(Some(subscription.id().clone()));
        loop {
            let next = tokio::select! {
                next = subscription.next() => next,
                () = connection.ended() => return,
            };
            match next {
                Ok(Some(ServerNotification::ToolListChangedNotification(_))) => {
                    HarnessClient::note_list_changed(&connection.parts);
                }
                Ok(Some(ServerNotification::ResourceListChangedNotification(_))) => {
                    HarnessClient::note_offerings_changed(&connection.parts, Offering::Resources);
                }
                Ok(Some(ServerNotification::PromptListChangedNotification(_))) => {
                    HarnessClient::note_offerings_changed(&connection.parts, Offering::Prompts);
                }
                Ok(Some(_)) => {}
                Ok(None) => break,
                Err(error) => {
                    failures += 1;
                    tracing::debug!(alias = %connection.alias, %error, "the subscription broke");
                    break;
                }
            }
        }
        connection.listening.set(None);
        if matches!(subscription.end(), Some(SubscriptionEnd::Lagged { .. })) {
            // Changes were missed: re-list to be sure.
            HarnessClient::note_list_changed(&connection.parts);
        }
        wait(&connection).await;
    }
}

async fn wait(connection: &Connection) {
    tokio::select! {
        () = tokio::time::sleep(RESUBSCRIBE_AFTER) => {}
        () = connection.ended() => {}
    }
}

/// Watches `uri` on a 2026-07-28 connection (`resources/subscribe` has no
/// place there): a subscription of its own, until [`unwatch_resource`] or the
/// connection's end. Watching a URI already watched is a no-op.
pub(in crate::mcp) async fn watch_resource(
    connection: &Arc<Connection>,
    uri: &str,
) -> Result<(), rmcp::ServiceError> {
    if lock(connection).contains_key(uri) {
        return Ok(());
    }
    let mut filter = SubscriptionFilter::new();
    filter.resource_subscriptions = Some(vec![uri.to_string()]);
    let mut subscription = connection
        .peer
        .listen_with_capacity(filter, CAPACITY)
        .await?;
    let accepted = subscription
        .acknowledged()
        .resource_subscriptions
        .as_ref()
        .is_some_and(|uris| uris.iter().any(|u| u == uri));
    if !accepted {
        return Err(rmcp::ServiceError::McpError(
            rmcp::ErrorData::invalid_params(
                "the server did not accept the resource subscription",
                None,
            ),
        ));
    }
    let stop = tokio_util::sync::CancellationToken::new();
    lock(connection).insert(uri.to_string(), stop.clone());
    let connection = Arc::clone(connection);
    let uri = uri.to_string();
    tokio::spawn(async move {
        loop {
            let next = tokio::select! {
                next = subscription.next() => next,
                () = stop.cancelled() => break,
                () = connection.ended() => break,
            };
            match next {
                Ok(Some(ServerNotification::ResourceUpdatedNotification(n))) => {
                    HarnessClient::note_resource_updated(&connection.parts, n.params.uri);
                }
                Ok(Some(_)) => {}
                Ok(None) | Err(_) => break,
            }
        }
        // Dropping the subscription cancels it on the server.
        lock(&connection).remove(&uri);
    });
    Ok(())
}

/// Ends the watch of `uri`, if there is one.
pub(in crate::mcp) fn unwatch_resource(connection: &Connection, uri: &str) {
    if let Some(stop) = lock(connection).remove(uri) {
        stop.cancel();
    }
}

fn lock(
    connection: &Connection,
) -> std::sync::MutexGuard<'_, std::collections::HashMap<String, tokio_util::sync::CancellationToken>>
{
    connection.watches.lock().unwrap_or_else(|e| e.into_inner())
}
