//! MCP core benchmarks, each a ratio against a baseline measured in the same run
//! (machines are noisy; absolute times drift, ratios much less).
//!
//! `cargo bench --bench mcp_core` — needs the release demo server, which cargo
//! builds for benches. Prints medians, p99 and ratios. `BENCH_ONLY=large` runs
//! only the 10,000-tool listing (for profiling it with perf); `connect`
//! (the whole connect vs a bare rmcp client, with and without pins),
//! `fairness` (a fast server's rate beside a slow one), `eras` (a call on
//! each protocol revision and a raw rmcp call), `pins`, `telemetry`, `flows`
//! (the credential scan of a 100 kB result, flow control with no labels) and
//! `screen` (the poisoning screen against the connect it is part of) run only
//! that part.

#![allow(clippy::unwrap_used, clippy::expect_used)] // a benchmark: a panic is the report

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use mcp_harness::config::{self, ConfigSource};
use mcp_harness::mcp::{EventSink, FlagApprover, Hub, McpEvent, Vars, bench};
use serde_json::json;

#[path = "mcp_core/connect.rs"]
mod connect;
#[path = "mcp_core/eras.rs"]
mod eras;
#[path = "mcp_core/fairness.rs"]
mod fairness;
#[path = "mcp_core/flows.rs"]
mod flows;
#[path = "mcp_core/large.rs"]
mod large;
#[path = "mcp_core/pins.rs"]
mod pins;
#[path = "mcp_core/screen.rs"]
mod screen;
#[path = "mcp_core/telemetry.rs"]
mod telemetry;

use large::large_server;
use telemetry::telemetry_overhead;

const BIN: &str = env!("CARGO_BIN_EXE_mcp-harness");

/// Counts live heap bytes, so the memory a large server costs is measured exactly
/// (resident size would include what the allocator keeps after earlier rounds).
struct Counting;

static LIVE: std::sync::atomic::AtomicIsize = std::sync::atomic::AtomicIsize::new(0);

// SAFETY: every call forwards to the system allocator unchanged; only a counter is added.
#[allow(unsafe_code)]
unsafe impl std::alloc::GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: std::alloc::Layout) -> *mut u8 {
        LIVE.fetch_add(layout.size() as isize, std::sync::atomic::Ordering::Relaxed);
        // SAFETY: the caller's contract for this call, passed on unchanged.
        unsafe { std::alloc::System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: std::alloc::Layout) {
        LIVE.fetch_sub(layout.size() as isize, std::sync::atomic::Ordering::Relaxed);
        // SAFETY: the caller's contract for this call, passed on unchanged.
        unsafe { std::alloc::System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: std::alloc::Layout, new_size: usize) -> *mut u8 {
        LIVE.fetch_add(
            new_size as isize - layout.size() as isize,
            std::sync::atomic::Ordering::Relaxed,
        );
        // SAFETY: the caller's contract for this call, passed on unchanged.
        unsafe { std::alloc::System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

fn live_bytes() -> isize {
    LIVE.load(std::sync::atomic::Ordering::Relaxed)
}

fn hub_for(text: &str) -> (Hub, tokio::sync::mpsc::UnboundedReceiver<McpEvent>) {
    let config = config::parse(text, ConfigSource::Embedded).expect("bench config");
    // As under the real binary: every server under its `__shim` supervisor.
    mcp_harness::mcp::process::use_supervisor(PathBuf::from(BIN));
    let (events, rx) = EventSink::new();
    (
        Hub::builder(
            config.servers,
            config.limits,
            Vars::new(PathBuf::from(BIN)),
            events,
        )
        .build(),
        rx,
    )
}

pub struct Stats {
    median: Duration,
    p99: Duration,
}

fn stats(mut samples: Vec<Duration>) -> Stats {
    samples.sort();
    let at = |q: f64| samples[((samples.len() as f64 - 1.0) * q).round() as usize];
    Stats {
        median: at(0.5),
        p99: at(0.99),
    }
}

fn us(d: Duration) -> String {
    format!("{:.1} µs", d.as_secs_f64() * 1e6)
}

fn ms(d: Duration) -> String {
    format!("{:.2} ms", d.as_secs_f64() * 1e3)
}

/// Harness call path vs a raw rmcp `call_tool` on the same connection,
/// interleaved in blocks so drift hits both alike.
async fn call_path() {
    let (hub, _rx) = hub_for(&format!(
        "[servers.a]\ncommand = \"{BIN}\"\nargs = [\"demo-server\", \"alpha\"]\n\
         [servers.a.tools]\nlookup = \"allow\"\nset = \"confirm\"\nreset = \"confirm\"\nfail = \"allow\"\nslow = \"allow\"\n"
    ));
    hub.connect("a")
        .await
        .expect("connect")
        .outcome
        .expect("exposed");
    let snapshot = hub.snapshot();
    let conn = bench::connection_of(snapshot.resolve("mcp__a__lookup").expect("tool"));
    let approver = FlagApprover { approve: false };
    let args = json!({"key": "apple"});
    let raw_args = args.as_object().cloned().unwrap_or_default();
    let (mut harness, mut raw) = (Vec::new(), Vec::new());
    for _ in 0..200 {
        hub.call(&snapshot, "mcp__a__lookup", args.clone(), &approver)
            .await
            .result
            .expect("warm-up");
    }
    for _block in 0..40 {
        for _ in 0..50 {
            let t = Instant::now();
            hub.call(&snapshot, "mcp__a__lookup", args.clone(), &approver)
                .await
                .result
                .expect("call");
            harness.push(t.elapsed());
        }
        for _ in 0..50 {
            let t = Instant::now();
            bench::raw_rmcp_call(&conn, "lookup", raw_args.clone())
                .await
                .expect("raw call");
            raw.push(t.elapsed());
        }
    }
    let (h, r) = (stats(harness), stats(raw));
    println!("call round trip, sequential, 2000 calls each (stdio, demo server `lookup`)");
    println!(
        "  (a) harness call path        median {:>10}  p99 {:>10}",
        us(h.median),
        us(h.p99)
    );
    println!(
        "  (b) raw rmcp call_tool       median {:>10}  p99 {:>10}",
        us(r.median),
        us(r.p99)
    );
    println!(
        "  ratio (a)/(b) at the median: {:.3}  (target ≤ 1.15)",
        h.median.as_secs_f64() / r.median.as_secs_f64()
    );
    let floor = stats(echo_floor(2000).await);
    println!(
        "  (c) floor: JSON-RPC line echoed over pipes by `cat`, no SDK   median {:>10}  p99 {:>10}",
        us(floor.median),
        us(floor.p99)
    );
    println!(
        "  ratio (a)/(c) at the median: {:.1}  (target ≤ 10)",
        h.median.as_secs_f64() / floor.median.as_secs_f64()
    );

    // 32 calls in flight.
    let mut rates = Vec::new();
    for which in ["harness", "raw"] {
        let t = Instant::now();
        let total = 3200;
        let mut tasks = tokio::task::JoinSet::new();
        for worker in 0..32 {
            let (hub, snapshot, conn, args, raw_args) = (
                hub.clone(),
                snapshot.clone(),
                Arc::clone(&conn),
                args.clone(),
                raw_args.clone(),
            );
            tasks.spawn(async move {
                for _ in 0..total / 32 {
                    if which == "harness" {
                        let outcome = hub.call(
                            &snapshot,
                            "mcp__a__lookup",
                            args.clone(),
                            &FlagApprover { approve: false },
                        );
                        outcome.await.result.expect("call");
                    } else {
                        bench::raw_rmcp_call(&conn, "lookup", raw_args.clone())
                            .await
                            .expect("raw");
                    }
                }
                worker
            });
        }
        while tasks.join_next().await.is_some() {}
        rates.push(total as f64 / t.elapsed().as_secs_f64());
    }
    println!(
        "  32 in flight: (a) {:.0} calls/s, (b) {:.0} calls/s, ratio (b)/(a) {:.3}",
        rates[0],
        rates[1],
        rates[1] / rates[0]
    );
    hub.shutdown().await;
}

/// The floor of a stdio round trip: a newline-delimited JSON-RPC request written
/// to a child over a pipe, echoed back by `cat`, read and parsed. No SDK, no server
/// logic: only the pipes, the process switch and the JSON on our side.
async fn echo_floor(rounds: usize) -> Vec<Duration> {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
    let mut child = tokio::process::Command::new("cat")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("cat");
    let mut stdin = child.stdin.take().expect("stdin");
    let mut lines = BufReader::new(child.stdout.take().expect("stdout")).lines();
    let mut samples = Vec::with_capacity(rounds);
    for id in 0..rounds + 200 {
        let request = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": "lookup", "arguments": {"key": "apple"}}});
        let t = Instant::now();
        let mut line = request.to_string();
        line.push('\n');
        stdin.write_all(line.as_bytes()).await.expect("write");
        let echoed = lines.next_line().await.expect("read").expect("a line");
        let parsed: serde_json::Value = serde_json::from_str(&echoed).expect("json");
        assert_eq!(parsed["id"], id);
        if id >= 200 {
            samples.push(t.elapsed());
        }
    }
    samples
}

/// SIGKILL of an idle server's process group → `Revoked` event.
async fn revocation_latency() {
    let (hub, mut rx) = hub_for(&format!(
        "[servers.a]\ncommand = \"{BIN}\"\nargs = [\"demo-server\", \"alpha\"]\n\
         [servers.a.tools]\nlookup = \"allow\"\nset = \"confirm\"\nreset = \"confirm\"\nfail = \"allow\"\nslow = \"allow\"\n"
    ));
    let mut samples = Vec::new();
    for _ in 0..40 {
        hub.connect("a")
            .await
            .expect("connect")
            .outcome
            .expect("exposed");
        while rx.try_recv().is_ok() {}
        let t = Instant::now();
        hub.kill_process("a").expect("kill");
        loop {
            match rx.recv().await {
                Some(McpEvent::Revoked { .. }) => break,
                Some(_) => continue,
                None => panic!("events closed"),
            }
        }
        samples.push(t.elapsed());
    }
    let s = stats(samples);
    println!("idle server killed → revoked event (watchdog), 40 runs");
    println!(
        "  median {:>10}  p99 {:>10}  (target: median < 20 ms)",
        ms(s.median),
        ms(s.p99)
    );
    hub.shutdown().await;
}

fn main() {
    // `cargo bench` passes --bench; `cargo test --benches` passes nothing useful: run anyway.
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let only = std::env::var("BENCH_ONLY").unwrap_or_default();
    runtime.block_on(async {
        if only == "large" {
            large_server(10_000, false).await;
            return;
        }
        if only == "connect" {
            for (tools, distinct) in [
                (1_000, false),
                (10_000, false),
                (1_000, true),
                (10_000, true),
            ] {
                connect::connect_ratios(tools, distinct).await;
            }
            return;
        }
        if only == "fairness" {
            fairness::fairness().await;
            return;
        }
        if only == "eras" {
            eras::eras_call().await;
            return;
        }
        if only == "pins" {
            pins::pin_overhead(10_000, false).await;
            pins::pin_overhead(10_000, true).await;
            return;
        }
        if only == "flows" {
            flows::flow_costs().await;
            return;
        }
        if only == "telemetry" {
            telemetry_overhead().await;
            return;
        }
        if only == "screen" {
            screen::screen_cost().await;
            return;
        }
        call_path().await;
        println!();
        eras::eras_call().await;
        println!();
        telemetry_overhead().await;
        println!();
        flows::flow_costs().await;
        println!();
        for (tools, distinct) in [
            (1_000, false),
            (10_000, false),
            (1_000, true),
            (10_000, true),
        ] {
            large_server(tools, distinct).await;
        }
        println!();
        for distinct in [false, true] {
            pins::pin_overhead(10_000, distinct).await;
        }
        println!();
        screen::screen_cost().await;
        println!();
        revocation_latency().await;
    });
}
