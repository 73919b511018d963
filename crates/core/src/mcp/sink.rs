//! Where the MCP layer's events go: a forwarder (the session's one channel, a
//! printer) or nowhere, with an [`Observer`] (telemetry) riding along.

use std::sync::Arc;

use tokio::sync::mpsc;

use super::events::McpEvent;
use super::observe::Observer;

/// Where events go. Sending never blocks; events are dropped if nobody listens.
/// An [`Observer`] (telemetry) may ride along: it sees every event, and the hub
/// reports every call to it.
#[derive(Clone, Default)]
pub struct EventSink {
    forward: Option<Arc<dyn Fn(McpEvent) + Send + Sync>>,
    observer: Option<Arc<dyn Observer>>,
}

impl EventSink {
    pub fn new() -> (Self, mpsc::UnboundedReceiver<McpEvent>) {
        let (tx, rx) = mpsc::unbounded_channel();
        (Self::forward(move |event| drop(tx.send(event))), rx)
    }

    /// Hands every event to `f` (which must not block): lets a session put MCP
    /// and agent events on one channel, so they are read in the order they happened.
    pub fn forward(f: impl Fn(McpEvent) + Send + Sync + 'static) -> Self {
        Self {
            forward: Some(Arc::new(f)),
            observer: None,
        }
    }

    /// A sink for callers that do not listen (headless commands).
    pub fn discard() -> Self {
        Self::default()
    }

    /// The same sink, with `observer` watching (or without one for `None`).
    pub fn observed_by(mut self, observer: Option<Arc<dyn Observer>>) -> Self {
        self.observer = observer;
        self
    }

    pub fn observer(&self) -> Option<&Arc<dyn Observer>> {
        self.observer.as_ref()
    }

    pub fn emit(&self, event: McpEvent) {
        if let Some(observer) = &self.observer {
            observer.event(&event);
        }
        if let Some(f) = &self.forward {
            f(event);
        }
    }
}

impl std::fmt::Debug for EventSink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.forward.is_some() {
            "EventSink"
        } else {
            "EventSink(discard)"
        })?;
        if self.observer.is_some() {
            f.write_str(" + observer")?;
        }
        Ok(())
    }
}
