//! The credential scan's and the poisoning screen's rules compiled on a
//! thread of their own as soon as a hub exists, not on the first call's or
//! the first connect's path: they are regex sets that take tens of
//! milliseconds to build (25 ms in release for the credential rules, measured
//! as the first outside call's `gateway_ms` through `serve --stdio`). A call
//! that needs them before the thread is done waits for it, as it would have
//! compiled them itself.

use std::sync::Once;

static STARTED: Once = Once::new();

/// Starts the compile once per process; returns at once.
pub(super) fn start() {
    STARTED.call_once(|| {
        let spawned = std::thread::Builder::new()
            .name("rules-warm".into())
            .spawn(|| {
                super::secrets::warm();
                super::screen::warm();
            });
        if let Err(e) = spawned {
            // Not fatal: the first use compiles them, as before.
            tracing::debug!("the rules are compiled on first use: {e}");
        }
    });
}
