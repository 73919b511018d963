//! `mcp-harness call` through the full pipeline against real demo-server
//! processes: validation before the wire, policy, the three failure transitions
//! (SPEC rule 8) and locally built envelopes (rule 9).

use std::time::{Duration, Instant};

use crate::common::{TestEnv, json, records, stderr};
use serde_json::{Value, json};

const POLICY: &str = "[servers.demo_alpha.tools]\nlookup = \"allow\"\nset = \"confirm\"\nreset = \"deny\"\nfail = \"allow\"\nslow = \"allow\"\n";

/// Alpha with `extra` args (and `more` table keys), recording what it receives.
fn alpha(env: &TestEnv, extra: &[&str], more: &str) -> std::path::PathBuf {
    let record = env.path("record.jsonl");
    let record_arg = record.to_string_lossy().into_owned();
    let mut args = vec!["--record", record_arg.as_str()];
    args.extend_from_slice(extra);
    env.config(&format!(
        "{}{more}{POLICY}",
        env.demo("demo_alpha", "alpha", &args)
    ));
    record
}

fn call(env: &TestEnv, tool: &str, args: &str, flags: &[&str]) -> (Option<i32>, Value) {
    let mut argv = vec!["call", "demo_alpha", tool, "--args", args, "--json"];
    argv.extend_from_slice(flags);
    let out = env.run(&argv);
    (out.status.code(), json(&out))
}

#[test]
fn an_allowed_call_returns_the_content() {
    let env = TestEnv::new();
    alpha(&env, &[], "");
    let (code, out) = call(&env, "lookup", r#"{"key":"apple"}"#, &[]);
    assert_eq!(code, Some(0), "{out}");
    assert_eq!(out["ok"], true);
    assert_eq!(out["truncated"], false);
    assert!(
        out["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("apple = red"),
        "{out}"
    );
    // The exposed name works too.
    let (code, _) = call(&env, "mcp__demo_alpha__lookup", r#"{"key":"lime"}"#, &[]);
    assert_eq!(code, Some(0));
    env.assert_no_leaks();
}

#[test]
fn invalid_arguments_never_reach_the_server() {
    let env = TestEnv::new();
    let record = alpha(&env, &[], "");
    let (code, out) = call(&env, "lookup", r#"{"key": 7, "extra": true}"#, &[]);
    assert_eq!(code, Some(1));
    assert_eq!(out["error"]["code"], "mcp_invalid_arguments", "{out}");
    let paths: Vec<&str> = out["error"]["errors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["instance_path"].as_str().unwrap())
        .collect();
    assert!(paths.contains(&"/key") && paths.contains(&""), "{paths:?}");
    assert!(
        records(&record).iter().all(|r| r["event"] != "call"),
        "the server saw a call: {:?}",
        records(&record)
    );
    // A valid call is recorded, proving the recorder works.
    call(&env, "lookup", r#"{"key":"plum"}"#, &[]);
    assert!(
        records(&record)
            .iter()
            .any(|r| r["event"] == "call" && r["arguments"]["key"] == "plum")
    );
}

#[test]
fn confirm_needs_approval_and_deny_is_refused() {
    let env = TestEnv::new();
    let record = alpha(&env, &[], "");
    let (code, out) = call(&env, "set", r#"{"key":"apple","value":"blue"}"#, &[]);
    assert_eq!(code, Some(1));
    assert_eq!(out["error"]["code"], "mcp_permission_denied");
    assert!(records(&record).is_empty());
    let (code, out) = call(&env, "set", r#"{"key":"apple","value":"blue"}"#, &["--yes"]);
    assert_eq!(code, Some(0), "{out}");
    let (code, out) = call(&env, "reset", "{}", &["--yes"]);
    assert_eq!(code, Some(1));
    assert_eq!(out["error"]["code"], "mcp_permission_denied", "{out}");
    assert!(
        out["error"]["message"]
            .as_str()
            .unwrap()
            .contains("denied by local policy")
    );
}

#[test]
fn remote_errors_are_enveloped_without_the_servers_text() {
    let env = TestEnv::new();
    alpha(&env, &[], "");
    let (code, out) = call(&env, "fail", "{}", &[]);
    assert_eq!(code, Some(1));
    let error = &out["error"];
    assert_eq!(error["code"], "mcp_remote_error");
    assert_eq!(error["alias"], "demo_alpha");
    assert_eq!(error["tool"], "mcp__demo_alpha__fail");
    let envelope = error.to_string();
    assert!(
        !envelope.contains("sk-demo") && !envelope.contains("credentials.json"),
        "leak: {envelope}"
    );
    // The operator still sees it, marked as server output, outside the envelope.
    assert!(
        out["server_output"]
            .as_str()
            .unwrap()
            .contains("sk-demo-0123456789abcdef")
    );
}

#[test]
fn a_hang_times_out_cancels_and_kills_the_server() {
    let env = TestEnv::new();
    let record = alpha(
        &env,
        &["--fault", "hang-on-call"],
        "call_timeout_ms = 1500\n",
    );
    let (code, out) = call(&env, "lookup", r#"{"key":"apple"}"#, &[]);
    assert_eq!(code, Some(1));
    assert_eq!(out["error"]["code"], "mcp_timeout", "{out}");
    assert!(
        out["error"]["message"]
            .as_str()
            .unwrap()
            .contains("1500 ms")
    );
    let seen = records(&record);
    assert!(seen.iter().any(|r| r["event"] == "call"), "{seen:?}");
    assert!(
        seen.iter().any(|r| r["event"] == "cancelled"),
        "no notifications/cancelled: {seen:?}"
    );
    env.assert_no_leaks();
}

#[test]
fn a_crash_mid_call_is_connection_lost_long_before_the_timeout() {
    for fault in ["crash-on-call", "crash-on-call-partial"] {
        let env = TestEnv::new();
        alpha(&env, &["--fault", fault], "call_timeout_ms = 120000\n");
        let started = Instant::now();
        let (code, out) = call(&env, "lookup", r#"{"key":"apple"}"#, &[]);
        assert_eq!(code, Some(1));
        assert_eq!(
            out["error"]["code"], "mcp_connection_lost",
            "{fault}: {out}"
        );
        assert!(
            out["error"]["message"]
                .as_str()
                .unwrap()
                .contains("exited with status 3"),
            "{out}"
        );
        // Generous bound: the timeout is 120 s; the crash is noticed at once.
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "{fault} took {:?}",
            started.elapsed()
        );
        env.assert_no_leaks();
    }
}

#[test]
fn a_large_result_is_cut_for_the_model_and_saved_whole() {
    use std::os::unix::fs::PermissionsExt as _;
    let env = TestEnv::new();
    alpha(&env, &["--fault", "huge-result=324000"], "");
    let out = env.run(&[
        "call",
        "demo_alpha",
        "lookup",
        "--args",
        r#"{"key":"apple"}"#,
        "--json",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let out = json(&out);
    assert_eq!(out["truncated"], true);
    let content = out["content"].as_array().unwrap();
    let shown: String = content[..content.len() - 1]
        .iter()
        .map(|b| b["text"].as_str().unwrap_or(""))
        .collect();
    assert!((99_997..=100_000).contains(&shown.len()), "{}", shown.len());
    let notice = content.last().unwrap()["text"].as_str().unwrap();
    assert!(
        notice.contains("the result has 324000 bytes of text"),
        "{notice}"
    );
    assert!(
        notice.contains(&format!("\"offset\": {}", shown.len())),
        "{notice}"
    );
    // The whole text is in the session's results/, owner-only.
    let name = notice
        .split("results/")
        .nth(1)
        .unwrap()
        .split(';')
        .next()
        .unwrap();
    let sessions = env.path("xdg-data/mcp-harness/sessions");
    let session = std::fs::read_dir(&sessions)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let file = session.join("results").join(name);
    let whole = std::fs::read_to_string(&file).unwrap();
    assert_eq!(whole.len(), 324_000);
    assert!(whole.starts_with(&shown));
    let mode = std::fs::metadata(&file).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600);
    env.assert_no_leaks();
}

#[test]
fn server_text_cannot_reach_the_terminal_raw() {
    let env = TestEnv::new();
    alpha(&env, &["--fault", "escapes"], "");
    for json_flag in [true, false] {
        let mut argv = vec![
            "call",
            "demo_alpha",
            "lookup",
            "--args",
            r#"{"key":"apple"}"#,
        ];
        if json_flag {
            argv.push("--json");
        }
        let out = env.run(&argv);
        for stream in [&out.stdout, &out.stderr] {
            let text = String::from_utf8_lossy(stream);
            assert!(
                !text.contains('\u{1b}') && !text.contains('\u{9b}') && !text.contains('\u{202e}'),
                "raw control in {text:?}"
            );
        }
        assert!(!String::from_utf8_lossy(&out.stdout).trim().is_empty());
    }
    let out = env.run(&["check"]);
    let all = format!("{}{}", crate::common::stdout(&out), stderr(&out));
    assert!(
        !all.contains('\u{1b}') && !all.contains('\u{9b}') && !all.contains('\u{202e}'),
        "{all:?}"
    );
}

#[test]
fn usage_errors_exit_2() {
    let env = TestEnv::new();
    alpha(&env, &[], "");
    assert_eq!(
        env.run(&["call", "demo_alpha", "lookup", "--args", "{nope"])
            .status
            .code(),
        Some(2)
    );
    let out = env.run(&["call", "nosuch", "lookup"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("known aliases: demo_alpha"),
        "{}",
        stderr(&out)
    );
    // A mistyped tool: not a usage error (the server decides what exists), but
    // the message lists what it does publish.
    let out = env.run(&["call", "demo_alpha", "lokup"]);
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(err.contains("mcp_unknown_tool"), "{err}");
    assert!(
        err.contains("`demo_alpha` publishes: lookup, set, reset, fail, slow"),
        "{err}"
    );
    env.assert_no_leaks();
}

#[test]
fn a_rejected_or_failed_connection_has_the_same_output_shape() {
    let env = TestEnv::new();
    // The policy lacks `slow`: the connection is rejected before any call.
    env.config(&format!(
        "{}{}",
        env.demo("demo_alpha", "alpha", &[]),
        POLICY.replace("slow = \"allow\"\n", "")
    ));
    let (code, out) = call(&env, "lookup", r#"{"key":"apple"}"#, &[]);
    assert_eq!(code, Some(1), "{out}");
    assert_eq!(out["ok"], false);
    let error = &out["error"];
    assert_eq!(error["code"], "policy_mismatch");
    assert_eq!(error["alias"], "demo_alpha");
    assert_eq!(error["policy_diff"]["missing"], json!(["slow"]));
    assert!(out.get("server_output").is_none(), "{out}");

    // A server that dies at start: its last words are one string, as on a tool error.
    env.config(
        "[servers.demo_alpha]\ncommand = \"sh\"\nargs = [\"-c\", \"echo 'cannot open database' >&2; exit 3\"]\n",
    );
    let (code, out) = call(&env, "lookup", "{}", &[]);
    assert_eq!(code, Some(1), "{out}");
    assert_eq!(out["error"]["code"], "initialize_failed");
    assert_eq!(out["server_output"], "cannot open database");
    env.assert_no_leaks();
}

#[test]
fn every_content_block_prints_as_the_model_sees_it() {
    let env = TestEnv::new();
    alpha(&env, &["--fault", "content-blocks"], "");
    let out = env.run(&[
        "call",
        "demo_alpha",
        "lookup",
        "--args",
        r#"{"key":"apple"}"#,
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = crate::common::stdout(&out);
    let expected = "apple: every kind of block follows\n\
        [image] image/png, 70 bytes\n\
        [audio] audio/wav, 3 bytes\n\
        [resource link] colours <demo://alpha/colours> (text/plain)\n\
        [resource] <demo://alpha/readme> (text/markdown)\n\
        # Alpha\n\
        Fruit colours.\n\
        [resource] <demo://alpha/logo> (image/png), 70 bytes of binary data\n";
    assert_eq!(text, expected);
    assert!(!text.contains("iVBORw0KGgo"), "no base64 on the terminal");
    // --json keeps every block whole.
    let (code, out) = call(&env, "lookup", r#"{"key":"apple"}"#, &[]);
    assert_eq!(code, Some(0));
    let blocks = out["content"].as_array().unwrap();
    assert_eq!(blocks.len(), 6);
    assert!(
        blocks[1]["data"]
            .as_str()
            .unwrap()
            .starts_with("iVBORw0KGgo")
    );
    assert_eq!(blocks[3]["uri"], "demo://alpha/colours");
    env.assert_no_leaks();
}
