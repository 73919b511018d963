//! `mcp-harness bench` against real demo-server processes: every call goes
//! through the full pipeline and reaches the server; the report's shape is the
//! documented contract; what the pipeline refuses is refused before any call.

use crate::common::{TestEnv, records, stderr, stdout};
use serde_json::Value;

const POLICY: &str = "[servers.demo_alpha.tools]\nlookup = \"allow\"\nset = \"confirm\"\nreset = \"deny\"\nfail = \"allow\"\nslow = \"allow\"\n";

/// Alpha, recording every request it receives.
fn alpha(env: &TestEnv) -> std::path::PathBuf {
    let record = env.path("record.jsonl");
    let record_arg = record.to_string_lossy().into_owned();
    env.config(&format!(
        "{}{POLICY}",
        env.demo("demo_alpha", "alpha", &["--record", &record_arg])
    ));
    record
}

fn bench(env: &TestEnv, argv: &[&str]) -> (Option<i32>, Value) {
    let (code, out) = bench_raw(env, argv);
    (code, serde_json::from_str(&out).expect("one JSON object"))
}

/// The exit status and stdout, as printed.
fn bench_raw(env: &TestEnv, argv: &[&str]) -> (Option<i32>, String) {
    let mut all = vec!["bench", "demo_alpha"];
    all.extend_from_slice(argv);
    all.push("--json");
    let out = env.run(&all);
    assert!(
        !stderr(&out).contains('\r'),
        "no progress bar when stderr is not a terminal: {:?}",
        stderr(&out)
    );
    (out.status.code(), stdout(&out))
}

fn calls_of(records: &[Value], tool: &str) -> usize {
    records
        .iter()
        .filter(|r| r["event"] == "call" && r["name"] == tool)
        .count()
}

#[test]
fn every_call_goes_through_and_the_report_has_the_documented_shape() {
    let env = TestEnv::new();
    let record = alpha(&env);
    let (code, printed) = bench_raw(
        &env,
        &[
            "lookup",
            "--args",
            r#"{"key":"apple"}"#,
            "-n",
            "300",
            "-c",
            "8",
        ],
    );
    assert_eq!(code, Some(0), "{printed}");
    // The documented fields, in the documented order.
    assert!(
        printed.starts_with(
            r#"{"alias":"demo_alpha","tool":"lookup","calls":300,"ok":300,"errors":{},"concurrency":8,"latency_us":{"p50":"#
        ),
        "{printed}"
    );
    let report: Value = serde_json::from_str(&printed).unwrap();
    assert_eq!(report.as_object().unwrap().len(), 10, "{report}");
    assert_eq!(report["alias"], "demo_alpha");
    assert_eq!(report["tool"], "lookup");
    assert_eq!(report["calls"], 300);
    assert_eq!(report["ok"], 300);
    assert_eq!(report["errors"], serde_json::json!({}));
    assert_eq!(report["concurrency"], 8);
    let p = |k: &str| report["latency_us"][k].as_u64().unwrap();
    assert!(
        p("p50") > 0 && p("p50") <= p("p90") && p("p90") <= p("p99"),
        "{report}"
    );
    assert!(report["calls_per_s"].as_f64().unwrap() > 0.0, "{report}");
    // 300 calls cost this process some CPU and some switches, never none.
    assert!(
        report["cpu_us_per_call"].as_f64().unwrap() > 0.0,
        "{report}"
    );
    assert!(
        report["context_switches_per_call"].as_f64().unwrap() > 0.0,
        "{report}"
    );
    // Each call really reached the server, with its arguments.
    let seen = records(&record);
    assert_eq!(calls_of(&seen, "lookup"), 300);
    assert!(
        seen.iter()
            .filter(|r| r["event"] == "call")
            .all(|r| r["arguments"]["key"] == "apple")
    );
    env.assert_no_leaks();
}

#[test]
fn errors_are_counted_by_code_and_exit_1() {
    let env = TestEnv::new();
    alpha(&env);
    let (code, report) = bench(&env, &["fail", "-n", "40", "-c", "4"]);
    assert_eq!(code, Some(1), "{report}");
    assert_eq!(report["calls"], 40);
    assert_eq!(report["ok"], 0);
    assert_eq!(report["errors"]["mcp_remote_error"], 40, "{report}");
    // The server's own error text (a fake secret) is not in the report.
    assert!(!report.to_string().contains("sk-"), "{report}");
    env.assert_no_leaks();
}

#[test]
fn a_confirm_tool_needs_yes_and_nothing_is_called_without_it() {
    let env = TestEnv::new();
    let record = alpha(&env);
    let args = r#"{"key":"apple","value":"blue"}"#;
    let (code, out) = bench(&env, &["set", "--args", args, "-n", "50"]);
    assert_eq!(code, Some(1), "{out}");
    assert_eq!(out["ok"], false);
    assert_eq!(out["error"]["code"], "mcp_permission_denied", "{out}");
    assert_eq!(calls_of(&records(&record), "set"), 0, "nothing was called");
    let (code, report) = bench(&env, &["set", "--args", args, "-n", "50", "--yes"]);
    assert_eq!(code, Some(0), "{report}");
    assert_eq!(report["ok"], 50);
    assert_eq!(calls_of(&records(&record), "set"), 50);
    env.assert_no_leaks();
}

#[test]
fn what_every_call_would_be_refused_for_is_refused_before_any_call() {
    let env = TestEnv::new();
    let record = alpha(&env);
    // Arguments that do not match the schema.
    let (code, out) = bench(&env, &["lookup", "--args", r#"{"key":7}"#, "-n", "50"]);
    assert_eq!(code, Some(1), "{out}");
    assert_eq!(out["error"]["code"], "mcp_invalid_arguments", "{out}");
    assert_eq!(out["error"]["errors"][0]["instance_path"], "/key", "{out}");
    // A tool the policy denies, and one the server does not publish.
    let (code, out) = bench(&env, &["reset", "-n", "50", "--yes"]);
    assert_eq!(code, Some(1), "{out}");
    assert_eq!(out["error"]["code"], "mcp_permission_denied", "{out}");
    let (code, out) = bench(&env, &["nope", "-n", "50"]);
    assert_eq!(code, Some(1), "{out}");
    assert_eq!(out["error"]["code"], "mcp_unknown_tool", "{out}");
    assert!(
        records(&record).iter().all(|r| r["event"] != "call"),
        "nothing was called: {:?}",
        records(&record)
    );
    env.assert_no_leaks();
}

#[test]
fn usage_errors_exit_2_and_the_text_report_names_the_figures() {
    let env = TestEnv::new();
    alpha(&env);
    for argv in [
        &["bench", "demo_alpha", "lookup", "-n", "0"][..],
        &["bench", "demo_alpha", "lookup", "-c", "0"],
        &["bench", "demo_alpha", "lookup", "--args", "{not json"],
        &["bench", "no_such_alias", "lookup"],
    ] {
        let out = env.run(argv);
        assert_eq!(out.status.code(), Some(2), "{argv:?}: {}", stderr(&out));
    }
    let out = env.run(&[
        "bench",
        "demo_alpha",
        "lookup",
        "--args",
        r#"{"key":"apple"}"#,
        "-n",
        "20",
        "-c",
        "2",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(
        text.starts_with("20 calls of lookup on demo_alpha, 2 in flight"),
        "{text}"
    );
    for word in ["p50", "p90", "p99", "calls/s", "ok        20"] {
        assert!(text.contains(word), "{word}: {text}");
    }
    env.assert_no_leaks();
}
