//! The stdio transport under era detection (2026-07-28 §stdio, Backward
//! Compatibility): the `server/discover` probe and, when the server turns out
//! to be legacy, the `initialize` handshake run over the *same* pipes, so a
//! legacy server is never spawned twice.
//!
//! rmcp consumes its transport; a failed or timed-out probe drops it. This
//! wrapper then hands the pipes back (`lease`). It also keeps the two phases
//! apart: probe requests go out with ids of their own (`mcp-harness-probe-N`)
//! and are mapped back for rmcp, so an answer that arrives after we gave up on
//! the probe can never be taken for the handshake's answer; in the handshake
//! phase such late answers are dropped.

use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};

use futures::future::Either;
use rmcp::model::{ClientJsonRpcMessage, NumberOrString, ServerJsonRpcMessage};
use rmcp::service::{RoleClient, RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use tokio::sync::oneshot;

const PROBE_ID_PREFIX: &str = "mcp-harness-probe-";

/// How the wrapper treats ids right now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub(in crate::mcp) enum Phase {
    /// The probe: requests get probe ids, answers to them are mapped back.
    Probe = 0,
    /// After a successful probe: messages pass untouched.
    Settled = 1,
    /// The handshake after a failed or silent probe: late probe answers are dropped.
    Handshake = 2,
}

/// Shared with the negotiator, which moves the phase on.
#[derive(Debug, Clone)]
pub(in crate::mcp) struct PhaseSwitch(Arc<AtomicU8>);

impl PhaseSwitch {
    fn new(phase: Phase) -> Self {
        Self(Arc::new(AtomicU8::new(phase as u8)))
    }

    pub(in crate::mcp) fn set(&self, phase: Phase) {
        self.0.store(phase as u8, Ordering::SeqCst);
    }

    fn get(&self) -> Phase {
        match self.0.load(Ordering::SeqCst) {
            0 => Phase::Probe,
            1 => Phase::Settled,
            _ => Phase::Handshake,
        }
    }
}

/// A transport lent to rmcp for one lifecycle attempt.
pub(in crate::mcp) struct Leased<T> {
    inner: Option<T>,
    back: Option<oneshot::Sender<T>>,
    phase: PhaseSwitch,
}

/// Lends `transport` for the probe: the receiver gets it back when rmcp drops it.
pub(in crate::mcp) fn lease<T>(transport: T) -> (Leased<T>, oneshot::Receiver<T>, PhaseSwitch) {
    let (back, returned) = oneshot::channel();
    let phase = PhaseSwitch::new(Phase::Probe);
    let leased = Leased {
        inner: Some(transport),
        back: Some(back),
        phase: phase.clone(),
    };
    (leased, returned, phase)
}

/// Lends `transport` for the handshake after a probe: late probe answers are
/// dropped; the receiver gets the pipes back if the handshake fails.
pub(in crate::mcp) fn lease_for_handshake<T>(
    transport: T,
) -> (Leased<T>, oneshot::Receiver<T>, PhaseSwitch) {
    let (leased, returned, phase) = lease(transport);
    phase.set(Phase::Handshake);
    (leased, returned, phase)
}

impl<T> Drop for Leased<T> {
    fn drop(&mut self) {
        if let (Some(inner), Some(back)) = (self.inner.take(), self.back.take()) {
            // The negotiator may have stopped waiting; then the pipes just close.
            let _ = back.send(inner);
        }
    }
}

fn probe_id(n: i64) -> NumberOrString {
    NumberOrString::String(Arc::from(format!("{PROBE_ID_PREFIX}{n}")))
}

/// The rmcp id behind a probe id, if `id` is one.
fn unprobe(id: &NumberOrString) -> Option<i64> {
    match id {
        NumberOrString::String(s) => s.strip_prefix(PROBE_ID_PREFIX)?.parse().ok(),
        NumberOrString::Number(_) => None,
    }
}

impl<T> Transport<RoleClient> for Leased<T>
where
    T: Transport<RoleClient, Error = std::io::Error>,
{
    type Error = std::io::Error;

    fn send(
        &mut self,
        mut item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        if self.phase.get() == Phase::Probe
            && let ClientJsonRpcMessage::Request(request) = &mut item
            && let NumberOrString::Number(n) = request.id
        {
            request.id = probe_id(n);
        }
        match self.inner.as_mut() {
            Some(inner) => Either::Left(inner.send(item)),
            None => Either::Right(std::future::ready(Err(std::io::Error::other(
                "the transport was handed back",
            )))),
        }
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleClient>> {
        loop {
            let mut message = self.inner.as_mut()?.receive().await?;
            let id = match &mut message {
                ServerJsonRpcMessage::Response(response) => Some(&mut response.id),
                ServerJsonRpcMessage::Error(error) => error.id.as_mut(),
                _ => None,
            };
            match (self.phase.get(), id) {
                (Phase::Probe, Some(id)) => {
                    if let Some(n) = unprobe(id) {
                        *id = NumberOrString::Number(n);
                    }
                }
                (Phase::Handshake, Some(id)) if unprobe(id).is_some() => {
                    tracing::debug!("dropped a late answer to the server/discover probe");
                    continue;
                }
                _ => {}
            }
            return Some(message);
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        match self.inner.as_mut() {
            Some(inner) => inner.close().await,
            None => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn probe_ids_round_trip_and_ordinary_ids_do_not_match() {
        let id = probe_id(7);
        assert_eq!(unprobe(&id), Some(7));
        assert_eq!(unprobe(&NumberOrString::Number(7)), None);
        assert_eq!(
            unprobe(&NumberOrString::String(Arc::from("7"))),
            None,
            "a server's own string ids are left alone"
        );
    }
}
