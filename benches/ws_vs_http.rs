//! WebSocket against Streamable HTTP: the same call (demo-alpha's `lookup`)
//! through the harness's whole call path (`mcp-harness bench`), to the same
//! demo server process serving both (`demo-server alpha --http … --ws …`), in
//! the same run: each round runs both transports, sequential and with 32 calls
//! in flight, alternating which goes first. Prints each run, the ranges over
//! the rounds and the ratios (WebSocket / HTTP, per round): p50 and p99
//! latency, and calls per second.
//!
//! `cargo bench --bench ws_vs_http` — `BENCH_ROUNDS` (default 3),
//! `BENCH_CALLS` (default 1000 a run).

#![allow(clippy::unwrap_used, clippy::expect_used)] // a benchmark: a panic is the report

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};

use serde_json::Value;

// Not every bench uses every helper (the policy here is the demo's, known).
#[path = "shared/cli.rs"]
#[allow(dead_code)]
mod cli;

use cli::{env_or, isolated, range};

const BIN: &str = env!("CARGO_BIN_EXE_mcp-harness");
const POLICY: &str = "lookup = \"allow\"\nset = \"confirm\"\nreset = \"confirm\"\nfail = \"allow\"\nslow = \"allow\"\n";
const ARGS: &str = r#"{"key":"apple"}"#;

/// The demo server, killed when the benchmark ends.
struct Demo(Child);

impl Drop for Demo {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// One `mcp-harness bench` run's figures.
struct Run {
    p50_us: f64,
    p99_us: f64,
    calls_per_s: f64,
}

fn main() {
    let rounds: usize = env_or("BENCH_ROUNDS", 3);
    let calls: usize = env_or("BENCH_CALLS", 1000);
    let dir = tempfile::tempdir().unwrap();
    let mut child = Command::new(BIN)
        .args(["demo-server", "alpha"])
        .args(["--http", "127.0.0.1:0", "--ws", "127.0.0.1:0"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let demo = Demo(child);
    let (mut http, mut ws) = (String::new(), String::new());
    while http.is_empty() || ws.is_empty() {
        let line = lines.next().expect("the demo's listening lines").unwrap();
        let url = line.strip_prefix("listening on ").unwrap_or_default();
        if url.starts_with("http://") {
            http = url.to_string();
        } else if url.starts_with("ws://") {
            ws = url.to_string();
        }
    }
    let config = dir.path().join("config.toml");
    std::fs::write(
        &config,
        format!(
            "[servers.http]\nurl = \"{http}\"\n[servers.http.tools]\n{POLICY}\
             [servers.ws]\nurl = \"{ws}\"\n[servers.ws.tools]\n{POLICY}"
        ),
    )
    .unwrap();
    println!(
        "demo-alpha's lookup through the whole call path, one demo server on both transports, \
         {calls} calls a run, {rounds} rounds"
    );
    for concurrency in [1, 32] {
        let mut ratios = Vec::new();
        let mut runs: Vec<(Run, Run)> = Vec::new();
        for round in 0..rounds {
            // Alternate which goes first: neither always gets the warmer machine.
            let order = if round % 2 == 0 {
                ["http", "ws"]
            } else {
                ["ws", "http"]
            };
            let mut got =
                order.map(|alias| (alias, bench(&config, dir.path(), alias, calls, concurrency)));
            got.sort_by_key(|(alias, _)| *alias != "http");
            let [(_, h), (_, w)] = got;
            println!(
                "  {concurrency:>2} in flight, round {}: http p50 {:.2} ms p99 {:.2} ms {:.0} calls/s · \
                 ws p50 {:.2} ms p99 {:.2} ms {:.0} calls/s",
                round + 1,
                h.p50_us / 1000.0,
                h.p99_us / 1000.0,
                h.calls_per_s,
                w.p50_us / 1000.0,
                w.p99_us / 1000.0,
                w.calls_per_s
            );
            ratios.push((
                w.p50_us / h.p50_us,
                w.p99_us / h.p99_us,
                w.calls_per_s / h.calls_per_s,
            ));
            runs.push((h, w));
        }
        let (p50_lo, p50_hi) = range(ratios.iter().map(|r| r.0));
        let (p99_lo, p99_hi) = range(ratios.iter().map(|r| r.1));
        let (rate_lo, rate_hi) = range(ratios.iter().map(|r| r.2));
        let (hp50_lo, hp50_hi) = range(runs.iter().map(|(h, _)| h.p50_us / 1000.0));
        let (wp50_lo, wp50_hi) = range(runs.iter().map(|(_, w)| w.p50_us / 1000.0));
        println!(
            "{concurrency:>2} in flight: p50 http {hp50_lo:.2}–{hp50_hi:.2} ms, ws {wp50_lo:.2}–{wp50_hi:.2} ms; \
             ws/http p50 {p50_lo:.2}–{p50_hi:.2}, p99 {p99_lo:.2}–{p99_hi:.2}, calls/s {rate_lo:.2}–{rate_hi:.2}"
        );
    }
    drop(demo);
}

/// `mcp-harness bench ALIAS lookup` with `calls` calls, `concurrency` in flight.
fn bench(config: &Path, dir: &Path, alias: &str, calls: usize, concurrency: usize) -> Run {
    let (n, c) = (calls.to_string(), concurrency.to_string());
    let out = isolated(Command::new(BIN), dir)
        .args([
            "--config",
            &config.to_string_lossy(),
            "bench",
            alias,
            "lookup",
        ])
        .args(["--args", ARGS, "-n", &n, "-c", &c, "--json", "--yes"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "mcp-harness bench {alias}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["ok"], report["calls"], "{report}");
    Run {
        p50_us: report["latency_us"]["p50"].as_f64().unwrap(),
        p99_us: report["latency_us"]["p99"].as_f64().unwrap(),
        calls_per_s: report["calls_per_s"].as_f64().unwrap(),
    }
}
