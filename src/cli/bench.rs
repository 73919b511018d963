//! `mcp-harness bench ALIAS TOOL`: a load test through the full pipeline —
//! validation, policy, the call with its timeout, the envelope — reporting
//! latency percentiles, calls per second and errors by code.

use std::collections::BTreeMap;
use std::io::IsTerminal as _;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use clap::Args;
use futures::StreamExt as _;
use serde::Serialize;
use serde_json::Value;

use super::call::{print_connect_error, print_tool_error};
use super::progress::Progress;
use super::{exit, hub_for, interruptible, json as out_json, load_config, out};
use crate::mcp::names::{EXPOSED_PREFIX, exposed_name};
use crate::mcp::policy::Effect;
use crate::mcp::{FlagApprover, Hub, ServerAlias, schema};

#[derive(Debug, Args)]
pub struct BenchArgs {
    /// The server alias, as configured
    pub alias: String,
    /// The tool: its name as the server publishes it, or its exposed mcp__ name
    pub tool: String,
    /// The arguments of every call, a JSON object
    #[arg(long, value_name = "JSON", default_value = "{}")]
    pub args: String,
    /// How many calls
    #[arg(short = 'n', long = "calls", value_name = "N", default_value_t = 2000,
          value_parser = clap::value_parser!(u32).range(1..=10_000_000))]
    pub calls: u32,
    /// How many calls in flight at once
    #[arg(short = 'c', long = "concurrency", value_name = "C", default_value_t = 32,
          value_parser = clap::value_parser!(u32).range(1..=4096))]
    pub concurrency: u32,
    /// Approve every call if the local policy says "confirm" (otherwise nothing is called)
    #[arg(long)]
    pub yes: bool,
    /// Print one JSON object (a versioned contract: docs/src/json.md)
    #[arg(long)]
    pub json: bool,
}

/// What `--json` prints (a versioned contract: docs/src/json.md).
#[derive(Debug, Serialize)]
pub struct Report {
    pub alias: String,
    pub tool: String,
    pub calls: usize,
    pub ok: usize,
    pub errors: BTreeMap<String, usize>,
    pub concurrency: u32,
    pub latency_us: Percentiles,
    pub calls_per_s: f64,
    /// CPU time (user + system) of this process per call, its servers and
    /// their supervisors excluded (`getrusage(RUSAGE_SELF)` over the calls).
    pub cpu_us_per_call: f64,
    /// Context switches of this process per call (voluntary + involuntary,
    /// same window).
    pub context_switches_per_call: f64,
}

/// What the process spent so far (every thread; children excluded).
#[derive(Clone, Copy)]
struct Usage {
    cpu: Duration,
    switches: i64,
}

impl Usage {
    fn now() -> Self {
        use nix::sys::resource::{UsageWho, getrusage};
        let Ok(usage) = getrusage(UsageWho::RUSAGE_SELF) else {
            return Self {
                cpu: Duration::ZERO,
                switches: 0,
            };
        };
        let micros = |t: nix::sys::time::TimeVal| {
            Duration::from_secs(t.tv_sec().max(0) as u64)
                + Duration::from_micros(t.tv_usec().max(0) as u64)
        };
        Self {
            cpu: micros(usage.user_time()) + micros(usage.system_time()),
            switches: usage.voluntary_context_switches() + usage.involuntary_context_switches(),
        }
    }

    fn since(self, start: Usage) -> Usage {
        Usage {
            cpu: self.cpu.saturating_sub(start.cpu),
            switches: self.switches - start.switches,
        }
    }
}

#[derive(Debug, Serialize, PartialEq, Eq)]
pub struct Percentiles {
    pub p50: u64,
    pub p90: u64,
    pub p99: u64,
}

pub async fn run(config: Option<PathBuf>, args: BenchArgs) -> ExitCode {
    let arguments = match super::arguments_json(&args.args) {
        Ok(v) => v,
        Err(code) => return code,
    };
    let config = match load_config(config) {
        Ok(c) => c,
        Err(code) => return code,
    };
    let hub = hub_for(&config);
    interruptible(&hub, bench(&hub, args, arguments)).await
}

async fn bench(hub: &Hub, args: BenchArgs, arguments: Value) -> ExitCode {
    let report = match hub.connect(&args.alias).await {
        Ok(report) => report,
        Err(e) => {
            eprintln!("mcp-harness: {e}");
            return ExitCode::from(exit::USAGE);
        }
    };
    eprint!("{}", super::render::pinned_note(&args.alias, &report.pins));
    if let Err(e) = &report.outcome {
        hub.shutdown().await;
        print_connect_error(&report, e, args.json);
        return ExitCode::from(exit::FAILURE);
    }
    let name = if args.tool.starts_with(EXPOSED_PREFIX) {
        args.tool.clone()
    } else {
        exposed_name(&ServerAlias::new(args.alias.as_str()), &args.tool)
    };
    let snapshot = hub.snapshot();
    let approver = FlagApprover { approve: args.yes };
    // Refuse before any call what every call would be refused for: an unknown or
    // denied tool, a `confirm` tool without --yes, arguments that do not match.
    // One pass through the pipeline says why, and sends nothing.
    let refused = match snapshot.resolve(&name) {
        None => true,
        Some(tool) => {
            (tool.effect == Effect::Confirm && !args.yes)
                || !schema::validate(&tool.validator, &arguments).is_empty()
        }
    };
    if refused {
        let outcome = hub.call(&snapshot, &name, arguments, &approver).await;
        hub.shutdown().await;
        if let Err(error) = &outcome.result {
            if args.json {
                let line = serde_json::json!({ "ok": false, "error": error });
                out::println(&out_json::to_line(&line));
            } else {
                print_tool_error(&report, &args.tool, error, &outcome, args.yes);
                eprintln!("mcp-harness: nothing was called");
            }
        }
        return ExitCode::from(exit::FAILURE);
    }
    let remote = snapshot
        .resolve(&name)
        .map_or_else(|| args.tool.clone(), |t| t.remote_name.clone());

    let total = args.calls as usize;
    let done = Arc::new(AtomicUsize::new(0));
    let progress = std::io::stderr()
        .is_terminal()
        .then(|| Progress::start(total, Arc::clone(&done)));
    let (started, usage) = (Instant::now(), Usage::now());
    // The load runs as a task on the runtime's workers, where the connection's
    // own tasks run, as a Lead's or a client's calls do (the command's own
    // future is polled by the main thread: every answer would be a wake-up
    // across threads). One call at a time is a plain sequence, not a
    // `buffer_unordered(1)`: futures' `FuturesUnordered` wakes its own task
    // whenever it has polled all its futures — with one in flight, after every
    // call — and that spurious wake-up made the runtime rouse its second
    // worker once a call (2.8 context switches a call, now 1.0). One task, not
    // one per call in flight: 32 tasks on two workers wake each other (0.5
    // switches a call against 0.08).
    let load = {
        let (hub, snapshot, name) = (hub.clone(), snapshot.clone(), name.clone());
        let concurrency = args.concurrency as usize;
        tokio::spawn(async move {
            let (hub, snapshot, name, done) = (&hub, &snapshot, &name, &done);
            let approver = &approver;
            let calls = futures::stream::iter(0..total).map(|_| {
                let arguments = arguments.clone();
                async move {
                    let start = Instant::now();
                    let outcome = hub.call(snapshot, name, arguments, approver).await;
                    let latency = start.elapsed();
                    done.fetch_add(1, Ordering::Relaxed);
                    (latency, outcome.result.err().map(|e| e.code.to_string()))
                }
            });
            if concurrency == 1 {
                calls.then(|call| call).collect::<Vec<_>>().await
            } else {
                calls
                    .buffer_unordered(concurrency)
                    .collect::<Vec<_>>()
                    .await
            }
        })
    };
    let results: Vec<(Duration, Option<String>)> = match load.await {
        Ok(results) => results,
        Err(e) => {
            hub.shutdown().await;
            eprintln!("mcp-harness: the load stopped: {e}");
            return ExitCode::from(exit::FAILURE);
        }
    };
    let (wall, spent) = (started.elapsed(), Usage::now().since(usage));
    if let Some(progress) = progress {
        progress.finish().await;
    }
    hub.shutdown().await;

    let mut report = summarize(args.alias.clone(), remote, args.concurrency, &results, wall);
    let calls = results.len().max(1) as f64;
    report.cpu_us_per_call = (spent.cpu.as_secs_f64() * 1e6 / calls * 10.0).round() / 10.0;
    report.context_switches_per_call = (spent.switches as f64 / calls * 100.0).round() / 100.0;
    let all_ok = report.ok == report.calls;
    if args.json {
        out::println(&out_json::to_line(&report));
    } else {
        out::print(&render(&report, wall));
    }
    if all_ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(exit::FAILURE)
    }
}

/// Latency percentiles, calls per second and errors by code.
pub fn summarize(
    alias: String,
    tool: String,
    concurrency: u32,
    results: &[(Duration, Option<String>)],
    wall: Duration,
) -> Report {
    let mut latencies: Vec<u64> = results
        .iter()
        .map(|(d, _)| u64::try_from(d.as_micros()).unwrap_or(u64::MAX))
        .collect();
    latencies.sort_unstable();
    let mut errors = BTreeMap::new();
    for code in results.iter().filter_map(|(_, e)| e.as_ref()) {
        *errors.entry(code.clone()).or_insert(0) += 1;
    }
    let calls = results.len();
    let failed: usize = errors.values().sum();
    let seconds = wall.as_secs_f64();
    Report {
        alias,
        tool,
        calls,
        ok: calls - failed,
        errors,
        concurrency,
        latency_us: Percentiles {
            p50: percentile(&latencies, 50),
            p90: percentile(&latencies, 90),
            p99: percentile(&latencies, 99),
        },
        calls_per_s: if seconds > 0.0 {
            (calls as f64 / seconds * 10.0).round() / 10.0
        } else {
            0.0
        },
        cpu_us_per_call: 0.0,
        context_switches_per_call: 0.0,
    }
}

/// Nearest-rank percentile of sorted values (0 when there are none).
fn percentile(sorted: &[u64], p: usize) -> u64 {
    if sorted.is_empty() {
        return 0;
    }
    let rank = (p * sorted.len()).div_ceil(100).max(1);
    sorted[rank.min(sorted.len()) - 1]
}

fn render(r: &Report, wall: Duration) -> String {
    let mut text = format!(
        "{} calls of {} on {}, {} in flight, in {:.2} s\n",
        r.calls,
        crate::sanitize::inert_line(&r.tool, 80),
        r.alias,
        r.concurrency,
        wall.as_secs_f64()
    );
    text.push_str(&format!(
        "  latency   p50 {} µs   p90 {} µs   p99 {} µs\n",
        r.latency_us.p50, r.latency_us.p90, r.latency_us.p99
    ));
    text.push_str(&format!("  rate      {} calls/s\n", r.calls_per_s));
    text.push_str(&format!(
        "  cost      {} µs of CPU and {} context switches per call (this process)\n",
        r.cpu_us_per_call, r.context_switches_per_call
    ));
    text.push_str(&format!("  ok        {}\n", r.ok));
    for (code, n) in &r.errors {
        text.push_str(&format!("  error     {code}: {n}\n"));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_are_nearest_rank() {
        let v: Vec<u64> = (1..=100).collect();
        assert_eq!(percentile(&v, 50), 50);
        assert_eq!(percentile(&v, 90), 90);
        assert_eq!(percentile(&v, 99), 99);
        assert_eq!(percentile(&[7], 99), 7);
        assert_eq!(percentile(&[], 50), 0);
        assert_eq!(percentile(&[1, 2, 3], 50), 2);
    }

    #[test]
    fn errors_are_counted_by_code() {
        let ms = Duration::from_millis;
        let results = vec![
            (ms(1), None),
            (ms(2), Some("mcp_remote_error".to_string())),
            (ms(3), Some("mcp_remote_error".to_string())),
            (ms(4), Some("mcp_timeout".to_string())),
        ];
        let r = summarize("a".into(), "t".into(), 2, &results, Duration::from_secs(2));
        assert_eq!((r.calls, r.ok), (4, 1));
        assert_eq!(r.errors["mcp_remote_error"], 2);
        assert_eq!(r.errors["mcp_timeout"], 1);
        assert_eq!(r.calls_per_s, 2.0);
        assert_eq!(
            r.latency_us,
            Percentiles {
                p50: 2000,
                p90: 4000,
                p99: 4000
            }
        );
    }
}
