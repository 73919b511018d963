//! Tasks (issue 11, deliverable 5): the demo's `research` tool
//! (`taskSupport: "required"`) runs as the 2025-11-25 experimental task on a
//! handshake connection and as the `io.modelcontextprotocol/tasks` extension on
//! a 2026-07-28 one; `call --json` prints an ordinary result. A task that never
//! ends is cancelled at `task_timeout_ms`, one whose status goes backwards is a
//! protocol error, a `pollInterval` of 0 or of a day is held to the harness's
//! bounds, and Ctrl-C or the connection's revocation cancels the task on the
//! server. The connection's other tools keep working throughout.

use std::path::PathBuf;
use std::process::Stdio;
use std::time::{Duration, Instant};

use mcp_harness::config::{self, ConfigSource};
use mcp_harness::mcp::{EventSink, FlagApprover, Hub, McpEvent, ToolErrorCode, Vars};
use serde_json::{Value, json as j};
use tokio::sync::mpsc::UnboundedReceiver;

use crate::common::hubs::wait_for;
use crate::common::{BIN, TestEnv, all_records, json, stderr};

const POLICY: &str = "[servers.s.tools]\nlookup = \"allow\"\nset = \"allow\"\nreset = \"allow\"\nfail = \"allow\"\nslow = \"allow\"\nresearch = \"allow\"\nguarded_set = \"allow\"\n";

/// `[servers.s]`: demo alpha with its extras, speaking `mode`, recording;
/// `server` is more of its block (e.g. `task_timeout_ms`).
fn config(env: &TestEnv, mode: &str, faults: &[&str], server: &str) -> String {
    let record = env.path("record.jsonl");
    let mut args = vec![
        "--protocol",
        mode,
        "--extras",
        "--record",
        record.to_str().unwrap(),
    ];
    args.extend_from_slice(faults);
    let text = format!("{}{server}{POLICY}", env.demo("s", "alpha", &args));
    env.config(&text);
    env.fill(&text)
}

/// The recorded events of one kind (`call`, `task_get`, `task_cancel`).
fn recorded(env: &TestEnv, event: &str) -> Vec<Value> {
    all_records(&env.path("record.jsonl"))
        .into_iter()
        .filter(|r| r["event"] == event)
        .collect()
}

/// Waits (generously) until the server recorded `event`; a cancel sent when
/// the call's guard drops is on its way as the call returns.
fn eventually(env: &TestEnv, event: &str) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while recorded(env, event).is_empty() {
        assert!(Instant::now() < deadline, "no {event} reached the server");
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn research(env: &TestEnv, seconds: f64) -> (Value, Duration) {
    let started = Instant::now();
    let out = env.run(&[
        "call",
        "s",
        "research",
        "--args",
        &j!({"topic": "tides", "seconds": seconds}).to_string(),
        "--json",
    ]);
    assert!(!stderr(&out).contains("panicked"), "{}", stderr(&out));
    (json(&out), started.elapsed())
}

fn hub(text: &str) -> (Hub, UnboundedReceiver<McpEvent>) {
    let config = config::parse(text, ConfigSource::Embedded).unwrap();
    let (events, rx) = EventSink::new();
    let hub = Hub::builder(
        config.servers,
        config.limits,
        Vars::new(PathBuf::from(BIN)),
        events,
    )
    .build();
    (hub, rx)
}

async fn call(hub: &Hub, tool: &str, arguments: Value) -> Result<String, (ToolErrorCode, String)> {
    let outcome = hub
        .call(
            &hub.snapshot(),
            &format!("mcp__s__{tool}"),
            arguments,
            &FlagApprover { approve: true },
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
        .map_err(|e| (e.code, e.message))
}

#[test]
fn a_task_tool_gives_an_ordinary_result_on_both_eras() {
    for mode in ["2026-07-28", "2025-11-25"] {
        let env = TestEnv::new();
        config(&env, mode, &[], "");
        let (line, _) = research(&env, 0.4);
        assert_eq!(line["ok"], true, "{mode}: {line}");
        assert_eq!(
            line["content"][0]["text"],
            "research on tides: three sources agree (demo-alpha)"
        );
        assert_eq!(recorded(&env, "call").len(), 1, "{mode}");
        assert!(!recorded(&env, "task_get").is_empty(), "{mode}: polled");
        env.assert_no_leaks();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_that_never_ends_is_cancelled_at_task_timeout_ms_and_the_connection_stays() {
    for mode in ["2026-07-28", "2025-11-25"] {
        let env = TestEnv::new();
        let text = config(
            &env,
            mode,
            &["--fault", "task-never-ends"],
            "task_timeout_ms = 1500\n",
        );
        let (hub, mut events) = hub(&text);
        hub.connect("s").await.unwrap().outcome.unwrap();
        let started = Instant::now();
        let (code, message) = call(&hub, "research", j!({"topic": "t", "seconds": 0}))
            .await
            .unwrap_err();
        assert_eq!(code, ToolErrorCode::McpTaskTimeout, "{mode}: {message}");
        assert!(message.contains("1500 ms"), "{message}");
        assert!(started.elapsed() < Duration::from_secs(10));
        assert_eq!(recorded(&env, "task_cancel").len(), 1, "{mode}");
        // The task's life reached the event stream (Health, the conversation).
        wait_for(&mut events, |e| matches!(e, McpEvent::Task { .. })).await;
        let looked = call(&hub, "lookup", j!({"key": "apple"})).await.unwrap();
        assert!(looked.contains("red"), "{mode}: {looked}");
        hub.shutdown().await;
        env.assert_no_leaks();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_status_that_goes_backwards_is_a_protocol_error() {
    for mode in ["2026-07-28", "2025-11-25"] {
        let env = TestEnv::new();
        let text = config(&env, mode, &["--fault", "task-goes-back"], "");
        let (hub, _events) = hub(&text);
        hub.connect("s").await.unwrap().outcome.unwrap();
        let (code, message) = call(&hub, "research", j!({"topic": "t", "seconds": 2}))
            .await
            .unwrap_err();
        assert_eq!(code, ToolErrorCode::McpRemoteError, "{mode}: {message}");
        assert!(
            message.contains("went backwards, from completed to working"),
            "{mode}: {message}"
        );
        // The task that is working again is cancelled.
        eventually(&env, "task_cancel");
        assert_eq!(recorded(&env, "task_cancel").len(), 1, "{mode}");
        assert!(call(&hub, "lookup", j!({"key": "apple"})).await.is_ok());
        hub.shutdown().await;
        env.assert_no_leaks();
    }
}

#[test]
fn a_poll_interval_of_zero_or_a_day_is_held_to_the_bounds() {
    // 0 ms: polled no faster than every 100 ms (1 s of work: ~10 polls, not thousands).
    let env = TestEnv::new();
    config(&env, "2026-07-28", &["--fault", "task-poll-ms=0"], "");
    let (line, _) = research(&env, 1.0);
    assert_eq!(line["ok"], true, "{line}");
    let polls = recorded(&env, "task_get").len();
    assert!((1..=15).contains(&polls), "{polls} polls");
    env.assert_no_leaks();
    // A day: polled again within 5 s all the same.
    let env = TestEnv::new();
    config(
        &env,
        "2026-07-28",
        &["--fault", "task-poll-ms=86400000"],
        "",
    );
    let (line, elapsed) = research(&env, 0.2);
    assert_eq!(line["ok"], true, "{line}");
    assert!(elapsed < Duration::from_secs(15), "{elapsed:?}");
    env.assert_no_leaks();
}

/// Issue 21, item 1: every wait follows the `pollInterval` of the latest
/// answer, not only the first (a 2025-11-25 server's `tasks/get` answers were
/// read through rmcp's typed model, which drops `pollInterval`: later polls
/// fell back to 1 s). Measured by the server's own clock, with room to spare.
#[test]
fn every_poll_follows_the_latest_poll_interval() {
    for mode in ["2025-11-25", "2026-07-28"] {
        let env = TestEnv::new();
        config(&env, mode, &["--fault", "task-poll-ms=2000"], "");
        let (line, _) = research(&env, 5.0);
        assert_eq!(line["ok"], true, "{mode}: {line}");
        let at: Vec<u64> = recorded(&env, "task_get")
            .iter()
            .map(|r| r["at_ms"].as_u64().expect("at_ms"))
            .collect();
        assert!(at.len() >= 2, "{mode}: polls at {at:?}");
        for pair in at.windows(2) {
            assert!(
                pair[1] - pair[0] >= 1500,
                "{mode}: a poll came {} ms after the one before (asked: 2000 ms); polls at {at:?}",
                pair[1] - pair[0]
            );
        }
        env.assert_no_leaks();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn revoking_the_connection_cancels_its_running_task() {
    for mode in ["2026-07-28", "2025-11-25"] {
        let env = TestEnv::new();
        let text = config(&env, mode, &[], "");
        let (hub, mut events) = hub(&text);
        hub.connect("s").await.unwrap().outcome.unwrap();
        let caller = hub.clone();
        let running = tokio::spawn(async move {
            call(&caller, "research", j!({"topic": "t", "seconds": 60})).await
        });
        wait_for(&mut events, |e| matches!(e, McpEvent::Task { .. })).await;
        hub.disconnect("s").unwrap();
        let ended = tokio::time::timeout(Duration::from_secs(20), running)
            .await
            .expect("the call ends with its connection")
            .unwrap();
        assert!(ended.is_err(), "{mode}: {ended:?}");
        tokio::task::block_in_place(|| eventually(&env, "task_cancel"));
        hub.shutdown().await;
        assert_eq!(recorded(&env, "task_cancel").len(), 1, "{mode}");
        env.assert_no_leaks();
    }
}

/// What Ctrl-C does to `call`: the caller stops waiting (the call's future is
/// dropped) and the connection is closed at once. The cancel must reach the
/// server before the close, not race it: once `shutdown` returns, the server
/// has recorded it — exactly once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_dropped_just_before_the_close_still_cancels_its_task_once() {
    for mode in ["2026-07-28", "2025-11-25"] {
        let env = TestEnv::new();
        let text = config(&env, mode, &[], "");
        let (hub, mut events) = hub(&text);
        hub.connect("s").await.unwrap().outcome.unwrap();
        let caller = hub.clone();
        let running = tokio::spawn(async move {
            call(&caller, "research", j!({"topic": "t", "seconds": 60})).await
        });
        wait_for(&mut events, |e| matches!(e, McpEvent::Task { .. })).await;
        running.abort();
        // The call's future is gone (its guard dropped) before the close starts.
        assert!(running.await.unwrap_err().is_cancelled(), "{mode}");
        hub.shutdown().await;
        assert_eq!(recorded(&env, "task_cancel").len(), 1, "{mode}");
        env.assert_no_leaks();
    }
}

#[test]
fn ctrl_c_cancels_the_running_task_on_the_server() {
    for mode in ["2026-07-28", "2025-11-25"] {
        let env = TestEnv::new();
        config(&env, mode, &[], "");
        let mut child = env
            .command(&[
                "call",
                "s",
                "research",
                "--args",
                r#"{"topic":"t","seconds":60}"#,
                "--json",
            ])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let deadline = Instant::now() + Duration::from_secs(20);
        while recorded(&env, "task_get").is_empty() {
            assert!(
                Instant::now() < deadline,
                "{mode}: the task was never polled"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = std::process::Command::new("kill")
            .args(["-INT", &child.id().to_string()])
            .status();
        let status = child.wait().unwrap();
        assert_eq!(status.code(), Some(130), "{mode}");
        assert_eq!(recorded(&env, "task_cancel").len(), 1, "{mode}");
        env.assert_no_leaks();
    }
}

/// `run --json` with the scripted model calling the task tool: an ordinary
/// tool result, the `registered` event names the revision, and the session's
/// audit log records the negotiated revision and the task's status changes.
#[test]
fn run_json_and_the_audit_log_record_the_revision_and_the_task() {
    for mode in ["2026-07-28", "2025-11-25"] {
        let env = TestEnv::new();
        let scenario = "delay_ms = 1\n[[act]]\n\
            [[act.turn]]\ntext = \"connect\"\ntool_calls = [{ name = \"connect_mcp\", arguments = { alias = \"s\" } }]\n\
            [[act.turn]]\ntext = \"research\"\ntool_calls = [{ name = \"mcp__s__research\", arguments = { topic = \"tides\", seconds = 0.5 } }]\n\
            [[act.turn]]\ntext = \"done\"\n";
        std::fs::write(env.path("scenario.toml"), scenario).unwrap();
        let text = config(&env, mode, &[], "");
        env.config(&format!(
            "[model]\nprovider = \"scripted\"\nscenario = \"{{DIR}}/scenario.toml\"\n{text}"
        ));
        let out = env
            .command(&["run", "--prompt", "go", "--json"])
            .env_remove("ANTHROPIC_API_KEY")
            .env_remove("OPENAI_API_KEY")
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{mode}: {}", stderr(&out));
        let events: Vec<Value> = crate::common::stdout(&out)
            .lines()
            .map(|l| serde_json::from_str(l).expect("a JSON line"))
            .collect();
        let registered = events
            .iter()
            .find(|e| e["event"] == "registry" && e["change"] == "registered")
            .unwrap_or_else(|| panic!("{mode}: {events:#?}"));
        assert_eq!(registered["protocol_version"], mode);
        let result = events
            .iter()
            .find(|e| e["event"] == "tool_result" && e["name"] == "mcp__s__research")
            .unwrap_or_else(|| panic!("{mode}: {events:#?}"));
        assert_eq!(result["ok"], true, "{mode}: {result}");
        assert!(
            result["content"].as_str().unwrap_or("").contains("tides"),
            "{mode}: {result}"
        );
        let session = events.last().unwrap()["session"]
            .as_str()
            .unwrap()
            .to_owned();
        let audit: Vec<Value> = std::fs::read_to_string(
            env.path("xdg-data/mcp-harness/sessions")
                .join(session)
                .join("audit.jsonl"),
        )
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect();
        let audited = audit
            .iter()
            .find(|r| r["event"] == "registered")
            .unwrap_or_else(|| panic!("{mode}: {audit:#?}"));
        assert_eq!(audited["protocol_version"], mode);
        let states: Vec<&str> = audit
            .iter()
            .filter(|r| r["event"] == "task")
            .filter_map(|r| r["state"].as_str())
            .collect();
        assert_eq!(states.first(), Some(&"working"), "{mode}: {audit:#?}");
        assert_eq!(states.last(), Some(&"completed"), "{mode}: {audit:#?}");
        env.assert_no_leaks();
    }
}
