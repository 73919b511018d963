//! Which MCP revision a connection speaks (issue 11, deliverables 1, 2, 8):
//! `protocol = "auto"` probes with `server/discover` and falls back to the
//! `initialize` handshake on the same pipes; a configured revision is held to;
//! a server that answers a revision we did not offer, or speaks none we do,
//! fails with `protocol_version_mismatch`. Over stdio and Streamable HTTP, with
//! the demo servers in each of their three modes and with hostile servers that
//! claim one revision and answer like another.

use std::time::{Duration, Instant};

use serde_json::Value;

use crate::common::hubs::http_demo;
use crate::common::{TestEnv, json, stderr};

const LOOKUP: &str = "[servers.{ALIAS}.tools]\nlookup = \"allow\"\nset = \"allow\"\nreset = \"allow\"\nfail = \"allow\"\nslow = \"allow\"\n";

fn policy(alias: &str) -> String {
    LOOKUP.replace("{ALIAS}", alias)
}

/// A demo server speaking `mode`, with `protocol = choice` when given.
fn demo(env: &TestEnv, alias: &str, mode: &str, choice: Option<&str>) -> String {
    let mut block = env.demo(alias, "alpha", &["--protocol", mode]);
    if let Some(choice) = choice {
        block.push_str(&format!("protocol = \"{choice}\"\n"));
    }
    block + &policy(alias)
}

/// `check --json`'s entry for `alias`.
fn checked<'a>(report: &'a Value, alias: &str) -> &'a Value {
    report["servers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["alias"] == alias)
        .unwrap_or_else(|| panic!("no {alias} in {report}"))
}

fn lookup(env: &TestEnv, alias: &str) -> Value {
    let out = env.run(&[
        "call",
        alias,
        "lookup",
        "--args",
        r#"{"key":"apple"}"#,
        "--json",
    ]);
    assert!(!stderr(&out).contains("panicked"), "{}", stderr(&out));
    json(&out)
}

#[test]
fn auto_speaks_the_newest_revision_each_demo_server_offers_over_stdio() {
    let env = TestEnv::new();
    env.config(&format!(
        "{}{}{}",
        demo(&env, "modern", "2026-07-28", None),
        demo(&env, "dual", "both", None),
        demo(&env, "legacy", "2025-11-25", None),
    ));
    let out = env.run(&["check", "--json"]);
    let report = json(&out);
    assert_eq!(out.status.code(), Some(0), "{report}");
    for (alias, revision) in [
        ("modern", "2026-07-28"),
        ("dual", "2026-07-28"),
        ("legacy", "2025-11-25"),
    ] {
        let s = checked(&report, alias);
        assert_eq!(s["status"], "ready", "{s}");
        assert_eq!(s["server"]["protocol_version"], revision, "{alias}: {s}");
        let line = lookup(&env, alias);
        assert_eq!(line["ok"], true, "{alias}: {line}");
        assert!(line["content"][0]["text"].as_str().unwrap().contains("red"));
    }
    env.assert_no_leaks();
}

#[test]
fn a_configured_revision_is_held_to_and_a_server_without_it_is_a_mismatch() {
    let env = TestEnv::new();
    env.config(&format!(
        "{}{}{}{}",
        demo(&env, "old_on_dual", "both", Some("2025-11-25")),
        demo(&env, "new_on_dual", "both", Some("2026-07-28")),
        demo(&env, "new_on_legacy", "2025-11-25", Some("2026-07-28")),
        demo(&env, "old_on_modern", "2026-07-28", Some("2025-11-25")),
    ));
    let report = json(&env.run(&["check", "--json"]));
    assert_eq!(
        checked(&report, "old_on_dual")["server"]["protocol_version"],
        "2025-11-25"
    );
    assert_eq!(
        checked(&report, "new_on_dual")["server"]["protocol_version"],
        "2026-07-28"
    );
    for (alias, offered, supported) in [
        ("new_on_legacy", "only 2026-07-28", "`2025-11-25`"),
        ("old_on_modern", "2025-11-25 … 2024-11-05", "`2026-07-28`"),
    ] {
        let s = checked(&report, alias);
        assert_eq!(s["status"], "failed", "{s}");
        assert_eq!(s["error"]["code"], "protocol_version_mismatch", "{s}");
        let message = s["error"]["message"].as_str().unwrap();
        assert!(message.contains(offered), "{alias}: {message}");
        assert!(message.contains(supported), "{alias}: {message}");
        assert!(
            s["error"]["hint"].as_str().unwrap().contains("`protocol`"),
            "{s}"
        );
    }
    env.assert_no_leaks();
}

#[test]
fn a_protocol_value_the_harness_does_not_know_is_a_config_error() {
    let env = TestEnv::new();
    env.config(&format!(
        "{}protocol = \"2024-01-01\"\n",
        env.demo("s", "alpha", &[])
    ));
    let out = env.run(&["check"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let text = stderr(&out);
    assert!(text.contains("protocol"), "{text}");
    assert!(text.contains("2026-07-28"), "{text}");
}

#[test]
fn auto_negotiates_over_streamable_http_in_each_mode() {
    let env = TestEnv::new();
    let mut children = Vec::new();
    let mut config = String::new();
    for (alias, mode) in [
        ("modern", "2026-07-28"),
        ("dual", "both"),
        ("legacy", "2025-11-25"),
    ] {
        let (child, url) = http_demo(&env, "alpha", &["--protocol", mode]);
        children.push(child);
        config.push_str(&format!(
            "[servers.{alias}]\nurl = \"{url}\"\n{}",
            policy(alias)
        ));
    }
    env.config(&config);
    let report = json(&env.run(&["check", "--json"]));
    for (alias, revision) in [
        ("modern", "2026-07-28"),
        ("dual", "2026-07-28"),
        ("legacy", "2025-11-25"),
    ] {
        let s = checked(&report, alias);
        assert_eq!(s["status"], "ready", "{s}");
        assert_eq!(s["server"]["protocol_version"], revision, "{alias}: {s}");
        let line = lookup(&env, alias);
        assert_eq!(line["ok"], true, "{alias}: {line}");
    }
    for mut child in children {
        let _ = child.kill();
        let _ = child.wait();
    }
}

/// `demo-server hostile --scenario NAME`, one lookup tool.
fn hostile(env: &TestEnv, scenario: &str) {
    env.config(&format!(
        "[limits]\ndiscover_timeout_ms = 500\nconnect_timeout_ms = 10000\n{}[servers.s.tools]\nlookup = \"allow\"\n",
        env.demo("s", "hostile", &["--scenario", scenario])
    ));
}

#[test]
fn a_server_silent_on_discover_gets_the_handshake_on_the_same_pipes() {
    let env = TestEnv::new();
    hostile(&env, "silent-discover");
    let started = Instant::now();
    let report = json(&env.run(&["check", "--json"]));
    let s = checked(&report, "s");
    assert_eq!(s["status"], "ready", "{s}");
    assert_eq!(s["server"]["protocol_version"], "2025-11-25");
    // One process: the server that ignored the probe is the one that answered.
    assert_eq!(s["server"]["name"], "hostile (saw server/discover)", "{s}");
    assert!(started.elapsed() < Duration::from_secs(8));
    assert_eq!(lookup(&env, "s")["ok"], true);
    env.assert_no_leaks();
}

#[test]
fn a_discover_answer_without_versions_means_a_legacy_server() {
    let env = TestEnv::new();
    hostile(&env, "discover-without-versions");
    let report = json(&env.run(&["check", "--json"]));
    let s = checked(&report, "s");
    assert_eq!(s["status"], "ready", "{s}");
    assert_eq!(s["server"]["protocol_version"], "2025-11-25");
    env.assert_no_leaks();
}

#[test]
fn a_handshake_answered_with_2026_07_28_is_a_mismatch() {
    let env = TestEnv::new();
    hostile(&env, "handshake-claims-stateless");
    let line = lookup(&env, "s");
    assert_eq!(line["error"]["code"], "protocol_version_mismatch", "{line}");
    let message = line["error"]["message"].as_str().unwrap();
    assert!(message.contains("offered 2025-11-25"), "{message}");
    assert!(message.contains("answered with `2026-07-28`"), "{message}");
    env.assert_no_leaks();
}

#[test]
fn answers_of_the_other_era_fail_the_call_and_keep_the_connection() {
    for (scenario, says) in [
        ("input-on-handshake", "InputRequiredResult"),
        ("old-task-on-stateless", "task in the shape of 2025-11-25"),
    ] {
        let env = TestEnv::new();
        hostile(&env, scenario);
        let line = lookup(&env, "s");
        assert_eq!(line["error"]["code"], "mcp_remote_error", "{line}");
        let message = line["error"]["message"].as_str().unwrap();
        assert!(message.contains(says), "{scenario}: {message}");
        assert!(message.contains("the connection is kept"), "{message}");
        assert!(!message.contains("hostile"), "{message}");
        env.assert_no_leaks();
    }
}
