//! The connection manager with real demo-server processes: atomic revocation by
//! identity (SPEC rule 7), snapshots (rule 6), the watchdog (rule 8), cleanup
//! (rule 12). Streamable HTTP is `http.rs`.

use std::time::Duration;

use crate::common::TestEnv;
use crate::common::hubs::{DEMO_POLICY as POLICY, hub, lookup, wait_for};
use mcp_harness::mcp::{
    AliasState, ApprovalDecision, ApprovalRequest, Approver, FlagApprover, McpEvent, RevokeCause,
    ToolErrorCode,
};
use serde_json::json;

fn two_servers(env: &TestEnv, alpha_extra: &[&str]) -> String {
    format!(
        "{}[servers.demo_alpha.tools]\n{POLICY}{}[servers.demo_beta.tools]\n{POLICY}",
        env.demo("demo_alpha", "alpha", alpha_extra),
        env.demo("demo_beta", "beta", &[])
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn disconnecting_alpha_revokes_all_of_alpha_at_once_and_nothing_of_beta() {
    let env = TestEnv::new();
    let (hub, mut rx) = hub(&env, &two_servers(&env, &[]));
    hub.connect("demo_alpha").await.unwrap().outcome.unwrap();
    hub.connect("demo_beta").await.unwrap().outcome.unwrap();
    let before = hub.snapshot();
    assert_eq!(before.tools().len(), 10);
    hub.disconnect("demo_alpha").unwrap();
    let after = hub.snapshot();
    assert!(after.version() > before.version());
    assert!(
        after.tools().all(|t| t.alias.as_str() == "demo_beta"),
        "{after:?}"
    );
    assert_eq!(after.tools().len(), 5);
    let revoked = wait_for(&mut rx, |e| matches!(e, McpEvent::Revoked { .. })).await;
    let McpEvent::Revoked { tools, cause, .. } = revoked else {
        unreachable!()
    };
    assert_eq!(
        tools.len(),
        5,
        "one event revokes every alpha tool: {tools:?}"
    );
    assert_eq!(cause, RevokeCause::Disconnected);
    assert!(lookup(&hub, "mcp__demo_beta__lookup").await.is_ok());
    // The old snapshot is immutable: it still lists alpha, but alpha is gone.
    assert!(before.resolve("mcp__demo_alpha__lookup").is_some());
    let stale = hub
        .call(
            &before,
            "mcp__demo_alpha__lookup",
            json!({"key":"apple"}),
            &FlagApprover { approve: false },
        )
        .await;
    assert_eq!(
        stale.result.unwrap_err().code,
        ToolErrorCode::McpNotConnected
    );
    // A `confirm` tool of the gone connection: the operator is not even asked.
    let asked = AskCounter::default();
    let stale = hub
        .call(
            &before,
            "mcp__demo_alpha__set",
            json!({"key":"apple","value":"blue"}),
            &asked,
        )
        .await;
    assert_eq!(
        stale.result.unwrap_err().code,
        ToolErrorCode::McpNotConnected
    );
    assert_eq!(asked.0.load(std::sync::atomic::Ordering::SeqCst), 0);
    hub.shutdown().await;
    env.assert_no_leaks();
}

/// Approves everything and counts how often it was asked.
#[derive(Default)]
struct AskCounter(std::sync::atomic::AtomicUsize);

impl Approver for AskCounter {
    fn approve(&self, _: ApprovalRequest) -> futures::future::BoxFuture<'_, ApprovalDecision> {
        self.0.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        Box::pin(std::future::ready(ApprovalDecision::Approved))
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_late_end_of_the_old_connection_after_reconnect_keeps_the_new_tools() {
    let env = TestEnv::new();
    // A server that ignores EOF and SIGTERM: its old connection takes two close
    // grace periods to end, well after the alias has connected again.
    let text = format!(
        "[limits]\nclose_grace_ms = 1000\n{}",
        two_servers(&env, &crate::common::STUBBORN)
    );
    let (hub, _rx) = hub(&env, &text);
    hub.connect("demo_alpha").await.unwrap().outcome.unwrap();
    let old = hub.snapshot();
    let old_connection = std::sync::Arc::clone(
        old.connection_for(&mcp_harness::mcp::ServerAlias::new("demo_alpha"))
            .unwrap()
            .connection(),
    );
    hub.disconnect("demo_alpha").unwrap();
    hub.connect("demo_alpha").await.unwrap().outcome.unwrap();
    let new_id = hub
        .snapshot()
        .resolve("mcp__demo_alpha__lookup")
        .unwrap()
        .connection_id();
    assert_ne!(old_connection.id(), new_id);
    assert!(
        !old_connection.is_finished(),
        "the old server is still closing"
    );
    // The old connection's end arrives late (its watchdog, the SIGKILL, the
    // shim's sweep): nothing of the new connection is touched.
    tokio::time::timeout(Duration::from_secs(30), old_connection.finished())
        .await
        .expect("the old server was reaped");
    let now = hub.snapshot();
    assert_eq!(
        now.resolve("mcp__demo_alpha__lookup")
            .map(|t| t.connection_id()),
        Some(new_id)
    );
    assert!(matches!(
        hub.aliases()[0].1,
        AliasState::Ready { connection, .. } if connection == new_id
    ));
    // Calling through the old snapshot does not reach the new connection.
    let stale = hub
        .call(
            &old,
            "mcp__demo_alpha__lookup",
            json!({"key":"apple"}),
            &FlagApprover { approve: false },
        )
        .await;
    assert_eq!(
        stale.result.unwrap_err().code,
        ToolErrorCode::McpNotConnected
    );
    assert!(lookup(&hub, "mcp__demo_alpha__lookup").await.is_ok());
    hub.shutdown().await;
    env.assert_no_leaks();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_watchdog_revokes_an_idle_connection_whose_server_died() {
    let env = TestEnv::new();
    let (hub, mut rx) = hub(&env, &two_servers(&env, &["--fault", "exit-after-ms=1500"]));
    hub.connect("demo_alpha").await.unwrap().outcome.unwrap();
    hub.connect("demo_beta").await.unwrap().outcome.unwrap();
    // No call is made: the watchdog notices on its own.
    let event = wait_for(&mut rx, |e| matches!(e, McpEvent::Revoked { .. })).await;
    let McpEvent::Revoked { alias, cause, .. } = event else {
        unreachable!()
    };
    assert_eq!(alias.as_str(), "demo_alpha");
    assert_eq!(
        cause,
        RevokeCause::ConnectionLost {
            detail: "the server process exited with status 7".into()
        }
    );
    let state = hub
        .aliases()
        .into_iter()
        .find(|(a, _)| a.as_str() == "demo_alpha")
        .unwrap()
        .1;
    assert!(matches!(state, AliasState::Lost { .. }), "{state:?}");
    assert!(
        hub.snapshot()
            .tools()
            .all(|t| t.alias.as_str() == "demo_beta")
    );
    assert!(lookup(&hub, "mcp__demo_beta__lookup").await.is_ok());
    hub.shutdown().await;
    env.assert_no_leaks();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn killing_the_server_process_is_noticed_and_revoked() {
    let env = TestEnv::new();
    let (hub, mut rx) = hub(&env, &two_servers(&env, &[]));
    hub.connect("demo_alpha").await.unwrap().outcome.unwrap();
    hub.kill_process("demo_alpha").unwrap();
    let event = wait_for(&mut rx, |e| matches!(e, McpEvent::Revoked { .. })).await;
    let McpEvent::Revoked { cause, .. } = event else {
        unreachable!()
    };
    let RevokeCause::ConnectionLost { detail } = cause else {
        panic!("{cause:?}")
    };
    assert!(detail.contains("signal 9"), "{detail}");
    assert_eq!(hub.snapshot().tools().len(), 0);
    // Reconnecting works after a loss.
    hub.connect("demo_alpha").await.unwrap().outcome.unwrap();
    assert!(lookup(&hub, "mcp__demo_alpha__lookup").await.is_ok());
    hub.shutdown().await;
    env.assert_no_leaks();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn aliases_only_and_unknown_aliases_name_the_known_ones() {
    let env = TestEnv::new();
    let (hub, _rx) = hub(&env, &two_servers(&env, &[]));
    let err = hub.connect("/bin/sh -c evil").await.unwrap_err();
    assert_eq!(
        err.to_string(),
        "unknown server alias `/bin/sh -c evil`; known aliases: demo_alpha, demo_beta"
    );
    hub.connect("demo_alpha").await.unwrap().outcome.unwrap();
    assert_eq!(
        hub.connect("demo_alpha").await.unwrap_err().to_string(),
        "`demo_alpha` is already connected"
    );
    hub.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn notifications_become_events() {
    let env = TestEnv::new();
    let (hub, mut rx) = hub(
        &env,
        &two_servers(&env, &["--fault", "list-changed-storm=3"]),
    );
    hub.connect("demo_alpha").await.unwrap().outcome.unwrap();
    wait_for(&mut rx, |e| matches!(e, McpEvent::ToolListChanged { .. })).await;
    let args = json!({"seconds": 0.2, "steps": 2});
    let outcome = hub
        .call(
            &hub.snapshot(),
            "mcp__demo_alpha__slow",
            args,
            &FlagApprover { approve: false },
        )
        .await;
    assert!(outcome.result.is_ok(), "{:?}", outcome.result);
    wait_for(&mut rx, |e| matches!(e, McpEvent::Progress { .. })).await;
    hub.shutdown().await;
    env.assert_no_leaks();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_reaps_stubborn_servers_and_their_grandchildren() {
    let env = TestEnv::new();
    let text = format!(
        "[limits]\nclose_grace_ms = 300\n{}",
        two_servers(&env, &["--fault", "ignore-term", "--fault", "grandchild"])
    );
    let (hub, _rx) = hub(&env, &text);
    hub.connect("demo_alpha").await.unwrap().outcome.unwrap();
    // The server and its grandchild are both up.
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while env.tagged_processes().len() < 2 {
        assert!(
            std::time::Instant::now() < deadline,
            "grandchild never started"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    hub.shutdown().await;
    env.assert_no_leaks();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_disconnected_servers_tools_are_freed() {
    let env = TestEnv::new();
    let (hub, _rx) = hub(&env, &two_servers(&env, &[]));
    hub.connect("demo_alpha").await.unwrap().outcome.unwrap();
    let tool =
        std::sync::Arc::downgrade(hub.snapshot().resolve("mcp__demo_alpha__lookup").unwrap());
    hub.disconnect("demo_alpha").unwrap();
    // Nothing in the hub holds on to a revoked tool (its schema, its validator).
    assert!(
        tool.upgrade().is_none(),
        "the hub still holds alpha's tools"
    );
    hub.shutdown().await;
    env.assert_no_leaks();
}
