//! SPEC rule 8 seen from inside a running harness: each of the three failures
//! makes its own transition, with the hub still alive to observe it — the error
//! code, the revocation event and its cause, the alias state, the snapshot, and
//! (for the two that drop the connection) the server's processes gone.

use crate::common::TestEnv;
use crate::common::hubs::{DEMO_POLICY, hub, lookup, wait_for};
use mcp_harness::mcp::{AliasState, FlagApprover, Hub, McpEvent, RevokeCause, ToolErrorCode};
use serde_json::json;

/// One demo server `s` with `faults`; calls time out after 1.5 s.
fn one_server(env: &TestEnv, faults: &[&str]) -> String {
    format!(
        "{}call_timeout_ms = 1500\n[servers.s.tools]\n{DEMO_POLICY}",
        env.demo("s", "alpha", faults)
    )
}

fn state(hub: &Hub) -> AliasState {
    hub.aliases().into_iter().next().expect("one alias").1
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_timeout_cancels_drops_the_connection_kills_the_child_and_revokes() {
    let env = TestEnv::new();
    let (hub, mut rx) = hub(&env, &one_server(&env, &["--fault", "hang-on-call"]));
    hub.connect("s").await.unwrap().outcome.unwrap();
    let conn = std::sync::Arc::clone(hub.snapshot().connections().next().unwrap().connection());
    assert_eq!(
        lookup(&hub, "mcp__s__lookup").await,
        Err(ToolErrorCode::McpTimeout)
    );
    let event = wait_for(&mut rx, |e| matches!(e, McpEvent::Revoked { .. })).await;
    let McpEvent::Revoked { cause, tools, .. } = event else {
        unreachable!()
    };
    assert_eq!(
        cause,
        RevokeCause::Timeout {
            tool: "mcp__s__lookup".into()
        }
    );
    assert_eq!(tools.len(), 5, "all of its tools at once");
    assert!(
        matches!(state(&hub), AliasState::Lost { .. }),
        "{:?}",
        state(&hub)
    );
    assert_eq!(hub.snapshot().tools().len(), 0);
    // The hub is still running, and the child (with its shim) is gone.
    tokio::time::timeout(std::time::Duration::from_secs(30), conn.finished())
        .await
        .expect("the server was reaped");
    env.assert_no_leaks();
    hub.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crash_mid_call_is_a_lost_connection_revoked_at_once() {
    let env = TestEnv::new();
    let (hub, mut rx) = hub(&env, &one_server(&env, &["--fault", "crash-on-call"]));
    hub.connect("s").await.unwrap().outcome.unwrap();
    assert_eq!(
        lookup(&hub, "mcp__s__lookup").await,
        Err(ToolErrorCode::McpConnectionLost)
    );
    let event = wait_for(&mut rx, |e| matches!(e, McpEvent::Revoked { .. })).await;
    let McpEvent::Revoked { cause, .. } = event else {
        unreachable!()
    };
    assert!(
        matches!(cause, RevokeCause::ConnectionLost { .. }),
        "{cause:?}"
    );
    assert!(matches!(state(&hub), AliasState::Lost { .. }));
    assert_eq!(hub.snapshot().tools().len(), 0);
    env.assert_no_leaks();
    hub.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_remote_error_keeps_the_connection() {
    let env = TestEnv::new();
    let (hub, mut rx) = hub(&env, &one_server(&env, &[]));
    hub.connect("s").await.unwrap().outcome.unwrap();
    let before = hub.snapshot().version();
    let outcome = hub
        .call(
            &hub.snapshot(),
            "mcp__s__fail",
            json!({}),
            &FlagApprover { approve: false },
        )
        .await;
    let error = outcome.result.unwrap_err();
    assert_eq!(error.code, ToolErrorCode::McpRemoteError);
    assert!(
        outcome.server_output.is_some(),
        "the operator sees its text"
    );
    assert!(matches!(state(&hub), AliasState::Ready { .. }));
    assert_eq!(hub.snapshot().version(), before, "nothing was revoked");
    assert!(lookup(&hub, "mcp__s__lookup").await.is_ok());
    assert!(
        !std::iter::from_fn(|| rx.try_recv().ok()).any(|e| matches!(e, McpEvent::Revoked { .. })),
        "no revocation"
    );
    hub.shutdown().await;
    env.assert_no_leaks();
}
