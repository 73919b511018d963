//! `notifications/tools/list_changed` with real demo-server processes: storms are
//! coalesced into a handful of re-lists; a new tool set that breaks a local rule
//! rejects and revokes the whole connection, saying what changed; one that still
//! satisfies the rules replaces the connection's tools at once and names the
//! tools whose schema or description changed. `run --json` and the session's
//! audit log report both. (A changed definition of a pinned tool is a broken
//! rule too, rule 14: see `pins.rs`; the replacement tests here set `pin = "off"`.)

use std::time::Duration;

use crate::common::hubs::wait_for;
use crate::common::{TestEnv, all_records};
use mcp_harness::mcp::{
    AliasState, ConnectErrorCode, FlagApprover, Hub, McpEvent, RELIST_INTERVAL, RevokeCause,
    Snapshot, ToolErrorCode,
};
use serde_json::{Value, json};
use tokio::sync::mpsc::UnboundedReceiver;

const POLICY: &str = "[servers.s.tools]\nlookup = \"allow\"\nset = \"allow\"\nreset = \"allow\"\nfail = \"allow\"\nslow = \"allow\"\n";

fn hub(env: &TestEnv, faults: &[&str]) -> (Hub, UnboundedReceiver<McpEvent>) {
    crate::common::hubs::hub(env, &format!("{}{POLICY}", env.demo("s", "alpha", faults)))
}

/// The same server without definition pinning: re-validated changes replace tools.
fn unpinned_hub(env: &TestEnv, faults: &[&str]) -> (Hub, UnboundedReceiver<McpEvent>) {
    crate::common::hubs::hub(
        env,
        &format!("{}pin = \"off\"\n{POLICY}", env.demo("s", "alpha", faults)),
    )
}

async fn call(
    hub: &Hub,
    snapshot: &Snapshot,
    tool: &str,
    args: Value,
) -> Result<(), ToolErrorCode> {
    let outcome = hub
        .call(snapshot, tool, args, &FlagApprover { approve: true })
        .await;
    outcome.result.map(|_| ()).map_err(|e| e.code)
}

fn state(hub: &Hub) -> AliasState {
    hub.aliases().remove(0).1
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_storm_of_notifications_causes_a_handful_of_relists() {
    let env = TestEnv::new();
    let record = env.path("record.jsonl");
    let record_arg = record.to_string_lossy().into_owned();
    let (hub, mut rx) = hub(
        &env,
        &[
            "--fault",
            "list-changed-storm=5000",
            "--record",
            &record_arg,
        ],
    );
    let started = std::time::Instant::now();
    hub.connect("s").await.unwrap().outcome.unwrap();
    for _ in 0..5000 {
        wait_for(&mut rx, |e| matches!(e, McpEvent::ToolListChanged { .. })).await;
    }
    // The coalescer owes one listing after the last notification: wait for a
    // `tools/list` the server received after it sent the whole storm.
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    let lists = loop {
        let records = all_records(&record);
        let sent = records.iter().position(|r| r["event"] == "storm_sent");
        let listed_after = sent.is_some_and(|i| records[i..].iter().any(|r| r["event"] == "list"));
        if listed_after {
            break records.iter().filter(|r| r["event"] == "list").count();
        }
        assert!(
            std::time::Instant::now() < deadline,
            "no tools/list after the storm: {records:?}"
        );
        tokio::time::sleep(Duration::from_millis(25)).await;
    };
    // At most one re-list per RELIST_INTERVAL since connecting, plus the first
    // listing and the one owed at the end: a bound that holds however slowly a
    // loaded machine delivers the storm — and far below one per notification.
    let intervals = started.elapsed().as_millis() / RELIST_INTERVAL.as_millis();
    let bound = usize::try_from(intervals).unwrap() + 2;
    eprintln!("tools/list requests for 5000 notifications: {lists} (bound {bound})");
    assert!(lists <= bound.min(50), "{lists} listings, bound {bound}");
    // Nothing changed: same tools, no new version, still ready.
    assert!(matches!(state(&hub), AliasState::Ready { exposed: 5, .. }));
    while let Ok(event) = rx.try_recv() {
        assert!(
            !matches!(
                event,
                McpEvent::ToolsChanged { .. } | McpEvent::Revoked { .. }
            ),
            "{event:?}"
        );
    }
    hub.shutdown().await;
    env.assert_no_leaks();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_changed_schema_is_revalidated_and_replaces_the_tool() {
    let env = TestEnv::new();
    // The first call changes lookup's schema: it now requires `limit`.
    let (hub, mut rx) = unpinned_hub(&env, &["--fault", "mutate-tools=schema"]);
    hub.connect("s").await.unwrap().outcome.unwrap();
    let before = hub.snapshot();
    call(
        &hub,
        &before,
        "mcp__s__set",
        json!({"key": "k", "value": "v"}),
    )
    .await
    .unwrap();
    let event = wait_for(&mut rx, |e| matches!(e, McpEvent::ToolsChanged { .. })).await;
    let McpEvent::ToolsChanged {
        added,
        removed,
        changed,
        tools,
        version,
        ..
    } = event
    else {
        unreachable!()
    };
    assert_eq!(changed, ["mcp__s__lookup"]);
    assert!(added.is_empty() && removed.is_empty());
    assert_eq!(tools.len(), 5);
    let after = hub.snapshot();
    assert_eq!(after.version(), version);
    assert!(version > before.version());
    // The old snapshot's lookup is stale: refused, nothing sent.
    assert_eq!(
        call(&hub, &before, "mcp__s__lookup", json!({"key": "apple"})).await,
        Err(ToolErrorCode::McpUnknownTool)
    );
    // Unchanged tools keep working through the old snapshot.
    call(&hub, &before, "mcp__s__fail", json!({}))
        .await
        .expect_err("fail always fails remotely");
    assert_eq!(
        call(
            &hub,
            &before,
            "mcp__s__set",
            json!({"key": "k", "value": "w"})
        )
        .await,
        Ok(())
    );
    // The new schema is the one enforced, locally.
    assert_eq!(
        call(&hub, &after, "mcp__s__lookup", json!({"key": "apple"})).await,
        Err(ToolErrorCode::McpInvalidArguments)
    );
    assert_eq!(
        call(
            &hub,
            &after,
            "mcp__s__lookup",
            json!({"key": "apple", "limit": 1})
        )
        .await,
        Ok(())
    );
    assert!(matches!(state(&hub), AliasState::Ready { exposed: 5, .. }));
    hub.shutdown().await;
    env.assert_no_leaks();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_description_change_on_an_idle_connection_is_reported() {
    let env = TestEnv::new();
    let (hub, mut rx) = unpinned_hub(
        &env,
        &[
            "--fault",
            "mutate-tools=description",
            "--fault",
            "mutate-after-ms=300",
        ],
    );
    hub.connect("s").await.unwrap().outcome.unwrap();
    let event = wait_for(&mut rx, |e| matches!(e, McpEvent::ToolsChanged { .. })).await;
    let McpEvent::ToolsChanged { changed, .. } = event else {
        unreachable!()
    };
    assert_eq!(changed, ["mcp__s__lookup"]);
    let description = hub
        .snapshot()
        .resolve("mcp__s__lookup")
        .and_then(|t| t.description.clone())
        .unwrap_or_default();
    assert!(
        description.contains("different description"),
        "{description}"
    );
    hub.shutdown().await;
    env.assert_no_leaks();
}

/// A mutation that breaks a rule: the connection is rejected and revoked.
async fn rejected_after(kind: &str) -> (RevokeCause, AliasState) {
    let env = TestEnv::new();
    let mutation = format!("mutate-tools={kind}");
    let (hub, mut rx) = hub(&env, &["--fault", &mutation]);
    hub.connect("s").await.unwrap().outcome.unwrap();
    let snapshot = hub.snapshot();
    call(
        &hub,
        &snapshot,
        "mcp__s__set",
        json!({"key": "k", "value": "v"}),
    )
    .await
    .unwrap();
    let event = wait_for(&mut rx, |e| matches!(e, McpEvent::Revoked { .. })).await;
    let McpEvent::Revoked { cause, tools, .. } = event else {
        unreachable!()
    };
    assert_eq!(tools.len(), 5, "every tool of the connection at once");
    assert_eq!(hub.snapshot().tools().len(), 0);
    assert_eq!(
        call(&hub, &snapshot, "mcp__s__lookup", json!({"key": "apple"})).await,
        Err(ToolErrorCode::McpNotConnected)
    );
    let state = state(&hub);
    hub.shutdown().await;
    env.assert_no_leaks();
    (cause, state)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_added_or_removed_breaks_exact_equality_and_revokes_the_connection() {
    let (cause, state) = rejected_after("add").await;
    let RevokeCause::PolicyViolation {
        code,
        message,
        changes,
        definition_changes,
    } = cause
    else {
        panic!("{cause:?}")
    };
    assert_eq!(code, ConnectErrorCode::PolicyMismatch);
    assert_eq!(changes.added, ["extra"]);
    assert!(definition_changes.is_empty());
    assert!(
        message.contains("published but not in the policy: `extra`"),
        "{message}"
    );
    let AliasState::Rejected { code, message } = state else {
        panic!("{state:?}")
    };
    assert_eq!(code, ConnectErrorCode::PolicyMismatch);
    assert!(message.contains("added `extra`"), "{message}");

    let (cause, _) = rejected_after("remove").await;
    let RevokeCause::PolicyViolation { changes, .. } = cause else {
        panic!("{cause:?}")
    };
    assert_eq!(changes.removed, ["reset"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_schema_that_breaks_the_schema_rule_revokes_the_connection() {
    let (cause, _) = rejected_after("bad-schema").await;
    let RevokeCause::PolicyViolation { code, changes, .. } = cause else {
        panic!("{cause:?}")
    };
    assert_eq!(code, ConnectErrorCode::SchemaExternalRef);
    assert_eq!(changes.changed, ["lookup"]);
}

/// `run --json` with the scripted model: connect `s`, call `set` (the call that
/// makes the server change its tools), then a `slow` call that keeps the turn
/// open while the re-list happens. The JSON events and the session's audit log.
fn run_with_mutation(kind: &str, pin: &str) -> (Vec<Value>, Vec<Value>) {
    let env = TestEnv::new();
    let scenario = "delay_ms = 1\n[[act]]\n\
        [[act.turn]]\ntext = \"connect\"\ntool_calls = [{ name = \"connect_mcp\", arguments = { alias = \"s\" } }]\n\
        [[act.turn]]\ntext = \"change\"\ntool_calls = [{ name = \"mcp__s__set\", arguments = { key = \"k\", value = \"v\" } }]\n\
        [[act.turn]]\ntext = \"wait\"\ntool_calls = [{ name = \"mcp__s__slow\", arguments = { seconds = 3, steps = 1 } }]\n\
        [[act.turn]]\ntext = \"done\"\n";
    std::fs::write(env.path("scenario.toml"), scenario).unwrap();
    let mutation = format!("mutate-tools={kind}");
    env.config(&format!(
        "[model]\nprovider = \"scripted\"\nscenario = \"{{DIR}}/scenario.toml\"\n{}pin = \"{pin}\"\n{POLICY}",
        env.demo("s", "alpha", &["--fault", &mutation])
    ));
    let out = env
        .command(&["run", "--prompt", "go", "--json"])
        .env_remove("ANTHROPIC_API_KEY")
        .env_remove("OPENAI_API_KEY")
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        crate::common::stderr(&out)
    );
    let events: Vec<Value> = crate::common::stdout(&out)
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect();
    let session = events.last().unwrap()["session"]
        .as_str()
        .unwrap()
        .to_owned();
    let audit = std::fs::read_to_string(
        env.path("xdg-data/mcp-harness/sessions")
            .join(session)
            .join("audit.jsonl"),
    )
    .unwrap();
    let audit = audit
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect();
    env.assert_no_leaks();
    (events, audit)
}

#[test]
fn run_json_and_the_audit_log_report_a_tools_update() {
    let (events, audit) = run_with_mutation("description", "off");
    let updated: Vec<&Value> = events
        .iter()
        .filter(|e| e["event"] == "registry" && e["change"] == "updated")
        .collect();
    assert_eq!(updated.len(), 1, "{events:#?}");
    let update = updated[0];
    assert_eq!(update["alias"], "s");
    assert_eq!(update["changed"], json!(["mcp__s__lookup"]), "{update}");
    assert_eq!(update["added"], json!([]));
    assert_eq!(update["removed"], json!([]));
    assert_eq!(
        update["tools"].as_array().map(Vec::len),
        Some(5),
        "{update}"
    );
    let registered = events
        .iter()
        .find(|e| e["event"] == "registry" && e["change"] == "registered")
        .expect("registered first");
    assert!(update["version"].as_u64() > registered["version"].as_u64());
    // The audit log has the same update, with what changed.
    let record = audit
        .iter()
        .find(|r| r["event"] == "tools_changed")
        .unwrap_or_else(|| panic!("no tools_changed in {audit:#?}"));
    assert_eq!(record["alias"], "s");
    assert_eq!(record["changed"], json!(["mcp__s__lookup"]), "{record}");
    assert_eq!(record["version"], update["version"]);
    assert!(record["ts"].is_string());
}

#[test]
fn run_json_and_the_audit_log_report_a_policy_violation_with_what_changed() {
    let (events, audit) = run_with_mutation("add", "tofu");
    let revoked: Vec<&Value> = events
        .iter()
        .filter(|e| e["event"] == "registry" && e["change"] == "revoked")
        .collect();
    assert_eq!(revoked.len(), 1, "{events:#?}");
    let cause = &revoked[0]["cause"];
    assert_eq!(cause["kind"], "policy_violation", "{cause}");
    assert_eq!(cause["code"], "policy_mismatch", "{cause}");
    assert_eq!(cause["changes"]["added"], json!(["extra"]), "{cause}");
    assert_eq!(cause["changes"]["removed"], json!([]));
    assert!(
        cause["message"]
            .as_str()
            .is_some_and(|m| m.contains("`extra`")),
        "{cause}"
    );
    assert_eq!(revoked[0]["tools"].as_array().map(Vec::len), Some(5));
    // Nothing was updated: the new set was rejected as a whole.
    assert!(
        !events.iter().any(|e| e["change"] == "updated"),
        "{events:#?}"
    );
    let record = audit
        .iter()
        .find(|r| r["event"] == "revoked")
        .unwrap_or_else(|| panic!("no revoked in {audit:#?}"));
    assert_eq!(record["cause"], *cause, "{record}");
    assert_eq!(record["alias"], "s");
}
