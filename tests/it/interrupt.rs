//! An interrupt that races a tool call's own end: the operator presses Ctrl-C
//! while a `confirm` prompt is open, so the prompt is denied in the same moment
//! the turn is cancelled. The turn must end there — not send one more request
//! to the model with the denial in it.

use crate::provider_openai::wire;

use std::sync::Arc;

use crate::common::TestEnv;
use crate::common::lead_session::session_with;
use crate::common::model_stub::ModelStub;
use futures::future::BoxFuture;
use mcp_harness::agent::events::{AgentEvent, TurnEnd};
use mcp_harness::mcp::{ApprovalDecision, ApprovalRequest, Approver};
use mcp_harness::session::SessionEvent;
use serde_json::json;
use tokio_util::sync::CancellationToken;
use wire::{calls, text};

/// The operator's Ctrl-C while the prompt is open: cancel the turn, and the
/// prompt answers "denied" at once (as the TUI does on an interrupt).
struct InterruptOnAsk(CancellationToken);

impl Approver for InterruptOnAsk {
    fn approve(&self, _: ApprovalRequest) -> BoxFuture<'_, ApprovalDecision> {
        self.0.cancel();
        Box::pin(std::future::ready(ApprovalDecision::Denied {
            reason: "the turn was interrupted".into(),
        }))
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_interrupt_during_an_approval_ends_the_turn_without_another_request() {
    let env = TestEnv::new();
    // Many rounds: the race this guards against went either way.
    for round in 0..20 {
        let stub = ModelStub::start(vec![
            calls(&[("connect_mcp", json!({"alias": "demo_alpha"}))]),
            calls(&[(
                "mcp__demo_alpha__set",
                json!({"key": "apple", "value": "blue"}),
            )]),
            text("this request must never be made"),
        ])
        .await;
        let cancel = CancellationToken::new();
        let mut s = session_with(
            &env,
            &stub,
            &[],
            "",
            Arc::new(InterruptOnAsk(cancel.clone())),
        );
        let end = s.lead.send("set it", &cancel).await;
        assert_eq!(end, TurnEnd::Interrupted, "round {round}");
        assert_eq!(
            stub.requests().len(),
            2,
            "round {round}: one request too many"
        );
        // It ended at the call, not later while a new model request was starting.
        let notices: Vec<String> = std::iter::from_fn(|| s.events.try_recv().ok())
            .filter_map(|e| match e {
                SessionEvent::Agent(AgentEvent::Notice { text, .. }) => Some(text),
                _ => None,
            })
            .collect();
        assert!(
            notices
                .iter()
                .any(|n| n.contains("in-flight tool calls were cancelled")),
            "round {round}: {notices:?}"
        );
        s.hub.shutdown().await;
    }
    env.assert_no_leaks();
}
