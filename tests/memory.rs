//! Bounded memory against servers that send too much: a 50 MB result, a 15 MB
//! result, 100 MB on stderr, a 50 MB WebSocket frame. Library-level, alone in its test binary, so the
//! high-water mark of this process (`VmHWM`) is the harness's own.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report

#[path = "it/common/mod.rs"]
mod common;

use std::path::PathBuf;
use std::time::{Duration, Instant};

use common::{BIN, TestEnv};
use mcp_harness::config::{self, ConfigSource};
use mcp_harness::mcp::{EventSink, FlagApprover, Hub, HubBuilder, ToolErrorCode, Vars};
use serde_json::json;

/// 25 MB measured (long strings are cut as they stream in, so no result is
/// ever held whole: 84–99 MB before that, when the 15 MB result was parsed
/// whole); the bound leaves a margin for allocator and runtime variation, not
/// for a regression that buffers a whole large message again. The demo
/// server's own memory is another process's.
const MAX_HWM_KB: u64 = 96 * 1024;

const POLICY: &str = "[servers.s.tools]\nlookup = \"allow\"\nset = \"allow\"\nreset = \"allow\"\nfail = \"allow\"\nslow = \"allow\"\n";

fn new_hub(env: &TestEnv, faults: &[&str]) -> Hub {
    new_hub_with(env, faults, "").build()
}

fn new_hub_with(env: &TestEnv, faults: &[&str], limits: &str) -> HubBuilder {
    let text = format!(
        "[limits]\ncall_timeout_ms = 120000\nconnect_timeout_ms = 60000\n{limits}{}{POLICY}",
        env.demo("s", "alpha", faults)
    );
    let config = config::parse(&env.fill(&text), ConfigSource::Embedded).expect("config");
    Hub::builder(
        config.servers,
        config.limits,
        Vars::new(PathBuf::from(BIN)),
        EventSink::discard(),
    )
}

fn high_water_kb() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmHWM in /proc/self/status")
}

async fn lookup(hub: &Hub) -> Result<mcp_harness::mcp::ToolOutput, mcp_harness::mcp::ToolError> {
    hub.call(
        &hub.snapshot(),
        "mcp__s__lookup",
        json!({"key": "apple"}),
        &FlagApprover { approve: false },
    )
    .await
    .result
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn oversized_output_keeps_the_harness_memory_bounded() {
    let baseline = high_water_kb();

    // 50 MB in one WebSocket frame: refused from the frame's header, before
    // its payload is read; the connection ends naming the limit.
    let env = TestEnv::new();
    let (mut server, url) =
        common::hubs::ws_demo(&env, "alpha", &["--fault", "huge-result=50000000"]);
    let text =
        format!("[limits]\ncall_timeout_ms = 120000\n[servers.s]\nurl = \"{url}\"\n{POLICY}");
    let config = config::parse(&text, ConfigSource::Embedded).expect("config");
    let hub = Hub::builder(
        config.servers,
        config.limits,
        Vars::new(PathBuf::from(BIN)),
        EventSink::discard(),
    )
    .build();
    hub.connect("s").await.unwrap().outcome.unwrap();
    let error = lookup(&hub).await.expect_err("50 MB cannot be one frame");
    assert_eq!(error.code, ToolErrorCode::McpConnectionLost, "{error:?}");
    assert!(
        error
            .message
            .contains("larger than 16 MiB, its max_message_bytes"),
        "{}",
        error.message
    );
    hub.shutdown().await;
    server.kill().unwrap();
    server.wait().unwrap();
    env.assert_no_leaks();
    let after_ws = high_water_kb();
    // Had the frame been read whole, the peak would be past its size.
    assert!(
        after_ws * 1024 < 50_000_000,
        "peak RSS {after_ws} kB: the 50 MB frame was buffered"
    );

    // 100 MiB in one result, allowed by max_message_bytes = 256 MiB: cut for
    // the model as it streams in, saved whole, never held whole in memory.
    let env = TestEnv::new();
    let results = env.path("results");
    let hub = new_hub_with(
        &env,
        &["--fault", "huge-result=104857600"],
        "max_message_bytes = 268435456\n",
    )
    .results_dir(results.clone())
    .build();
    hub.connect("s").await.unwrap().outcome.unwrap();
    let started = Instant::now();
    let output = hub
        .call_as(
            &hub.snapshot(),
            "mcp__s__lookup",
            json!({"key": "apple"}),
            &FlagApprover { approve: false },
            &mcp_harness::mcp::CallIdentity::lead("big-1"),
        )
        .await
        .result
        .expect("100 MiB fits in 256 MiB");
    let took = started.elapsed();
    assert!(output.truncated);
    let saved = std::fs::metadata(results.join("big-1.txt")).expect("saved whole");
    // The demo's text ends on a character boundary: a byte less at most.
    assert!(
        (104_857_599..=104_857_600).contains(&saved.len()),
        "{}",
        saved.len()
    );
    hub.shutdown().await;
    env.assert_no_leaks();
    let after_100 = high_water_kb();
    eprintln!(
        "100 MiB result: {took:?}, VmHWM {after_100} kB ({:.2}x the message)",
        (after_100 * 1024) as f64 / 104_857_600.0
    );
    assert!(
        after_100 * 1024 < 3 * 104_857_600,
        "peak RSS {after_100} kB is not under 3x the 100 MiB message"
    );

    // 50 MB in one result: over the 16 MiB message limit. The connection ends at
    // once with that reason, long before the (2-minute) call timeout.
    let env = TestEnv::new();
    let hub = new_hub(&env, &["--fault", "huge-result=50000000"]);
    hub.connect("s").await.unwrap().outcome.unwrap();
    let started = Instant::now();
    let error = lookup(&hub).await.expect_err("50 MB cannot be one message");
    assert_eq!(error.code, ToolErrorCode::McpConnectionLost, "{error:?}");
    assert!(
        error
            .message
            .contains("larger than 16 MiB, its max_message_bytes"),
        "{}",
        error.message
    );
    assert!(started.elapsed() < Duration::from_secs(100));
    hub.shutdown().await;
    env.assert_no_leaks();
    let after_50 = high_water_kb();

    // 15 MB: under the limit, so parsed, then cut to max_result_bytes.
    let env = TestEnv::new();
    let hub = new_hub(&env, &["--fault", "huge-result=15000000"]);
    hub.connect("s").await.unwrap().outcome.unwrap();
    let output = lookup(&hub).await.expect("15 MB is one message");
    assert!(output.truncated);
    hub.shutdown().await;
    env.assert_no_leaks();
    let after_15 = high_water_kb();

    // 100 MB on stderr while connected: drained into a 64 KiB tail, calls work.
    let env = TestEnv::new();
    let hub = new_hub(&env, &["--fault", "stderr-flood=100000000"]);
    hub.connect("s").await.unwrap().outcome.unwrap();
    let snapshot = hub.snapshot();
    let connection = snapshot.connections().next().unwrap().connection();
    let deadline = Instant::now() + Duration::from_secs(120);
    while connection.stderr().total_bytes() < 100_000_000 {
        assert!(Instant::now() < deadline, "the flood was not drained");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(lookup(&hub).await.is_ok());
    let tail: usize = connection
        .stderr()
        .last_lines(1000)
        .iter()
        .map(String::len)
        .sum();
    assert!(tail <= 64 * 1024, "{tail}");
    hub.shutdown().await;
    env.assert_no_leaks();
    let after_flood = high_water_kb();

    eprintln!(
        "VmHWM: baseline {baseline} kB, after 50 MB result {after_50} kB, after 15 MB result \
         {after_15} kB, after 100 MB stderr {after_flood} kB, after a 50 MB WebSocket frame \
         {after_ws} kB"
    );
    assert!(after_flood < MAX_HWM_KB, "{after_flood} kB");
}
