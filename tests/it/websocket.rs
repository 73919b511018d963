//! WebSocket, the third transport (`url = "ws://…"`): the real demo server
//! over `--ws`, our client on both protocol eras, the TypeScript SDK's
//! `WebSocketClientTransport` against our server (its wire, not ours), and
//! each way a socket goes wrong — a frame over `max_message_bytes`, a binary
//! frame, a frame that is not JSON, a server that dies mid-call or stops
//! answering pings, an HTTP server that refuses the upgrade — ending in the
//! harness's words, with nothing left hanging.

use std::io::{Read, Write};
use std::process::Command;
use std::sync::mpsc;
use std::time::Duration;

use mcp_harness::mcp::{AliasState, FlagApprover, McpEvent, RevokeCause, ToolErrorCode};
use serde_json::{Value, json};

use crate::common::hubs::{DEMO_POLICY, hub, lookup, wait_for, ws_demo};
use crate::common::interop::Interop;
use crate::common::{TestEnv, json as json_of};

/// `[servers.ALIAS]` at `url`, with the demo policy and `extra` settings;
/// calls may take two minutes, so a test that ends in `mcp_timeout` fails.
fn ws_server(alias: &str, url: &str, extra: &str) -> String {
    format!(
        "[servers.{alias}]\nurl = \"{url}\"\ncall_timeout_ms = 120000\n{extra}\
         [servers.{alias}.tools]\n{DEMO_POLICY}"
    )
}

fn state(hub: &mcp_harness::mcp::Hub, alias: &str) -> AliasState {
    hub.aliases()
        .into_iter()
        .find(|(a, _)| a.as_str() == alias)
        .expect("alias")
        .1
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn websocket_carries_both_eras_end_to_end() {
    let env = TestEnv::new();
    let (mut server, url) = ws_demo(&env, "beta", &[]);
    assert!(url.starts_with("ws://127.0.0.1:"), "{url}");
    let config = format!(
        "{}{}",
        ws_server("now", &url, ""),
        ws_server("then", &url, "protocol = \"2025-11-25\"\n"),
    );
    let (hub, _rx) = hub(&env, &config);
    for (alias, revision) in [("now", "2026-07-28"), ("then", "2025-11-25")] {
        let report = hub.connect(alias).await.unwrap();
        assert_eq!(
            report
                .outcome
                .as_ref()
                .map(Vec::len)
                .map_err(|e| e.to_string()),
            Ok(5),
            "{alias}"
        );
        let server = report.server.unwrap();
        assert_eq!(server.name, "demo-beta");
        assert_eq!(server.protocol_version, revision, "{alias}");
        let text = lookup(&hub, &format!("mcp__{alias}__lookup"))
            .await
            .unwrap();
        assert!(text.contains("no entry"), "{text}");
    }
    // Progress notifications and a remote error come through too.
    let outcome = hub
        .call(
            &hub.snapshot(),
            "mcp__now__fail",
            json!({}),
            &FlagApprover { approve: false },
        )
        .await;
    assert_eq!(
        outcome.result.unwrap_err().code,
        ToolErrorCode::McpRemoteError
    );
    assert!(matches!(state(&hub, "now"), AliasState::Ready { .. }));
    hub.disconnect("now").unwrap();
    hub.disconnect("then").unwrap();
    hub.shutdown().await;
    server.kill().unwrap();
    server.wait().unwrap();

    // `protocol = "auto"` against a server without server/discover: the
    // probe fails and the handshake follows on the same socket.
    let (mut legacy, url) = ws_demo(&env, "alpha", &["--protocol", "2025-11-25"]);
    let (hub, _rx) = crate::common::hubs::hub(&env, &ws_server("old", &url, ""));
    let report = hub.connect("old").await.unwrap();
    assert_eq!(report.server.unwrap().protocol_version, "2025-11-25");
    assert!(lookup(&hub, "mcp__old__lookup").await.is_ok());
    hub.shutdown().await;
    legacy.kill().unwrap();
    legacy.wait().unwrap();
    env.assert_no_leaks();
}

/// Calls `tool` on the current snapshot, approving, and returns its first text.
async fn text_of(hub: &mcp_harness::mcp::Hub, tool: &str, arguments: Value) -> String {
    let outcome = hub
        .call(
            &hub.snapshot(),
            tool,
            arguments,
            &FlagApprover { approve: true },
        )
        .await;
    let output = outcome.result.unwrap_or_else(|e| panic!("{tool}: {e:?}"));
    output.content[0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn websocket_carries_progress_tasks_elicitation_resources_prompts_and_list_changed() {
    let env = TestEnv::new();
    let (mut server, url) = ws_demo(&env, "alpha", &["--extras"]);
    let extras = "research = \"allow\"\nguarded_set = \"allow\"\n";
    let config = format!(
        "{}{extras}[servers.now.resources]\nread = \"allow\"\n{}{extras}",
        ws_server("now", &url, ""),
        ws_server("then", &url, "protocol = \"2025-11-25\"\n"),
    );
    let (builder, mut rx) = crate::common::hubs::hub_builder(&env, &config);
    let asking = builder
        .elicitor(std::sync::Arc::new(mcp_harness::mcp::DefaultsElicitor))
        .build();
    let hub = &asking;
    for alias in ["now", "then"] {
        hub.connect(alias).await.unwrap().outcome.unwrap();
        // Progress notifications, routed to their call.
        let text = text_of(
            hub,
            &format!("mcp__{alias}__slow"),
            json!({"seconds": 0.3, "steps": 3}),
        )
        .await;
        assert!(!text.is_empty(), "{alias}");
        wait_for(&mut rx, |e| matches!(e, McpEvent::Progress { .. })).await;
        // A task (create, poll, result).
        let text = text_of(
            hub,
            &format!("mcp__{alias}__research"),
            json!({"topic": "tides", "seconds": 0.3}),
        )
        .await;
        assert_eq!(
            text, "research on tides: three sources agree (demo-alpha)",
            "{alias}"
        );
        // The server asks the operator (elicitation, or input rounds on 2026-07-28).
        let text = text_of(
            hub,
            &format!("mcp__{alias}__guarded_set"),
            json!({"key": "kiwi", "value": "green"}),
        )
        .await;
        assert!(!text.contains("not stored"), "{alias}: {text}");
        assert!(text.contains("kiwi"), "{alias}: {text}");
    }
    // Resources and prompts.
    let listed = hub.list_resources("now").await.result.unwrap();
    assert!(
        listed
            .resources
            .iter()
            .any(|r| r.uri == "demo://demo-alpha/readme"),
        "{:?}",
        listed.resources
    );
    let read = hub
        .read_resource(
            "now",
            "demo://demo-alpha/readme",
            &FlagApprover { approve: false },
            &mcp_harness::mcp::CallIdentity::lead("ws-read-1"),
        )
        .await
        .result
        .unwrap();
    assert!(
        read.content[0]["resource"]["text"].is_string(),
        "{:?}",
        read.content
    );
    let prompts = hub.list_prompts("now").await.result.unwrap();
    assert!(prompts.iter().any(|p| p.name == "summarize"));
    let arguments = [("topic".to_string(), "apples".to_string())]
        .into_iter()
        .collect();
    let got = hub
        .get_prompt("now", "summarize", &arguments)
        .await
        .result
        .unwrap();
    assert!(got.messages[0].content.to_string().contains("apples"));
    hub.shutdown().await;
    server.kill().unwrap();
    server.wait().unwrap();

    // tools/list_changed reaches the harness, which lists again.
    let (mut server, url) = ws_demo(&env, "alpha", &["--fault", "mutate-tools=description"]);
    let (relisting, mut rx) =
        crate::common::hubs::hub(&env, &ws_server("sock", &url, "pin = \"off\"\n"));
    let hub = relisting;
    hub.connect("sock").await.unwrap().outcome.unwrap();
    lookup(&hub, "mcp__sock__lookup").await.unwrap();
    wait_for(&mut rx, |e| matches!(e, McpEvent::ToolListChanged { .. })).await;
    hub.shutdown().await;
    server.kill().unwrap();
    server.wait().unwrap();
    env.assert_no_leaks();
}

#[test]
fn check_names_each_servers_transport() {
    let env = TestEnv::new();
    let (mut ws, ws_url) = ws_demo(&env, "alpha", &[]);
    let (mut http, http_url) = crate::common::hubs::http_demo(&env, "beta", &[]);
    env.config(&format!(
        "{}[servers.local.tools]\n{DEMO_POLICY}{}{}",
        env.demo("local", "alpha", &[]),
        ws_server("web", &http_url, ""),
        ws_server("sock", &ws_url, ""),
    ));
    let out = env.run(&["check", "--json"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        crate::common::stderr(&out)
    );
    let report = json_of(&out);
    let transports: Vec<&Value> = (0..3)
        .map(|i| &report["servers"][i]["server"]["transport"])
        .collect();
    assert_eq!(transports, [&json!("stdio"), &json!("http"), &json!("ws")]);
    let human = crate::common::stdout(&env.run(&["check"]));
    assert!(
        human.contains("sock: ready — demo-alpha 0.1.0 (protocol 2026-07-28, over ws)"),
        "{human}"
    );
    for child in [&mut ws, &mut http] {
        child.kill().unwrap();
        child.wait().unwrap();
    }
    env.assert_no_leaks();
}

/// The call `lookup` on `alias` makes, its error, after the connection is lost
/// (and its tools revoked) on its own.
async fn lost_on_call(faults: &[&str], settings: &str) -> (String, TestEnv) {
    let env = TestEnv::new();
    let (mut server, url) = ws_demo(&env, "alpha", faults);
    let (hub, _rx) = hub(&env, &ws_server("sock", &url, settings));
    hub.connect("sock").await.unwrap().outcome.unwrap();
    let outcome = tokio::time::timeout(
        Duration::from_secs(90),
        hub.call(
            &hub.snapshot(),
            "mcp__sock__lookup",
            json!({"key": "apple"}),
            &FlagApprover { approve: false },
        ),
    )
    .await
    .expect("the call ends, long before its timeout");
    let error = outcome.result.unwrap_err();
    assert_eq!(error.code, ToolErrorCode::McpConnectionLost, "{error:?}");
    assert!(matches!(state(&hub, "sock"), AliasState::Lost { .. }));
    assert_eq!(hub.snapshot().tools().len(), 0, "its tools are revoked");
    hub.shutdown().await;
    let _ = server.kill();
    server.wait().unwrap();
    (error.message, env)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_frame_over_max_message_bytes_ends_the_connection_naming_the_limit() {
    let (message, env) = lost_on_call(
        &["--fault", "huge-result=3000000"],
        "max_message_bytes = 1048576\n",
    )
    .await;
    assert!(
        message.contains("larger than 1 MiB, its max_message_bytes"),
        "{message}"
    );
    env.assert_no_leaks();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_binary_frame_ends_the_connection_with_a_reason() {
    let (message, env) = lost_on_call(&["--fault", "ws-binary-on-call"], "").await;
    assert!(message.contains("binary WebSocket frame"), "{message}");
    env.assert_no_leaks();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_frame_that_is_not_json_ends_the_connection_with_a_reason() {
    let (message, env) = lost_on_call(&["--fault", "ws-not-json-on-call"], "").await;
    assert!(message.contains("text frame that is not JSON"), "{message}");
    env.assert_no_leaks();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_dies_mid_call_is_a_lost_connection() {
    let (message, env) = lost_on_call(&["--fault", "crash-on-call"], "").await;
    assert!(
        message.contains("closed the WebSocket") || message.contains("closed the transport"),
        "{message}"
    );
    env.assert_no_leaks();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_stops_answering_pings_is_lost_within_the_idle_timeout() {
    let env = TestEnv::new();
    let (mut server, url) = ws_demo(&env, "alpha", &[]);
    let (hub, mut rx) = hub(&env, &ws_server("sock", &url, "idle_timeout_ms = 1500\n"));
    hub.connect("sock").await.unwrap().outcome.unwrap();
    // Frozen, not dead: the kernel keeps the socket open, nothing answers.
    let pid = server.id().to_string();
    assert!(
        Command::new("kill")
            .args(["-STOP", &pid])
            .status()
            .unwrap()
            .success()
    );
    let event = wait_for(&mut rx, |e| matches!(e, McpEvent::Revoked { .. })).await;
    let McpEvent::Revoked { cause, tools, .. } = event else {
        unreachable!()
    };
    assert_eq!(tools.len(), 5);
    let RevokeCause::ConnectionLost { detail } = cause else {
        panic!("{cause:?}")
    };
    assert!(
        detail.contains("no message and no pong for 1500 ms (idle_timeout_ms)"),
        "{detail}"
    );
    assert!(matches!(state(&hub, "sock"), AliasState::Lost { .. }));
    hub.shutdown().await;
    let _ = Command::new("kill").args(["-CONT", &pid]).status();
    server.kill().unwrap();
    server.wait().unwrap();
    env.assert_no_leaks();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_idle_websocket_that_answers_pings_stays_connected() {
    let env = TestEnv::new();
    let (mut server, url) = ws_demo(&env, "alpha", &[]);
    let (hub, _rx) = hub(&env, &ws_server("sock", &url, "idle_timeout_ms = 400\n"));
    hub.connect("sock").await.unwrap().outcome.unwrap();
    // Many idle timeouts of silence but for the pings and their pongs.
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert!(matches!(state(&hub, "sock"), AliasState::Ready { .. }));
    assert!(lookup(&hub, "mcp__sock__lookup").await.is_ok());
    hub.shutdown().await;
    server.kill().unwrap();
    server.wait().unwrap();
    env.assert_no_leaks();
}

#[test]
fn a_websocket_server_that_never_answers_is_a_connect_timeout() {
    let env = TestEnv::new();
    let (mut server, url) = ws_demo(&env, "alpha", &["--fault", "hang-on-initialize"]);
    env.config(&ws_server(
        "sock",
        &url,
        "connect_timeout_ms = 1500\nprotocol = \"2025-11-25\"\n",
    ));
    let out = env.run(&["check", "--json"]);
    assert_eq!(out.status.code(), Some(1));
    let error = json_of(&out)["servers"][0]["error"].clone();
    assert_eq!(error["code"], "mcp_timeout", "{error}");
    assert!(
        error["hint"]
            .as_str()
            .unwrap()
            .contains("WebSocket endpoint"),
        "{error}"
    );
    server.kill().unwrap();
    server.wait().unwrap();
    env.assert_no_leaks();
}

/// A loopback HTTP server that answers one upgrade request with `status`,
/// and hands the request's head to the test.
fn refuse_upgrades_with(status: &str) -> (String, mpsc::Receiver<String>) {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("ws://{}/mcp", listener.local_addr().unwrap());
    let (tx, rx) = mpsc::channel();
    let status = status.to_string();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut head = Vec::new();
            let mut buf = [0u8; 4096];
            while !head.windows(4).any(|w| w == b"\r\n\r\n") {
                match stream.read(&mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => head.extend_from_slice(&buf[..n]),
                }
            }
            let _ = tx.send(String::from_utf8_lossy(&head).into_owned());
            let reply = format!(
                "HTTP/1.1 {status}\r\nContent-Type: text/plain\r\nContent-Length: 9\r\n\
                 Connection: close\r\n\r\nno thanks"
            );
            let _ = stream.write_all(reply.as_bytes());
        }
    });
    (url, rx)
}

#[test]
fn a_refused_upgrade_is_a_connect_error_in_the_harness_words() {
    let env = TestEnv::new();
    let (upgrade_required, heads) = refuse_upgrades_with("426 Upgrade Required");
    let (not_found, _) = refuse_upgrades_with("404 Not Found");
    let (mut demo, demo_url) = ws_demo(&env, "alpha", &[]);
    let wrong_path = demo_url.replace("/mcp", "/elsewhere");
    let closed = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        format!("ws://{}/mcp", listener.local_addr().unwrap())
    };
    // wss:// to a server that speaks no TLS: the TLS handshake is what fails.
    let not_tls = demo_url.replace("ws://", "wss://");
    env.config(&format!(
        "{}{}{}{}{}",
        ws_server(
            "upgrade",
            &upgrade_required,
            "headers = { Authorization = \"Bearer ${WS_TEST_TOKEN}\", X-Demo = \"yes\" }\n"
        ),
        ws_server("missing", &not_found, ""),
        ws_server("path", &wrong_path, ""),
        ws_server("gone", &closed, ""),
        ws_server("tls", &not_tls, ""),
    ));
    let out = env
        .command(&["check", "--json"])
        .env("WS_TEST_TOKEN", "s3cret-token-value")
        .env("MCP_HARNESS_LOG", "trace")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let report = json_of(&out);
    let error = |i: usize| report["servers"][i]["error"].clone();
    for i in 0..5 {
        assert_eq!(error(i)["code"], "initialize_failed", "{report}");
        assert!(
            error(i)["hint"]
                .as_str()
                .unwrap()
                .contains("WebSocket (subprotocol `mcp`)"),
            "{report}"
        );
    }
    let message = |i: usize| error(i)["message"].as_str().unwrap().to_string();
    assert!(
        message(0).contains("refused the WebSocket upgrade: HTTP 426"),
        "{}",
        message(0)
    );
    assert!(
        message(1).contains("refused the WebSocket upgrade: HTTP 404"),
        "{}",
        message(1)
    );
    assert!(
        message(2).contains("refused the WebSocket upgrade: HTTP 404"),
        "{}",
        message(2)
    );
    assert!(
        message(3).contains("could not reach the server"),
        "{}",
        message(3)
    );
    assert!(
        message(4).contains("the TLS handshake with 127.0.0.1:"),
        "{}",
        message(4)
    );
    // What the refusing server said is kept apart, for the operator.
    assert!(!message(0).contains("no thanks"));
    assert_eq!(report["servers"][0]["server_output"][0], "no thanks");
    // The upgrade carried the subprotocol and the headers, the secret expanded.
    let head = heads
        .recv_timeout(Duration::from_secs(30))
        .unwrap()
        .to_ascii_lowercase();
    assert!(head.starts_with("get /mcp http/1.1"), "{head}");
    assert!(head.contains("sec-websocket-protocol: mcp\r\n"), "{head}");
    assert!(head.contains("upgrade: websocket"), "{head}");
    assert!(
        head.contains("authorization: bearer s3cret-token-value"),
        "{head}"
    );
    assert!(head.contains("x-demo: yes"), "{head}");
    // …and the secret reaches no output, nor the log even at trace level.
    assert!(!String::from_utf8_lossy(&out.stdout).contains("s3cret"));
    assert!(!String::from_utf8_lossy(&out.stderr).contains("s3cret"));
    let logs = env.path("xdg-data");
    let files = walk(&logs);
    assert!(!files.is_empty(), "no log written under {}", logs.display());
    for file in files {
        let text = String::from_utf8_lossy(&std::fs::read(&file).unwrap()).into_owned();
        assert!(!text.contains("s3cret"), "{}", file.display());
    }
    demo.kill().unwrap();
    demo.wait().unwrap();
    env.assert_no_leaks();
}

/// Every file under `dir`.
fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            files.extend(walk(&path));
        } else {
            files.push(path);
        }
    }
    files
}

#[cfg_attr(
    mcph_no_interop,
    ignore = "npm or python3 is missing: the interop tests install the pinned servers with them (docs/src/testing.md)"
)]
#[test]
fn the_typescript_sdks_websocket_client_lists_and_calls_our_demo_server() {
    let interop = Interop::get();
    let env = TestEnv::new();
    let (mut server, url) = ws_demo(&env, "alpha", &[]);
    let driver =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/it/fixtures/ws_client.mjs");
    let sdk = interop
        .root
        .join("npm/node_modules/@modelcontextprotocol/sdk");
    let out = Command::new(interop.node())
        .arg(driver)
        .arg(sdk)
        .arg(&url)
        .arg("lookup")
        .arg(r#"{"key":"apple"}"#)
        .output()
        .unwrap();
    let line = String::from_utf8_lossy(&out.stdout);
    let answer: Value = serde_json::from_str(line.trim()).unwrap_or_else(|e| {
        panic!(
            "not JSON ({e}): {line} {}",
            String::from_utf8_lossy(&out.stderr)
        )
    });
    assert!(answer.get("error").is_none(), "{answer}");
    assert_eq!(answer["server"], "demo-alpha", "{answer}");
    assert_eq!(
        answer["tools"],
        json!(["lookup", "set", "reset", "fail", "slow"]),
        "{answer}"
    );
    assert_eq!(
        answer["result"]["content"][0]["text"], "apple = red (demo-alpha)",
        "{answer}"
    );
    server.kill().unwrap();
    server.wait().unwrap();
    env.assert_no_leaks();
}
