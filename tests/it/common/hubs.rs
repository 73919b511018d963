//! A `Hub` over a test config, its event stream, and demo servers over HTTP
//! and WebSocket:
//! for tests that watch the MCP layer from inside a running harness.

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use mcp_harness::config::{self, ConfigSource};
use mcp_harness::mcp::{EventSink, FlagApprover, Hub, HubBuilder, McpEvent, ToolErrorCode, Vars};
use serde_json::json;
use tokio::sync::mpsc::UnboundedReceiver;

use super::{BIN, TestEnv};

/// The policy block of both demo servers.
pub const DEMO_POLICY: &str = "lookup = \"allow\"\nset = \"confirm\"\nreset = \"confirm\"\nfail = \"allow\"\nslow = \"allow\"\n";

/// A hub over `text` (placeholders filled by `env`) and its events.
pub fn hub(env: &TestEnv, text: &str) -> (Hub, UnboundedReceiver<McpEvent>) {
    let (hub, rx) = hub_builder(env, text);
    (hub.build(), rx)
}

/// [`hub`], still to be built, for a test that gives it more.
pub fn hub_builder(env: &TestEnv, text: &str) -> (HubBuilder, UnboundedReceiver<McpEvent>) {
    let config = config::parse(&env.fill(text), ConfigSource::Embedded).expect("config");
    let (events, rx) = EventSink::new();
    let hub = Hub::builder(
        config.servers,
        config.limits,
        Vars::new(PathBuf::from(BIN)),
        events,
    );
    (hub, rx)
}

/// Waits for the first event matching `pred` (generous bound).
pub async fn wait_for(
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

/// Calls `tool` with `{"key":"x"}` through the current snapshot.
pub async fn lookup(hub: &Hub, tool: &str) -> Result<String, ToolErrorCode> {
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

/// `demo-server NAME --http 127.0.0.1:0` (tagged), and the URL it listens on.
pub fn http_demo(env: &TestEnv, server: &str, extra: &[&str]) -> (Child, String) {
    listening_demo(env, server, "--http", extra)
}

/// `demo-server NAME --ws 127.0.0.1:0` (tagged), and the `ws://` URL it listens on.
pub fn ws_demo(env: &TestEnv, server: &str, extra: &[&str]) -> (Child, String) {
    listening_demo(env, server, "--ws", extra)
}

fn listening_demo(env: &TestEnv, server: &str, flag: &str, extra: &[&str]) -> (Child, String) {
    let mut child = Command::new(BIN)
        .args(["demo-server", server, flag, "127.0.0.1:0", "--tag"])
        .arg(&env.tag)
        .args(extra)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start the demo server");
    let mut line = String::new();
    BufReader::new(child.stdout.take().expect("stdout"))
        .read_line(&mut line)
        .expect("read the listening line");
    let url = line
        .trim()
        .strip_prefix("listening on ")
        .expect("listening line")
        .to_string();
    (child, url)
}
