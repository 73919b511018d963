//! A call on a 2026-07-28 connection against a call on a 2025-11-25 one, to
//! the same demo server (`demo-server alpha`, which speaks both), and against a
//! raw rmcp `call_tool` on each connection (rmcp's own request, no local rule:
//! on 2026-07-28 rmcp adds the `_meta` itself), interleaved in blocks so drift
//! hits all alike. (c)/(d) is what the revision costs rmcp and the server
//! alone; (a)/(c) and (b)/(d) are the harness's own share on each.
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
    let new_conn = bench::connection_of(snapshot.resolve("mcp__new__lookup").expect("tool"));
    assert!(
        new_conn.is_stateless(),
        "`new` must have negotiated 2026-07-28"
    );
    let old_conn = bench::connection_of(snapshot.resolve("mcp__old__lookup").expect("tool"));
    assert!(
        !old_conn.is_stateless(),
        "`old` must have negotiated 2025-11-25"
    );
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
    let raw = |which: &'static str| {
        let conn = if which == "new" { &new_conn } else { &old_conn };
        let raw_args = raw_args.clone();
        async move {
            bench::raw_rmcp_call(conn, "lookup", raw_args)
                .await
                .expect("raw call");
        }
    };
    for _ in 0..200 {
        call("mcp__new__lookup").await;
        call("mcp__old__lookup").await;
        raw("new").await;
        raw("old").await;
    }
    let (mut new, mut old) = (Vec::new(), Vec::new());
    let (mut bare_new, mut bare_old) = (Vec::new(), Vec::new());
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
            raw("new").await;
            bare_new.push(t.elapsed());
        }
        for _ in 0..50 {
            let t = Instant::now();
            raw("old").await;
            bare_old.push(t.elapsed());
        }
    }
    let (n, o) = (stats(new), stats(old));
    let (r, ro) = (stats(bare_new), stats(bare_old));
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
        "  (d) raw rmcp call_tool, 2025-11-25    median {:>10}  p99 {:>10}",
        us(ro.median),
        us(ro.p99)
    );
    let ratio =
        |x: &super::Stats, y: &super::Stats| x.median.as_secs_f64() / y.median.as_secs_f64();
    println!(
        "  ratio (a)/(b) at the median: {:.3}  (target ≤ 1.1)",
        n.median.as_secs_f64() / o.median.as_secs_f64()
    );
    println!(
        "  ratio (c)/(d): {:.3}  (the revision's cost in rmcp and the server)   (a)/(c): {:.3}   (b)/(d): {:.3}",
        ratio(&r, &ro),
        ratio(&n, &r),
        ratio(&o, &ro)
    );
    hub.shutdown().await;
}
