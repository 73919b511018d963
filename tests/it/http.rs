//! Streamable HTTP (SPEC rule 1) under the same contract as stdio: it works end
//! to end, and a server that dies — in the middle of a call or while idle — is
//! noticed and revoked as `mcp_connection_lost`, long before any call timeout.

use crate::common::TestEnv;
use crate::common::hubs::{DEMO_POLICY, http_demo, hub, lookup, wait_for};
use mcp_harness::mcp::{AliasState, FlagApprover, Hub, McpEvent, RevokeCause, ToolErrorCode};
use serde_json::json;
use tokio::sync::mpsc::UnboundedReceiver;

/// A config with one HTTP server `web` at `url`; calls may take two minutes, so
/// a test that ends in `mcp_timeout` would be a failure, not slowness.
fn web(url: &str) -> String {
    format!(
        "[servers.web]\nurl = \"{url}\"\ncall_timeout_ms = 120000\nheaders = {{ X-Demo = \"yes\" }}\n\
         [servers.web.tools]\n{DEMO_POLICY}"
    )
}

fn state(hub: &mcp_harness::mcp::Hub) -> AliasState {
    hub.aliases()
        .into_iter()
        .find(|(a, _)| a.as_str() == "web")
        .expect("alias web")
        .1
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn streamable_http_works_end_to_end() {
    let env = TestEnv::new();
    let (mut server, url) = http_demo(&env, "beta", &[]);
    let (hub, _rx) = hub(&env, &web(&url));
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
async fn an_http_server_that_dies_mid_call_is_a_lost_connection_not_a_timeout() {
    let env = TestEnv::new();
    let (mut server, url) = http_demo(&env, "alpha", &[]);
    let (hub, mut rx) = hub(&env, &web(&url));
    hub.connect("web").await.unwrap().outcome.unwrap();
    let snapshot = hub.snapshot();
    let call = hub.call(
        &snapshot,
        "mcp__web__slow",
        json!({"seconds": 60, "steps": 60}),
        &FlagApprover { approve: false },
    );
    let kill = async {
        // Once progress arrives the call is streaming; then the server dies.
        wait_for(&mut rx, |e| matches!(e, McpEvent::Progress { .. })).await;
        server.kill().unwrap();
        server.wait().unwrap();
    };
    let (outcome, ()) = tokio::join!(call, kill);
    let error = outcome.result.unwrap_err();
    assert_eq!(error.code, ToolErrorCode::McpConnectionLost, "{error:?}");
    assert!(matches!(state(&hub), AliasState::Lost { .. }));
    assert_eq!(hub.snapshot().tools().len(), 0);
    hub.shutdown().await;
    env.assert_no_leaks();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_watchdog_notices_an_idle_http_server_that_died() {
    let env = TestEnv::new();
    let (mut server, url) = http_demo(&env, "alpha", &[]);
    let (hub, mut rx) = hub(&env, &web(&url));
    hub.connect("web").await.unwrap().outcome.unwrap();
    server.kill().unwrap();
    server.wait().unwrap();
    // No call is made: the broken event stream is what tells.
    let event = wait_for(&mut rx, |e| matches!(e, McpEvent::Revoked { .. })).await;
    let McpEvent::Revoked { cause, tools, .. } = event else {
        unreachable!()
    };
    assert_eq!(tools.len(), 5);
    let RevokeCause::ConnectionLost { detail } = cause else {
        panic!("{cause:?}")
    };
    assert!(detail.contains("stopped answering"), "{detail}");
    assert!(matches!(state(&hub), AliasState::Lost { .. }));
    // A call now says what happened, locally, without touching the network.
    let error = lookup(&hub, "mcp__web__lookup").await.unwrap_err();
    assert_eq!(error, ToolErrorCode::McpUnknownTool);
    hub.shutdown().await;
    env.assert_no_leaks();
}

/// `conf`: `demo-server conformance` at 2026-07-28 over HTTP, which announces
/// no list changes: no `subscriptions/listen`, no GET stream, nothing open
/// whose end would tell. Liveness checks every `ping_ms`.
fn quiet_server(
    env: &TestEnv,
    ping_ms: u64,
) -> (std::process::Child, Hub, UnboundedReceiver<McpEvent>) {
    let (server, url) = http_demo(env, "conformance", &["--protocol", "2026-07-28"]);
    let tools = crate::serve_subscribe::conformance_tools();
    let (hub, rx) = hub(
        env,
        &format!(
            "[limits]\nliveness_ping_ms = {ping_ms}\n[servers.conf]\nurl = \"{url}\"\n[servers.conf.tools]\n{tools}"
        ),
    );
    (server, hub, rx)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_quiet_http_server_that_died_is_found_by_its_liveness_checks() {
    let env = TestEnv::new();
    let (mut server, hub, mut rx) = quiet_server(&env, 200);
    hub.connect("conf").await.unwrap().outcome.unwrap();
    server.kill().unwrap();
    server.wait().unwrap();
    let event = wait_for(&mut rx, |e| matches!(e, McpEvent::Revoked { .. })).await;
    let McpEvent::Revoked { cause, .. } = event else {
        unreachable!()
    };
    let RevokeCause::ConnectionLost { detail } = cause else {
        panic!("{cause:?}")
    };
    assert!(detail.contains("liveness checks"), "{detail}");
    hub.shutdown().await;
    env.assert_no_leaks();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_quiet_http_server_that_lives_passes_its_liveness_checks() {
    let env = TestEnv::new();
    let (mut server, hub, mut rx) = quiet_server(&env, 20);
    hub.connect("conf").await.unwrap().outcome.unwrap();
    // Dozens of checks (each a `server/discover`) while it idles.
    tokio::time::sleep(std::time::Duration::from_secs(2)).await;
    let snapshot = hub.snapshot();
    let outcome = hub
        .call(
            &snapshot,
            "mcp__conf__test_simple_text",
            json!({}),
            &FlagApprover { approve: false },
        )
        .await;
    assert!(outcome.result.is_ok(), "{:?}", outcome.result);
    while let Ok(event) = rx.try_recv() {
        assert!(!matches!(event, McpEvent::Revoked { .. }), "{event:?}");
    }
    hub.disconnect("conf").unwrap();
    hub.shutdown().await;
    server.kill().unwrap();
    server.wait().unwrap();
    env.assert_no_leaks();
}

/// A loopback HTTP server that answers every request with `status` (and the
/// challenge a 401 carries), for as long as the test runs.
fn answer_everything_with(status: u16) -> String {
    use std::io::{Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut buf = [0u8; 8192];
            let _ = stream.read(&mut buf);
            let reply = format!(
                "HTTP/1.1 {status} Nope\r\nWWW-Authenticate: Bearer realm=\"test\"\r\n\
                 Content-Length: 0\r\nConnection: close\r\n\r\n"
            );
            let _ = stream.write_all(reply.as_bytes());
        }
    });
    url
}

#[test]
fn connect_errors_over_http_say_what_happened_and_what_to_do() {
    let env = TestEnv::new();
    let closed = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        format!("http://{}/mcp", listener.local_addr().unwrap())
    };
    env.config(&format!(
        "[servers.locked]\nurl = \"{}\"\n[servers.locked.tools]\n\
         [servers.broken]\nurl = \"{}\"\n[servers.broken.tools]\n\
         [servers.gone]\nurl = \"{closed}\"\n[servers.gone.tools]\n",
        answer_everything_with(401),
        answer_everything_with(500),
    ));
    let out = env.run(&["check", "--json"]);
    assert_eq!(out.status.code(), Some(1));
    let report = crate::common::json(&out);
    let error = |i: usize| report["servers"][i]["error"].clone();
    assert_eq!(error(0)["code"], "auth_required", "{report}");
    assert!(error(0)["hint"].as_str().unwrap().contains("Authorization"));
    assert_eq!(error(1)["code"], "initialize_failed");
    assert!(error(1)["message"].as_str().unwrap().contains("HTTP 500"));
    assert_eq!(error(2)["code"], "initialize_failed");
    let gone = error(2)["message"].as_str().unwrap().to_string();
    assert!(gone.contains("could not reach the server"), "{gone}");
    for i in 0..3 {
        let text = error(i).to_string();
        assert!(!text.contains("rmcp::"), "no type names: {text}");
        assert!(error(i)["hint"].as_str().unwrap().contains("url") || i == 0);
    }
}
