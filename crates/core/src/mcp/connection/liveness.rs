//! A Streamable HTTP server has no process to watch: its end shows only as
//! the end of an event stream (the GET stream of a handshake session, a
//! 2026-07-28 `subscriptions/listen`), which the watchdog hears of. A server
//! with no such stream open — one that announces no list changes at
//! 2026-07-28, one without a GET stream — would be noticed only by the next
//! request. For those alone, and only while no stream is open, a cheap
//! request (`ping`; `server/discover` at 2026-07-28, which has no `ping`)
//! goes out every `liveness_ping_ms`; two in a row that get no answer (within
//! the call timeout) end the connection (the watchdog revokes it as lost).
//! Any answer, even a JSON-RPC error, says the server is there.

use std::sync::{Arc, Weak};
use std::time::Duration;

use serde_json::json;

use super::negotiate::Era;
use super::{Connection, RequestError};

/// After one check got no answer, the next goes out this soon (a server
/// that died refuses at once; one that only hiccuped gets a second chance).
const RECHECK_AFTER: Duration = Duration::from_millis(500);

/// Checks `connection` every `every` while it has no event stream open,
/// until it ends. Holds it weakly: the check never keeps a connection alive.
pub(super) async fn watch(connection: Weak<Connection>, every: Duration) {
    let mut unanswered = 0u32;
    loop {
        let wait = if unanswered == 0 {
            every
        } else {
            RECHECK_AFTER
        };
        let Some(ended) = connection.upgrade().map(|c| Arc::clone(&c.life)) else {
            return;
        };
        tokio::select! {
            () = tokio::time::sleep(wait) => {}
            () = ended.ended.cancelled() => return,
        }
        let Some(connection) = connection.upgrade() else {
            return;
        };
        if connection.is_ended() {
            return;
        }
        if connection.has_event_stream() {
            unanswered = 0;
            continue;
        }
        // A dead server refuses at once; a slow one gets as long as a call.
        if answers(&connection, connection.call_timeout.max(every)).await {
            unanswered = 0;
            continue;
        }
        unanswered += 1;
        tracing::debug!(alias = %connection.alias, unanswered, "liveness check got no answer");
        if unanswered >= 2 {
            connection.no_answer.cancel();
            return;
        }
    }
}

/// Whether the server answered one check within `within`.
async fn answers(connection: &Connection, within: Duration) -> bool {
    let method = match connection.era {
        Era::Stateless => "server/discover",
        _ => "ping",
    };
    match connection.request(method, json!({}), within).await {
        // An error the server sent (or a sign-in it refused) is an answer.
        Ok(_) | Err(RequestError::Remote { .. } | RequestError::Unauthorized(_)) => true,
        Err(_) => false,
    }
}

impl Connection {
    /// Whether an event stream from the server is open now, whose end the
    /// watchdog would hear of.
    fn has_event_stream(&self) -> bool {
        self.listening.is_open() || self.event_streams.any()
    }
}
