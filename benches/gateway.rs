//! What `mcp-harness serve` adds to a call: the official TypeScript SDK's
//! client calling an upstream directly, and the same upstream through the
//! gateway, in the same run: each round runs both, sequential and with 32
//! calls in flight, alternating which goes first. Over Streamable HTTP
//! (`benches/ts_client/bench_http.ts`: the client to the upstream, or to
//! `serve --http`, which reaches the upstream over HTTP too), and over stdio
//! (`benches/ts_client/bench.ts`: the client spawns the demo server, or
//! `serve --stdio`, which spawns it in turn) — what a host that spawns its
//! servers sees when it spawns the gateway instead. Prints the ranges over the rounds and the ratios
//! (gateway / direct, per round), then the gateway's own share of each call
//! from its audit records (`timing.gateway_ms`: the view, the schema check,
//! the policy, the pin check, the screening, the result's conversion) —
//! the rest of the difference is the extra HTTP hop.
//!
//! `cargo bench --bench gateway` — needs `./interop/install.sh` (the SDK,
//! server-everything and Node 22). `BENCH_ROUNDS` (default 3), `BENCH_CALLS`
//! (default 1000), `BENCH_EVERYTHING=0` to leave out server-everything.

#![allow(clippy::unwrap_used, clippy::expect_used)] // a benchmark: a panic is the report

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use serde_json::Value;

#[path = "shared/cli.rs"]
mod cli;

use cli::{config_with_policy, env_or, isolated, range};

const BIN: &str = env!("CARGO_BIN_EXE_mcp-harness");
const TOKEN: &str = "bench-token-0123456789abcdef";

/// One upstream to measure: how it is reached, which tool, which arguments.
struct Upstream {
    name: &'static str,
    reach: Reach,
    tool: &'static str,
    args: &'static str,
}

/// How the client and the gateway reach an upstream.
enum Reach {
    /// A server listening on `url` (the child is ours to stop).
    Http { child: Child, url: String },
    /// A demo server the client (or `serve --stdio`) spawns: `demo-server NAME`.
    Stdio { demo: &'static str },
}

impl Drop for Upstream {
    fn drop(&mut self) {
        if let Reach::Http { child, .. } = &mut self.reach {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let status = std::fs::read_to_string(root.join(".cache/interop/status")).unwrap_or_default();
    if status.trim() != "ok" {
        eprintln!("gateway: needs the pinned SDK and servers: run ./interop/install.sh");
        std::process::exit(1);
    }
    let npm = root.join(".cache/interop/npm/node_modules");
    let rounds: usize = env_or("BENCH_ROUNDS", 3);
    let calls: usize = env_or("BENCH_CALLS", 1000);
    let mut upstreams = vec![
        demo(),
        Upstream {
            name: "demo-alpha `lookup` over stdio (serve --stdio)",
            reach: Reach::Stdio { demo: "alpha" },
            tool: "lookup",
            args: r#"{"key":"apple"}"#,
        },
    ];
    if std::env::var("BENCH_EVERYTHING").as_deref() != Ok("0") {
        upstreams.push(everything(&npm));
    }
    println!(
        "TypeScript SDK client, {calls} calls a run (over HTTP after 50 warm-up calls), {rounds} rounds"
    );
    for upstream in &upstreams {
        measure(&npm, upstream, rounds, calls);
    }
}

/// The first line of `child`'s stdout (or stderr) that contains `marker`.
fn line_with(stream: impl std::io::Read, marker: &str) -> String {
    BufReader::new(stream)
        .lines()
        .map_while(Result::ok)
        .find(|l| l.contains(marker))
        .unwrap_or_else(|| panic!("no line with {marker:?}"))
}

/// demo-alpha's `lookup` over HTTP.
fn demo() -> Upstream {
    let mut child = Command::new(BIN)
        .args(["demo-server", "alpha", "--http", "127.0.0.1:0"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let line = line_with(child.stdout.take().unwrap(), "listening on ");
    let url = line.trim_start_matches("listening on ").to_string();
    Upstream {
        name: "demo-alpha `lookup` over HTTP (serve --http)",
        reach: Reach::Http { child, url },
        tool: "lookup",
        args: r#"{"key":"apple"}"#,
    }
}

/// server-everything's `echo` over Streamable HTTP, on a free port.
fn everything(npm: &Path) -> Upstream {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut child = Command::new(npm.join(".bin/node"))
        .arg(npm.join("@modelcontextprotocol/server-everything/dist/index.js"))
        .arg("streamableHttp")
        .env("PORT", port.to_string())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    line_with(child.stderr.take().unwrap(), "listening on port");
    Upstream {
        name: "server-everything `echo` over HTTP (serve --http)",
        reach: Reach::Http {
            child,
            url: format!("http://127.0.0.1:{port}/mcp"),
        },
        tool: "echo",
        args: r#"{"message":"hello"}"#,
    }
}

/// The upstream as alias `up`, with the policy `mcp-harness policy` prints
/// (every tool `confirm`: the gateway runs with `--approve always`), and one
/// client with a token (over HTTP; `serve --stdio` serves the `stdio` profile).
fn write_config(upstream: &Upstream, dir: &Path) -> PathBuf {
    let server = match &upstream.reach {
        Reach::Http { url, .. } => format!("[servers.up]\nurl = {url:?}\n"),
        Reach::Stdio { demo } => {
            format!("[servers.up]\ncommand = {BIN:?}\nargs = [\"demo-server\", {demo:?}]\n")
        }
    };
    let client = "\n[serve.clients.bench]\ntoken_env = \"MCPH_BENCH_TOKEN\"\n";
    config_with_policy(BIN, dir, &server, "up", client)
}

/// Where the TypeScript SDK's client goes for one run.
enum Target<'a> {
    /// `bench_http.ts` to `url`, with a bearer token for the gateway.
    Http {
        url: &'a str,
        token: Option<&'a str>,
    },
    /// `bench.ts`, spawning `command` with `args` (HOME set to `home`).
    Stdio {
        command: &'a str,
        args: Vec<String>,
        home: &'a Path,
    },
}

/// One run of the TypeScript SDK's client calling `tool`: its report.
fn client(
    npm: &Path,
    target: &Target<'_>,
    tool: &str,
    args: &str,
    calls: usize,
    c: usize,
) -> Value {
    let scripts = Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/ts_client");
    let mut cmd = Command::new(npm.join(".bin/node"));
    cmd.arg("--no-warnings");
    let script = match target {
        Target::Http { .. } => "bench_http.ts",
        Target::Stdio { .. } => "bench.ts",
    };
    cmd.arg(scripts.join(script))
        .arg(npm.join("@modelcontextprotocol/sdk"))
        .args([&calls.to_string(), &c.to_string(), tool, args]);
    match target {
        Target::Http { url, token } => {
            cmd.arg(url);
            if let Some(token) = token {
                cmd.arg(token);
            }
        }
        // The SDK passes HOME on to the server it spawns: the gateway's data
        // (its audit log) lands in the bench's own directory.
        Target::Stdio {
            command,
            args,
            home,
        } => {
            cmd.arg(command).args(args).env("HOME", home);
        }
    }
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["ok"], calls, "{report}");
    report
}

fn measure(npm: &Path, upstream: &Upstream, rounds: usize, calls: usize) {
    let dir = tempfile::tempdir().unwrap();
    let config = write_config(upstream, dir.path());
    let config_arg = config.to_string_lossy().to_string();
    let outside = format!("up__{}", upstream.tool);
    // Over HTTP the gateway is one process for the whole run; over stdio the
    // client spawns one per run, as a host spawns it per session.
    let mut gateway = None;
    let served: String;
    let (direct, proxied) = match &upstream.reach {
        Reach::Http { url, .. } => {
            let mut child = isolated(Command::new(BIN), dir.path())
                .args(["--config", &config_arg])
                .args(["serve", "--http", "127.0.0.1:0", "--approve", "always"])
                .env("MCPH_BENCH_TOKEN", TOKEN)
                .stdout(Stdio::piped())
                .stderr(Stdio::null())
                .spawn()
                .unwrap();
            let line = line_with(child.stdout.take().unwrap(), "listening on ");
            served = line.trim_start_matches("listening on ").to_string();
            gateway = Some(child);
            (
                Target::Http { url, token: None },
                Target::Http {
                    url: &served,
                    token: Some(TOKEN),
                },
            )
        }
        Reach::Stdio { demo } => (
            Target::Stdio {
                command: BIN,
                args: vec!["demo-server".into(), demo.to_string()],
                home: dir.path(),
            },
            Target::Stdio {
                command: BIN,
                args: [
                    "--config",
                    &config_arg,
                    "serve",
                    "--stdio",
                    "--approve",
                    "always",
                ]
                .map(String::from)
                .to_vec(),
                home: dir.path(),
            },
        ),
    };
    // (in flight, [direct reports], [gateway reports])
    let mut rows: Vec<(usize, Vec<Value>, Vec<Value>)> =
        vec![(1, vec![], vec![]), (32, vec![], vec![])];
    for round in 0..rounds {
        for row in &mut rows {
            let c = row.0;
            let direct_first = (round + c) % 2 == 0;
            for k in 0..2 {
                if (k == 0) == direct_first {
                    row.1
                        .push(client(npm, &direct, upstream.tool, upstream.args, calls, c));
                } else {
                    row.2
                        .push(client(npm, &proxied, &outside, upstream.args, calls, c));
                }
            }
        }
        eprintln!("{}: round {} of {rounds} done", upstream.name, round + 1);
    }
    if let Some(mut gateway) = gateway {
        // SIGTERM: the gateway flushes its audit log and closes the upstream.
        Command::new("kill")
            .args(["-TERM", &gateway.id().to_string()])
            .status()
            .unwrap();
        gateway.wait().unwrap();
    }
    print_table(upstream.name, &rows);
    print_breakdown(dir.path());
}

fn print_table(name: &str, rows: &[(usize, Vec<Value>, Vec<Value>)]) {
    println!("\n{name}");
    println!("| path | in flight | p50 µs | p99 µs | calls/s |");
    println!("|---|---|---|---|---|");
    let of = |reports: &[Value], k: &str| {
        range(reports.iter().map(|r| r["latency_us"][k].as_f64().unwrap()))
    };
    for (c, direct, gateway) in rows {
        for (path, reports) in [("direct", direct), ("through the gateway", gateway)] {
            let (p50, p99) = (of(reports, "p50"), of(reports, "p99"));
            let rate = range(reports.iter().map(|r| r["calls_per_s"].as_f64().unwrap()));
            println!(
                "| {path} | {c} | {:.0}–{:.0} | {:.0}–{:.0} | {:.0}–{:.0} |",
                p50.0, p50.1, p99.0, p99.1, rate.0, rate.1
            );
        }
    }
    for (c, direct, gateway) in rows {
        let ratio = |k: &str| {
            range(direct.iter().zip(gateway).map(|(d, g)| {
                g["latency_us"][k].as_f64().unwrap() / d["latency_us"][k].as_f64().unwrap()
            }))
        };
        let (p50, p99) = (ratio("p50"), ratio("p99"));
        println!(
            "{c} in flight, gateway / direct: p50 {:.2}–{:.2}×, p99 {:.2}–{:.2}×",
            p50.0, p50.1, p99.0, p99.1
        );
    }
}

/// The gateway's own time per call, from its `client_call` audit records.
fn print_breakdown(dir: &Path) {
    // `serve --http` ran with XDG_DATA_HOME set, `serve --stdio` with HOME only.
    let sessions = [
        "xdg-data/mcp-harness/sessions",
        ".local/share/mcp-harness/sessions",
    ]
    .into_iter()
    .flat_map(|d| {
        std::fs::read_dir(dir.join(d))
            .into_iter()
            .flatten()
            .flatten()
    });
    let mut added = Vec::new();
    let mut upstream = Vec::new();
    for session in sessions {
        let text = std::fs::read_to_string(session.path().join("audit.jsonl")).unwrap_or_default();
        for record in text
            .lines()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        {
            if record["event"] == "client_call" {
                added.push(record["timing"]["gateway_ms"].as_f64().unwrap() * 1000.0);
                upstream.push(record["timing"]["upstream_ms"].as_f64().unwrap() * 1000.0);
            }
        }
    }
    let pct = |v: &mut Vec<f64>, p: f64| {
        v.sort_by(|a, b| a.total_cmp(b));
        v[((p * v.len() as f64 / 100.0).ceil() as usize).max(1) - 1]
    };
    println!(
        "in the gateway ({} calls, all runs): its own work p50 {:.0} µs, p99 {:.0} µs; its exchange with the upstream p50 {:.0} µs, p99 {:.0} µs",
        added.len(),
        pct(&mut added, 50.0),
        pct(&mut added, 99.0),
        pct(&mut upstream, 50.0),
        pct(&mut upstream, 99.0),
    );
}
