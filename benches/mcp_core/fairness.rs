//! A slow server must not make the fast path unfair to others
//! (`BENCH_ONLY=fairness`): 32 calls in flight to a server that answers at
//! once (`a`, `lookup`), alone, then alongside 32 calls in flight to another
//! server that answers each in 2 s (`b`, `slow`), then alongside a server that
//! floods progress notifications (`b`, `slow` in 100 steps of 5 ms, 32 in
//! flight: ~6,400 notifications a second). Rounds alternate; the figure is the
//! fast server's calls per second beside it, against alone, in the same run.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use mcp_harness::mcp::FlagApprover;
use serde_json::{Value, json};

use super::{BIN, hub_for};

const FAST_CALLS: usize = 16_000;
const IN_FLIGHT: usize = 32;
const ROUNDS: usize = 6;

#[derive(Clone, Copy, PartialEq)]
enum Beside {
    Nothing,
    Slow,
    Flood,
}

impl Beside {
    fn args(self) -> Option<Value> {
        match self {
            Beside::Nothing => None,
            Beside::Slow => Some(json!({"seconds": 2, "steps": 1})),
            Beside::Flood => Some(json!({"seconds": 0.5, "steps": 100})),
        }
    }
}

pub async fn fairness() {
    let tools = "lookup = \"allow\"\nset = \"allow\"\nreset = \"allow\"\nfail = \"allow\"\nslow = \"allow\"\n";
    let (hub, _rx) = hub_for(&format!(
        "[servers.a]\ncommand = \"{BIN}\"\nargs = [\"demo-server\", \"alpha\"]\n\
         [servers.a.tools]\n{tools}\
         [servers.b]\ncommand = \"{BIN}\"\nargs = [\"demo-server\", \"alpha\"]\ncall_timeout_ms = 60000\n\
         [servers.b.tools]\n{tools}"
    ));
    for alias in ["a", "b"] {
        hub.connect(alias)
            .await
            .expect("connect")
            .outcome
            .expect("exposed");
    }
    let snapshot = hub.snapshot();
    // Warm up the fast path.
    fast_rate(&hub, &snapshot, 2_000).await;
    let kinds = [
        Beside::Nothing,
        Beside::Slow,
        Beside::Nothing,
        Beside::Flood,
    ];
    let mut rates: Vec<(Beside, f64, usize)> = Vec::new();
    for _round in 0..ROUNDS {
        for beside in kinds {
            let stop = Arc::new(AtomicBool::new(false));
            let done = Arc::new(AtomicUsize::new(0));
            let mut load = tokio::task::JoinSet::new();
            if let Some(args) = beside.args() {
                for _ in 0..IN_FLIGHT {
                    let (hub, snapshot, args) = (hub.clone(), snapshot.clone(), args.clone());
                    let (stop, done) = (Arc::clone(&stop), Arc::clone(&done));
                    load.spawn(async move {
                        while !stop.load(Ordering::Relaxed) {
                            let outcome = hub
                                .call(
                                    &snapshot,
                                    "mcp__b__slow",
                                    args.clone(),
                                    &FlagApprover { approve: false },
                                )
                                .await;
                            outcome.result.expect("slow call");
                            done.fetch_add(1, Ordering::Relaxed);
                        }
                    });
                }
                // Every slow call in flight before the fast ones start.
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
            let rate = fast_rate(&hub, &snapshot, FAST_CALLS).await;
            stop.store(true, Ordering::Relaxed);
            while load.join_next().await.is_some() {}
            rates.push((beside, rate, done.load(Ordering::Relaxed)));
        }
    }
    let median = |which: Beside| {
        let mut v: Vec<f64> = rates
            .iter()
            .filter(|(b, ..)| *b == which)
            .map(|(_, r, _)| *r)
            .collect();
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let slow_done: usize = rates
        .iter()
        .filter(|(b, ..)| *b == Beside::Slow)
        .map(|(.., d)| d)
        .sum();
    let (alone, slow, flood) = (
        median(Beside::Nothing),
        median(Beside::Slow),
        median(Beside::Flood),
    );
    println!(
        "fairness: {IN_FLIGHT} calls in flight to a fast server ({FAST_CALLS} calls a round, {ROUNDS} rounds of each)"
    );
    println!("  alone                                                median {alone:>8.0} calls/s");
    println!(
        "  beside {IN_FLIGHT} calls in flight of 2 s each to another server median {slow:>8.0} calls/s   ratio {:.3}  (target ≥ 0.9)",
        slow / alone
    );
    println!(
        "  beside {IN_FLIGHT} calls flooding progress (100 steps in 0.5 s) median {flood:>8.0} calls/s   ratio {:.3}",
        flood / alone
    );
    println!(
        "  per round: {}   (slow calls completed meanwhile: {slow_done})",
        rates
            .iter()
            .map(|(b, r, _)| format!(
                "{}{r:.0}",
                match b {
                    Beside::Nothing => "alone ",
                    Beside::Slow => "slow ",
                    Beside::Flood => "flood ",
                }
            ))
            .collect::<Vec<_>>()
            .join(", ")
    );
    hub.shutdown().await;
}

/// `calls` calls of `lookup` on `a`, `IN_FLIGHT` at a time: calls per second.
async fn fast_rate(
    hub: &mcp_harness::mcp::Hub,
    snapshot: &mcp_harness::mcp::Snapshot,
    calls: usize,
) -> f64 {
    let t = Instant::now();
    let mut tasks = tokio::task::JoinSet::new();
    for _ in 0..IN_FLIGHT {
        let (hub, snapshot) = (hub.clone(), snapshot.clone());
        tasks.spawn(async move {
            for _ in 0..calls / IN_FLIGHT {
                let outcome = hub
                    .call(
                        &snapshot,
                        "mcp__a__lookup",
                        json!({"key": "apple"}),
                        &FlagApprover { approve: false },
                    )
                    .await;
                outcome.result.expect("fast call");
            }
        });
    }
    while tasks.join_next().await.is_some() {}
    calls as f64 / t.elapsed().as_secs_f64()
}
