//! Issue 24's run-time costs, each against the same call without it in one run
//! (blocks interleaved, so drift hits both alike): the credential scan of a
//! 100 kB result (target ≤ 1.05) and flow control's steps on a call when no
//! labels are configured (target ≤ 1.01).

use std::time::{Duration, Instant};

use mcp_harness::mcp::{FlagApprover, Hub, bench};
use serde_json::json;

use super::{BIN, hub_for, stats, us};

const POLICY: &str =
    "lookup = \"allow\"\nset = \"allow\"\nreset = \"allow\"\nfail = \"allow\"\nslow = \"allow\"\n";

/// `calls` calls of `lookup` with `switch(true)` and `calls` with
/// `switch(false)`, in `blocks` interleaved blocks: the two medians.
async fn on_off(
    hub: &Hub,
    switch: fn(bool),
    blocks: usize,
    per_block: usize,
) -> (Duration, Duration) {
    let snapshot = hub.snapshot();
    let approver = FlagApprover { approve: false };
    let args = json!({"key": "apple"});
    for _ in 0..100 {
        hub.call(&snapshot, "mcp__a__lookup", args.clone(), &approver)
            .await
            .result
            .expect("warm-up");
    }
    let (mut on, mut off) = (Vec::new(), Vec::new());
    for block in 0..blocks {
        // Alternate which goes first, so neither always follows the other.
        for first in [block % 2 == 0, block % 2 != 0] {
            switch(first);
            let samples = if first { &mut on } else { &mut off };
            for _ in 0..per_block {
                let t = Instant::now();
                hub.call(&snapshot, "mcp__a__lookup", args.clone(), &approver)
                    .await
                    .result
                    .expect("call");
                samples.push(t.elapsed());
            }
        }
    }
    switch(true);
    (stats(on).median, stats(off).median)
}

pub async fn flow_costs() {
    // (1) A 100 kB result, whole in memory (max_result_bytes above it).
    let (hub, _rx) = hub_for(&format!(
        "[limits]\nmax_result_bytes = 1000000\n\
         [servers.a]\ncommand = \"{BIN}\"\nargs = [\"demo-server\", \"alpha\", \"--fault\", \"huge-result=100000\"]\n\
         [servers.a.tools]\n{POLICY}"
    ));
    hub.connect("a")
        .await
        .expect("connect")
        .outcome
        .expect("exposed");
    let (on, off) = on_off(&hub, bench::set_result_scan, 30, 20).await;
    println!("a call whose result is 100 kB of text (stdio, demo server `lookup`), 600 calls each");
    println!("  (a) with the credential scan      median {:>10}", us(on));
    println!("  (b) without it                    median {:>10}", us(off));
    println!(
        "  ratio (a)/(b) at the median: {:.3}  (target ≤ 1.05)",
        on.as_secs_f64() / off.as_secs_f64()
    );
    let text = "All work and no play makes a huge résult.\n".repeat(100_000 / 43 + 1);
    let t = Instant::now();
    for _ in 0..100 {
        assert!(mcp_harness::mcp::secrets::scan(&text).is_empty());
    }
    println!(
        "  the scan alone over the same 100 kB: {}",
        us(t.elapsed() / 100)
    );
    hub.shutdown().await;

    // (2) A small call, no labels configured: flow control on vs skipped.
    let (hub, _rx) = hub_for(&format!(
        "[servers.a]\ncommand = \"{BIN}\"\nargs = [\"demo-server\", \"alpha\"]\n[servers.a.tools]\n{POLICY}"
    ));
    hub.connect("a")
        .await
        .expect("connect")
        .outcome
        .expect("exposed");
    let (on, off) = on_off(&hub, bench::set_flow_checks, 40, 50).await;
    println!("a call with no labels configured (stdio, demo server `lookup`), 2000 calls each");
    println!("  (a) with flow control's steps     median {:>10}", us(on));
    println!("  (b) without them                  median {:>10}", us(off));
    println!(
        "  ratio (a)/(b) at the median: {:.3}  (target ≤ 1.01)",
        on.as_secs_f64() / off.as_secs_f64()
    );
    hub.shutdown().await;
}
