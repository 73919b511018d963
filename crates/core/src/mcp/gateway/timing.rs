//! Where an outside call's time goes, to tell what the gateway adds: the
//! whole time in the gateway, the upstream exchange, and the wait for an
//! approval (a person's time, not the gateway's). What is left is the
//! gateway's added latency: the view, the policy, the schema check, the pin
//! check, the screening and the result's conversion.

use std::sync::Mutex;
use std::time::{Duration, Instant, SystemTime};

use futures::future::BoxFuture;
use serde::Serialize;

use super::super::approver::{ApprovalDecision, ApprovalRequest, Approver};

/// One outside call's time.
#[derive(Debug, Clone, Copy)]
pub struct Timing {
    /// When the gateway took the request.
    pub started: SystemTime,
    /// From taking the request to having the answer.
    pub total: Duration,
    /// On the wire to the upstream (for `resources/read` and `prompts/get`,
    /// the hub's listing and request, which are exchanges with the upstream).
    pub upstream: Duration,
    /// Waiting for the approver.
    pub approval: Duration,
}

impl Timing {
    /// The gateway's added latency: the time in the gateway outside the
    /// upstream exchange and the approval.
    pub fn added(&self) -> Duration {
        self.total
            .saturating_sub(self.upstream)
            .saturating_sub(self.approval)
    }
}

/// As the audit record holds it: milliseconds.
impl Serialize for Timing {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct as _;
        let ms = |d: Duration| (d.as_secs_f64() * 1_000_000.0).round() / 1000.0;
        let mut t = s.serialize_struct("Timing", 4)?;
        t.serialize_field("total_ms", &ms(self.total))?;
        t.serialize_field("upstream_ms", &ms(self.upstream))?;
        t.serialize_field("approval_ms", &ms(self.approval))?;
        t.serialize_field("gateway_ms", &ms(self.added()))?;
        t.end()
    }
}

/// An approver that counts the time spent waiting for it.
pub(super) struct Timed<'a> {
    inner: &'a dyn Approver,
    spent: Mutex<Duration>,
}

impl<'a> Timed<'a> {
    pub(super) fn new(inner: &'a dyn Approver) -> Self {
        Self {
            inner,
            spent: Mutex::new(Duration::ZERO),
        }
    }

    pub(super) fn spent(&self) -> Duration {
        *self.spent.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl Approver for Timed<'_> {
    fn approve(&self, request: ApprovalRequest) -> BoxFuture<'_, ApprovalDecision> {
        Box::pin(async move {
            let clock = Instant::now();
            let decision = self.inner.approve(request).await;
            *self.spent.lock().unwrap_or_else(|e| e.into_inner()) += clock.elapsed();
            decision
        })
    }

    fn decider(&self) -> &'static str {
        self.inner.decider()
    }
}
