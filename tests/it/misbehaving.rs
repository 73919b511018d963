//! Servers that break the protocol or behave badly, through the real binary:
//! no panic, no hang past the configured timeouts, no leaked process, nothing
//! of the server's own words in what the model gets, no raw control byte on the
//! terminal. (Crashes, hangs, malformed listings and pagination are covered in
//! call.rs and check.rs; tool-list storms in list_changed.rs; memory in memory.rs.)

use std::time::{Duration, Instant};

use crate::common::{TestEnv, json, stderr, stdout};
use serde_json::Value;

const POLICY: &str = "[servers.s.tools]\nlookup = \"allow\"\nset = \"allow\"\nreset = \"allow\"\nfail = \"allow\"\nslow = \"allow\"\n";

fn alpha(env: &TestEnv, faults: &[&str], limits: &str) {
    env.config(&format!(
        "[limits]\n{limits}{}{POLICY}",
        env.demo("s", "alpha", faults)
    ));
}

fn hostile(env: &TestEnv, scenario: &str, limits: &str) {
    env.config(&format!(
        "[limits]\n{limits}{}[servers.s.tools]\nlookup = \"allow\"\n",
        env.demo("s", "hostile", &["--scenario", scenario])
    ));
}

/// `call s lookup --json`: exit code, the JSON line, and how long it took.
fn lookup(env: &TestEnv) -> (Option<i32>, Value, Duration) {
    let started = Instant::now();
    let out = env.run(&[
        "call",
        "s",
        "lookup",
        "--args",
        r#"{"key":"apple"}"#,
        "--json",
    ]);
    let elapsed = started.elapsed();
    assert!(!stderr(&out).contains("panicked"), "{}", stderr(&out));
    (out.status.code(), json(&out), elapsed)
}

/// The envelope is built locally: nothing the server wrote on stderr is in it.
fn assert_local_envelope(out: &Value) {
    let error = out["error"].to_string();
    assert!(
        !error.contains("demo-alpha:") && !error.contains("hostile"),
        "{error}"
    );
}

#[test]
fn slow_initialize_connects_within_the_timeout_and_fails_beyond_it() {
    let env = TestEnv::new();
    alpha(
        &env,
        &["--fault", "slow-initialize=1000"],
        "connect_timeout_ms = 20000\n",
    );
    let (code, out, _) = lookup(&env);
    assert_eq!(code, Some(0), "{out}");
    alpha(
        &env,
        &["--fault", "slow-initialize=5000"],
        "connect_timeout_ms = 500\n",
    );
    let (code, out, elapsed) = lookup(&env);
    assert_eq!(
        (code, out["error"]["code"].as_str()),
        (Some(1), Some("mcp_timeout")),
        "{out}"
    );
    assert!(elapsed < Duration::from_secs(30), "{elapsed:?}");
    env.assert_no_leaks();
}

#[test]
fn non_json_lines_on_stdout_are_ignored() {
    let env = TestEnv::new();
    alpha(&env, &["--fault", "stdout-noise"], "");
    let (code, out, _) = lookup(&env);
    assert_eq!(code, Some(0), "{out}");
    env.assert_no_leaks();
    // Another server under the same alias: a directory of its own, so the
    // first server's pinned definitions do not apply (rule 14).
    let env = TestEnv::new();
    hostile(&env, "non-json-stdout", "");
    let (code, out, _) = lookup(&env);
    assert_eq!(code, Some(0), "{out}");
    env.assert_no_leaks();
}

#[test]
fn an_answer_with_the_wrong_id_is_never_taken_for_ours() {
    let env = TestEnv::new();
    hostile(
        &env,
        "wrong-id",
        "call_timeout_ms = 1500\nclose_grace_ms = 300\n",
    );
    let (code, out, elapsed) = lookup(&env);
    assert_eq!(code, Some(1));
    assert_eq!(out["error"]["code"], "mcp_timeout", "{out}");
    assert!(!out.to_string().contains("another request"), "{out}");
    assert!(elapsed < Duration::from_secs(30), "{elapsed:?}");
    assert_local_envelope(&out);
    env.assert_no_leaks();
}

#[test]
fn a_50_mb_result_ends_the_connection_at_once_with_a_reason() {
    let env = TestEnv::new();
    alpha(
        &env,
        &["--fault", "huge-result=50000000"],
        "call_timeout_ms = 120000\n",
    );
    let (code, out, elapsed) = lookup(&env);
    assert_eq!(code, Some(1));
    assert_eq!(out["error"]["code"], "mcp_connection_lost", "{out}");
    let message = out["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("larger than 16 MiB, its max_message_bytes"),
        "{message}"
    );
    assert!(
        elapsed < Duration::from_secs(100),
        "not the call timeout: {elapsed:?}"
    );
    env.assert_no_leaks();
}

#[test]
fn a_flood_on_stderr_neither_blocks_the_server_nor_reaches_the_output() {
    let env = TestEnv::new();
    alpha(&env, &["--fault", "stderr-flood=100000000"], "");
    let (code, out, _) = lookup(&env);
    assert_eq!(code, Some(0), "{out}");
    assert!(!out.to_string().contains("flood line"), "{out}");
    env.assert_no_leaks();
}

#[test]
fn a_server_deaf_to_eof_and_sigterm_is_killed_after_the_grace_periods() {
    let env = TestEnv::new();
    alpha(&env, &crate::common::STUBBORN, "close_grace_ms = 300\n");
    let (code, out, elapsed) = lookup(&env);
    assert_eq!(code, Some(0), "{out}");
    assert!(elapsed < Duration::from_secs(30), "{elapsed:?}");
    env.assert_no_leaks();
}

#[test]
fn escapes_in_every_server_controlled_field_stay_inert() {
    let env = TestEnv::new();
    // Names, versions, descriptions, titles, instructions, inputSchema texts (titles,
    // descriptions, enum values), results, an `isError` text, a JSON-RPC
    // `error.message` (reset), stderr.
    alpha(
        &env,
        &["--fault", "escapes", "--fault", "rpc-error-on=reset"],
        "",
    );
    // A value outside the tainted enum: the validation error quotes the enum.
    let bad_tone = r#"{"key":"apple","tone":"quiet"}"#;
    let mut outputs = vec![
        env.run(&["check"]),
        env.run(&["check", "--json"]),
        env.run(&["policy", "s"]),
        env.run(&["call", "s", "lookup", "--args", r#"{"key":"apple"}"#]),
        env.run(&["call", "s", "fail", "--json"]),
        env.run(&["call", "s", "fail"]),
        env.run(&["call", "s", "reset", "--json"]),
        env.run(&["call", "s", "reset"]),
        env.run(&["call", "s", "lookup", "--args", bad_tone, "--json"]),
        env.run(&["call", "s", "lookup", "--args", bad_tone]),
    ];
    // The payload really went through each new field (the checks below are not vacuous).
    let rpc = json(&outputs[6]);
    assert_eq!(rpc["error"]["code"], "mcp_remote_error", "{rpc}");
    assert!(
        rpc["server_output"]
            .as_str()
            .is_some_and(|s| s.contains("]0;pwned")),
        "{rpc}"
    );
    assert!(!rpc["error"].to_string().contains("pwned"), "{rpc}");
    let invalid = json(&outputs[8]);
    assert_eq!(
        invalid["error"]["code"], "mcp_invalid_arguments",
        "{invalid}"
    );
    assert!(
        invalid["error"]["errors"].to_string().contains("pwned"),
        "{invalid}"
    );
    // A server that fails to start: its stderr tail is shown, inert.
    alpha(
        &env,
        &["--fault", "escapes", "--fault", "hang-on-initialize"],
        "connect_timeout_ms = 1500\n",
    );
    outputs.push(env.run(&["check"]));
    outputs.push(env.run(&["check", "--json"]));
    let report = json(outputs.last().unwrap());
    assert!(
        !report["servers"][0]["server_output"]
            .as_array()
            .unwrap()
            .is_empty(),
        "{report}"
    );
    for out in &outputs {
        let all = format!("{}{}", stdout(out), stderr(out));
        for bad in ['\u{1b}', '\u{7}', '\u{9b}', '\u{202e}'] {
            assert!(!all.contains(bad), "raw {bad:?} in {all:?}");
        }
    }
    env.assert_no_leaks();
}

#[test]
fn hostile_tool_names_stay_inert_and_the_printed_policy_still_matches() {
    let env = TestEnv::new();
    let server = env.demo("s", "alpha", &["--toolset", "escape-names"]);
    env.config(&server);
    let policy = env.run(&["policy", "s"]);
    assert!(policy.status.success(), "{}", stderr(&policy));
    env.config(&format!("{server}{}", stdout(&policy)));
    let outputs = [
        policy,
        env.run(&["check"]),
        env.run(&["check", "--json"]),
        env.run(&[
            "call",
            "s",
            "mcp__s__rev_esrever",
            "--args",
            r#"{"key":"k"}"#,
        ]),
    ];
    let report = json(&outputs[2]);
    assert_eq!(report["servers"][0]["status"], "ready", "{report}");
    for out in &outputs {
        let all = format!("{}{}", stdout(out), stderr(out));
        for bad in ['\u{1b}', '\u{9b}', '\u{202e}'] {
            assert!(!all.contains(bad), "raw {bad:?} in {all:?}");
        }
    }
    env.assert_no_leaks();
}
