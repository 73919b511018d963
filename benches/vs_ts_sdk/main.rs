//! `mcp-harness bench` beside the official TypeScript SDK's client and a
//! no-SDK floor client (`floor.rs`), on server-everything's `echo`,
//! measured in the same run: each round runs all three, sequential (`-c 1`)
//! and with 32 calls in flight, rotating which goes first. Prints the ranges
//! over the rounds, the ratios, and the harness's own CPU time and context
//! switches per call.
//!
//! `cargo bench --bench vs_ts_sdk` — needs `./interop/install.sh` (the pinned
//! server-everything, the SDK and Node 22). `BENCH_ROUNDS` (default 3),
//! `BENCH_CALLS` (default 2000).

#![allow(clippy::unwrap_used, clippy::expect_used)] // a benchmark: a panic is the report

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

#[path = "../shared/cli.rs"]
mod cli;
mod floor;

use cli::{config_with_policy, env_or, isolated, range};

const BIN: &str = env!("CARGO_BIN_EXE_mcp-harness");
const ARGS: &str = r#"{"message":"hello"}"#;

struct Interop {
    npm: PathBuf,
}

impl Interop {
    fn node(&self) -> PathBuf {
        self.npm.join(".bin/node")
    }
    fn package(&self, name: &str) -> PathBuf {
        self.npm.join("@modelcontextprotocol").join(name)
    }
}

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let status = std::fs::read_to_string(root.join(".cache/interop/status")).unwrap_or_default();
    if status.trim() != "ok" {
        eprintln!("vs_ts_sdk: needs the pinned servers and SDK: run ./interop/install.sh");
        std::process::exit(1);
    }
    let interop = Interop {
        npm: root.join(".cache/interop/npm/node_modules"),
    };
    let rounds: usize = env_or("BENCH_ROUNDS", 3);
    let calls: usize = env_or("BENCH_CALLS", 2000);
    let dir = tempfile::tempdir().unwrap();
    let config = write_config(&interop, dir.path());

    const CLIENTS: [&str; 3] = ["mcp-harness bench", "TypeScript SDK client", "no-SDK floor"];
    let mut rows: Vec<(&str, usize, Vec<Value>)> = [1, 32]
        .into_iter()
        .flat_map(|c| CLIENTS.map(|name| (name, c, vec![])))
        .collect();
    let arguments: Value = serde_json::from_str(ARGS).unwrap();
    let server = interop.package("server-everything").join("dist/index.js");
    for round in 0..rounds {
        for concurrency in [1, 32] {
            let mut reports = Vec::new();
            // Each round starts with another client.
            for k in 0..CLIENTS.len() {
                let name = CLIENTS[(round + k) % CLIENTS.len()];
                let report = match name {
                    "mcp-harness bench" => harness(&config, dir.path(), calls, concurrency),
                    "TypeScript SDK client" => ts_sdk(&interop, calls, concurrency),
                    _ => floor::run(
                        &interop.node(),
                        &server,
                        "echo",
                        &arguments,
                        calls,
                        concurrency,
                    ),
                };
                reports.push((report, name));
            }
            for (report, name) in reports {
                assert_eq!(report["ok"], calls, "{name}: {report}");
                let row = rows
                    .iter_mut()
                    .find(|(n, c, _)| *n == name && *c == concurrency)
                    .unwrap();
                row.2.push(report);
            }
        }
        eprintln!("round {} of {rounds} done", round + 1);
    }
    print_table(&rows, calls);
}

/// server-everything over stdio, with the policy `mcp-harness policy` prints.
fn write_config(interop: &Interop, dir: &Path) -> PathBuf {
    let server = format!(
        "[servers.everything]\ncommand = {:?}\nargs = [{:?}, \"stdio\"]\n",
        interop.node().to_string_lossy(),
        interop
            .package("server-everything")
            .join("dist/index.js")
            .to_string_lossy()
    );
    config_with_policy(BIN, dir, &server, "everything", "")
}

fn harness(config: &Path, dir: &Path, calls: usize, concurrency: usize) -> Value {
    let (n, c) = (calls.to_string(), concurrency.to_string());
    let out = isolated(Command::new(BIN), dir)
        .args(["--config", &config.to_string_lossy(), "bench", "everything"])
        .args([
            "echo", "--args", ARGS, "-n", &n, "-c", &c, "--json", "--yes",
        ])
        .output()
        .unwrap();
    parse("mcp-harness bench", &out)
}

fn ts_sdk(interop: &Interop, calls: usize, concurrency: usize) -> Value {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/ts_client/bench.ts");
    let out = Command::new(interop.node())
        .arg("--no-warnings")
        .arg(script)
        .arg(interop.package("sdk"))
        .args([&calls.to_string(), &concurrency.to_string(), "echo", ARGS])
        .arg(interop.node())
        .arg(interop.package("server-everything").join("dist/index.js"))
        .arg("stdio")
        .output()
        .unwrap();
    parse("TypeScript SDK client", &out)
}

fn parse(what: &str, out: &std::process::Output) -> Value {
    assert!(
        out.status.success(),
        "{what}: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{what}: {e}"))
}

fn print_table(rows: &[(&str, usize, Vec<Value>)], calls: usize) {
    println!(
        "server-everything `echo`, {calls} calls a run, {} rounds",
        rows[0].2.len()
    );
    println!("| client | in flight | p50 µs | p99 µs | calls/s |");
    println!("|---|---|---|---|---|");
    for (name, concurrency, reports) in rows {
        let of = |k: &str| range(reports.iter().map(|r| r["latency_us"][k].as_f64().unwrap()));
        let rate = range(reports.iter().map(|r| r["calls_per_s"].as_f64().unwrap()));
        let (p50, p99) = (of("p50"), of("p99"));
        println!(
            "| {name} | {concurrency} | {:.0}–{:.0} | {:.0}–{:.0} | {:.0}–{:.0} |",
            p50.0, p50.1, p99.0, p99.1, rate.0, rate.1
        );
    }
    // Ratios per round (same round, same machine state).
    let row = |name: &str, c: usize| {
        rows.iter()
            .position(|(n, k, _)| *n == name && *k == c)
            .unwrap()
    };
    let ratio = |i: usize, j: usize, f: &dyn Fn(&Value) -> f64| {
        range(rows[i].2.iter().zip(&rows[j].2).map(|(h, t)| f(h) / f(t)))
    };
    let p50 = |r: &Value| r["latency_us"]["p50"].as_f64().unwrap();
    let rate = |r: &Value| r["calls_per_s"].as_f64().unwrap();
    let harness = "mcp-harness bench";
    for (peer, short) in [("TypeScript SDK client", "SDK"), ("no-SDK floor", "floor")] {
        let seq = ratio(row(harness, 1), row(peer, 1), &p50);
        let par = ratio(row(harness, 32), row(peer, 32), &rate);
        println!(
            "sequential p50, harness / {short}: {:.2}–{:.2}",
            seq.0, seq.1
        );
        println!(
            "32 in flight calls/s, harness / {short}: {:.2}–{:.2}",
            par.0, par.1
        );
    }
    // The harness's own cost (getrusage of its process) and the floor's (of
    // its thread); the servers excluded.
    for (client, short) in [(harness, "harness"), ("no-SDK floor", "floor")] {
        for c in [1, 32] {
            let of = |k: &str| {
                range(
                    rows[row(client, c)]
                        .2
                        .iter()
                        .map(|r| r[k].as_f64().unwrap()),
                )
            };
            let (cpu, cs) = (of("cpu_us_per_call"), of("context_switches_per_call"));
            println!(
                "{short}, {c} in flight: {:.1}–{:.1} µs CPU and {:.2}–{:.2} context switches per call",
                cpu.0, cpu.1, cs.0, cs.1
            );
        }
    }
}
