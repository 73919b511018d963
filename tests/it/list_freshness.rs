//! Tool-list changes on both revisions (issue 11, deliverable 4): on
//! 2026-07-28 through `subscriptions/listen`, on a handshake connection through
//! `notifications/tools/list_changed` — the same re-validation either way (the
//! other tests in `list_changed.rs` run on the demo's default, 2026-07-28); and
//! `ttlMs`: an expired list is re-listed before the next model request uses it.

use std::time::Duration;

use crate::common::hubs::{hub, wait_for};
use crate::common::{TestEnv, all_records};
use mcp_harness::mcp::McpEvent;

const POLICY: &str = "[servers.s.tools]\nlookup = \"allow\"\nset = \"allow\"\nreset = \"allow\"\nfail = \"allow\"\nslow = \"allow\"\n";

fn lists(env: &TestEnv) -> usize {
    all_records(&env.path("record.jsonl"))
        .iter()
        .filter(|r| r["event"] == "list")
        .count()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_changed_description_arrives_on_both_revisions() {
    for mode in ["2026-07-28", "2025-11-25"] {
        let env = TestEnv::new();
        let faults = [
            "--protocol",
            mode,
            "--fault",
            "mutate-tools=description",
            "--fault",
            "mutate-after-ms=300",
        ];
        let (hub, mut rx) = hub(
            &env,
            &format!("{}pin = \"off\"\n{POLICY}", env.demo("s", "alpha", &faults)),
        );
        let report = hub.connect("s").await.unwrap();
        report.outcome.unwrap();
        assert_eq!(report.server.unwrap().protocol_version, mode);
        let event = wait_for(&mut rx, |e| matches!(e, McpEvent::ToolsChanged { .. })).await;
        let McpEvent::ToolsChanged { changed, .. } = event else {
            unreachable!()
        };
        assert_eq!(changed, ["mcp__s__lookup"], "{mode}");
        hub.shutdown().await;
        env.assert_no_leaks();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_expired_list_is_relisted_before_it_is_used_again() {
    for (mode, relists) in [("2026-07-28", true), ("2025-11-25", false)] {
        let env = TestEnv::new();
        let record = env.path("record.jsonl");
        let faults = [
            "--protocol",
            mode,
            "--fault",
            "list-ttl-ms=300",
            "--record",
            record.to_str().unwrap(),
        ];
        let (hub, _rx) = hub(
            &env,
            &format!("{}{POLICY}", env.demo("s", "alpha", &faults)),
        );
        hub.connect("s").await.unwrap().outcome.unwrap();
        assert_eq!(lists(&env), 1);
        // Fresh: nothing to do.
        let snapshot = hub.fresh_snapshot().await;
        assert_eq!(snapshot.tools().len(), 5);
        assert_eq!(lists(&env), 1, "{mode}");
        tokio::time::sleep(Duration::from_millis(400)).await;
        let snapshot = hub.fresh_snapshot().await;
        assert_eq!(snapshot.tools().len(), 5, "{mode}: still exposed");
        // `ttlMs` is a 2026-07-28 field: a handshake list never expires.
        assert_eq!(lists(&env), if relists { 2 } else { 1 }, "{mode}");
        hub.shutdown().await;
        env.assert_no_leaks();
    }
}
