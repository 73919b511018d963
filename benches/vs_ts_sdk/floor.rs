//! The floor: the least a client can do for `tools/call` over stdio. No SDK,
//! no validation, no policy: one request line written, one response line read
//! and parsed with `serde_json`, a window of `concurrency` requests in flight,
//! on one thread with blocking pipes. Whatever a real client adds is above it.

use std::collections::HashMap;
use std::io::{BufRead as _, BufReader, BufWriter, Write as _};
use std::path::Path;
use std::process::{ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

use nix::sys::resource::{UsageWho, getrusage};
use serde_json::{Value, json};

/// Runs `calls` calls of `tool` with `arguments` against `node server stdio`
/// and reports as `mcp-harness bench --json` does (`ok`, `latency_us`,
/// `calls_per_s`).
pub fn run(
    node: &Path,
    server: &Path,
    tool: &str,
    arguments: &Value,
    calls: usize,
    concurrency: usize,
) -> Value {
    let mut child = Command::new(node)
        .arg(server)
        .arg("stdio")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut input = BufWriter::new(child.stdin.take().unwrap());
    let mut output = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    send(
        &mut input,
        &json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "floor", "version": "1"}}}),
    );
    answer(&mut output, &mut line);
    send(
        &mut input,
        &json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    );

    let request = |id: usize| {
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
               "params": {"name": tool, "arguments": arguments}})
    };
    let mut sent_at: HashMap<u64, Instant> = HashMap::with_capacity(concurrency);
    let mut latencies: Vec<Duration> = Vec::with_capacity(calls);
    let (mut next, mut ok) = (1usize, 0usize);
    // This thread's own CPU and context switches (the server is another process).
    let usage = || getrusage(UsageWho::RUSAGE_THREAD).unwrap();
    let before = usage();
    let started = Instant::now();
    while next <= calls.min(concurrency) {
        sent_at.insert(next as u64, Instant::now());
        send(&mut input, &request(next));
        next += 1;
    }
    while latencies.len() < calls {
        let message = answer(&mut output, &mut line);
        let id = message["id"].as_u64().unwrap();
        latencies.push(sent_at.remove(&id).unwrap().elapsed());
        if message.get("result").is_some_and(|r| r["isError"] != true) {
            ok += 1;
        }
        if next <= calls {
            sent_at.insert(next as u64, Instant::now());
            send(&mut input, &request(next));
            next += 1;
        }
    }
    let seconds = started.elapsed().as_secs_f64();
    let after = usage();
    let cpu = |u: &nix::sys::resource::Usage| {
        let micros = |t: nix::sys::time::TimeVal| t.tv_sec() as f64 * 1e6 + t.tv_usec() as f64;
        micros(u.user_time()) + micros(u.system_time())
    };
    let switches = |u: &nix::sys::resource::Usage| {
        (u.voluntary_context_switches() + u.involuntary_context_switches()) as f64
    };
    drop(input);
    let _ = child.kill();
    let _ = child.wait();
    latencies.sort_unstable();
    let percentile = |p: usize| {
        let rank = (p * latencies.len()).div_ceil(100).max(1);
        latencies[rank.min(latencies.len()) - 1].as_micros() as u64
    };
    json!({
        "ok": ok,
        "latency_us": {"p50": percentile(50), "p90": percentile(90), "p99": percentile(99)},
        "calls_per_s": (calls as f64 / seconds * 10.0).round() / 10.0,
        "cpu_us_per_call": ((cpu(&after) - cpu(&before)) / calls as f64 * 10.0).round() / 10.0,
        "context_switches_per_call": ((switches(&after) - switches(&before)) / calls as f64 * 100.0).round() / 100.0,
    })
}

/// The next response, skipping notifications and the server's own requests.
fn answer(output: &mut BufReader<ChildStdout>, line: &mut String) -> Value {
    loop {
        line.clear();
        assert!(output.read_line(line).unwrap() > 0, "the server closed");
        let message: Value = serde_json::from_str(line).unwrap();
        if message.get("method").is_none() {
            return message;
        }
    }
}

fn send(input: &mut BufWriter<ChildStdin>, message: &Value) {
    serde_json::to_writer(&mut *input, message).unwrap();
    input.write_all(b"\n").unwrap();
    input.flush().unwrap();
}
