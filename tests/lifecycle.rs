//! The connection manager with real demo-server processes: atomic revocation by
//! identity (SPEC rule 7), snapshots (rule 6), the watchdog (rule 8), Streamable
//! HTTP (rule 1) and cleanup (rule 12).

mod common;

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::Duration;

use common::{BIN, TestEnv};
use mcp_harness::config::{self, ConfigSource};
use mcp_harness::mcp::{
    AliasState, EventSink, FlagApprover, Hub, McpEvent, RevokeCause, ToolErrorCode, Vars,
};
use serde_json::json;
use tokio::sync::mpsc::UnboundedReceiver;

const POLICY: &str = "lookup = \"allow\"\nset = \"confirm\"\nreset = \"confirm\"\nfail = \"allow\"\nslow = \"allow\"\n";

fn hub(env: &TestEnv, text: &str) -> (Hub, UnboundedReceiver<McpEvent>) {
    let config = config::parse(&env.fill(text), ConfigSource::Embedded).expect("config");
    let (events, rx) = EventSink::new();
    let hub = Hub::new(
        config.servers,
        config.limits,
        Vars::new(PathBuf::from(BIN)),
        Vec::new(),
        events,
    );
    (hub, rx)
}

fn two_servers(env: &TestEnv, alpha_extra: &[&str]) -> String {
    format!(
        "{}[servers.demo_alpha.tools]\n{POLICY}{}[servers.demo_beta.tools]\n{POLICY}",
        env.demo("demo_alpha", "alpha", alpha_extra),
        env.demo("demo_beta", "beta", &[])
    )
}

/// Waits for the first event matching `pred` (generous bound).
async fn wait_for(
    rx: &mut UnboundedReceiver<McpEvent>,
    pred: impl Fn(&McpEvent) -> bool,
) -> McpEvent {
    tokio::time::timeout(Duration::from_secs(30), async {
        loop {
            let event = rx.recv().await.expect("event channel open");
            if pred(&event) {
                return event;
            }
        }
    })
    .await
    .expect("event did not arrive")
}

async fn lookup(hub: &Hub, tool: &str) -> Result<String, ToolErrorCode> {
    let outcome = hub
        .call(
            &hub.snapshot(),
            tool,
            json!({"key": "x"}),
            &FlagApprover { approve: false },
        )
        .await;
    outcome
        .result
        .map(|o| {
            o.content[0]["text"]
                .as_str()
                .unwrap_or_default()
                .to_string()
        })
        .map_err(|e| e.code)
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
    hub.shutdown().await;
    env.assert_no_leaks();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stale_revoke_after_reconnect_keeps_the_new_tools() {
    let env = TestEnv::new();
    let (hub, _rx) = hub(&env, &two_servers(&env, &[]));
    hub.connect("demo_alpha").await.unwrap().outcome.unwrap();
    let old = hub.snapshot();
    let old_id = old
        .resolve("mcp__demo_alpha__lookup")
        .unwrap()
        .connection
        .id();
    hub.disconnect("demo_alpha").unwrap();
    hub.connect("demo_alpha").await.unwrap().outcome.unwrap();
    let new_id = hub
        .snapshot()
        .resolve("mcp__demo_alpha__lookup")
        .unwrap()
        .connection
        .id();
    assert_ne!(old_id, new_id);
    // A late revoke of the old connection (as a slow watchdog would send).
    assert_eq!(
        hub.registry().revoke(
            old_id,
            RevokeCause::ConnectionLost {
                detail: "late".into()
            }
        ),
        None
    );
    assert!(hub.snapshot().resolve("mcp__demo_alpha__lookup").is_some());
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
async fn streamable_http_works_end_to_end() {
    let env = TestEnv::new();
    let mut server = Command::new(BIN)
        .args([
            "demo-server",
            "beta",
            "--http",
            "127.0.0.1:0",
            "--tag",
            &env.tag,
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(server.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let url = line
        .trim()
        .strip_prefix("listening on ")
        .expect("listening line")
        .to_string();
    let text = format!(
        "[servers.web]\nurl = \"{url}\"\nheaders = {{ X-Demo = \"yes\" }}\n[servers.web.tools]\n{POLICY}"
    );
    let (hub, _rx) = hub(&env, &text);
    let report = hub.connect("web").await.unwrap();
    assert_eq!(
        report
            .outcome
            .as_ref()
            .map(|t| t.len())
            .map_err(|e| e.to_string()),
        Ok(5)
    );
    assert_eq!(report.server.unwrap().name, "demo-beta");
    let text = lookup(&hub, "mcp__web__lookup").await.unwrap();
    assert!(text.contains("no entry"), "{text}");
    hub.disconnect("web").unwrap();
    hub.shutdown().await;
    server.kill().unwrap();
    server.wait().unwrap();
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
