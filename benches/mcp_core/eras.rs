//! A call on a 2026-07-28 connection against a call on a 2025-11-25 one, to
//! the same demo server (`demo-server alpha`, which speaks both), and against a
//! raw rmcp `call_tool` on the same 2026-07-28 connection (rmcp's own stateless
//! request, no local rule), interleaved in blocks so drift hits all alike.
//! Target (issue 11): (a)/(b) ≤ 1.1 at the median.

use std::time::Instant;

use mcp_harness::mcp::{FlagApprover, bench};
use serde_json::json;

use super::{BIN, hub_for, stats, us};

const POLICY: &str = "lookup = \"allow\"\nset = \"confirm\"\nreset = \"confirm\"\nfail = \"allow\"\nslow = \"allow\"\n";

pub async fn eras_call() {
    let server = |alias: &str, protocol: &str| {
        format!(
            "[servers.{alias}]\ncommand = \"{BIN}\"\nargs = [\"demo-server\", \"alpha\"]\n\
             protocol = \"{protocol}\"\npin = \"off\"\n[servers.{alias}.tools]\n{POLICY}"
        )
    };
    let (hub, _rx) = hub_for(&format!(
        "{}{}",
        server("new", "2026-07-28"),
        server("old", "2025-11-25")
    ));
    for alias in ["new", "old"] {
        let report = hub.connect(alias).await.expect("connect");
        report.outcome.expect("exposed");
    }
    let snapshot = hub.snapshot();
    let conn = bench::connection_of(snapshot.resolve("mcp__new__lookup").expect("tool"));
    assert!(conn.is_stateless(), "`new` must have negotiated 2026-07-28");
    let approver = FlagApprover { approve: false };
    let args = json!({"key": "apple"});
    let raw_args = args.as_object().cloned().unwrap_or_default();
    let call = |tool: &'static str| {
        let (hub, snapshot, args) = (&hub, &snapshot, args.clone());
        async move {
            hub.call(snapshot, tool, args, &approver)
                .await
                .result
                .expect("call");
        }
    };
    let raw = || {
        let (conn, raw_args) = (&conn, raw_args.clone());
        async move {
            bench::raw_rmcp_call(conn, "lookup", raw_args)
                .await
                .expect("raw call");
        }
    };
    for _ in 0..200 {
        call("mcp__new__lookup").await;
        call("mcp__old__lookup").await;
        raw().await;
    }
    let (mut new, mut old, mut bare) = (Vec::new(), Vec::new(), Vec::new());
    for _block in 0..40 {
        for _ in 0..50 {
            let t = Instant::now();
            call("mcp__new__lookup").await;
            new.push(t.elapsed());
        }
        for _ in 0..50 {
            let t = Instant::now();
            call("mcp__old__lookup").await;
            old.push(t.elapsed());
        }
        for _ in 0..50 {
            let t = Instant::now();
            raw().await;
            bare.push(t.elapsed());
        }
    }
    let (n, o, r) = (stats(new), stats(old), stats(bare));
    println!("call on each revision, sequential, 2000 calls each (stdio, demo server `lookup`)");
    println!(
        "  (a) harness, 2026-07-28 (stateless)   median {:>10}  p99 {:>10}",
        us(n.median),
        us(n.p99)
    );
    println!(
        "  (b) harness, 2025-11-25 (handshake)   median {:>10}  p99 {:>10}",
        us(o.median),
        us(o.p99)
    );
    println!(
        "  (c) raw rmcp call_tool, 2026-07-28    median {:>10}  p99 {:>10}",
        us(r.median),
        us(r.p99)
    );
    println!(
        "  ratio (a)/(b) at the median: {:.3}  (target ≤ 1.1)",
        n.median.as_secs_f64() / o.median.as_secs_f64()
    );
    println!(
        "  ratio (a)/(c) at the median: {:.3}",
        n.median.as_secs_f64() / r.median.as_secs_f64()
    );
    hub.shutdown().await;
}
