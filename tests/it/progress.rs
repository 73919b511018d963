//! Progress extends the deadline: a call that keeps reporting progress runs
//! past `call_timeout_ms`, never past `max_call_ms`; without
//! `reset_timeout_on_progress` it ends at `call_timeout_ms`; headless `call`
//! shows each notification on stderr.

use crate::common::{TestEnv, json, stderr};

const POLICY: &str = "[servers.s.tools]\nlookup = \"allow\"\nset = \"allow\"\nreset = \"allow\"\nfail = \"allow\"\nslow = \"allow\"\n";

/// `slow` for 6 s in 12 steps: a progress notification every 0.5 s, four
/// times within the 2 s call timeout, however loaded the machine.
fn slow(env: &TestEnv, limits: &str) -> std::process::Output {
    env.config(&format!(
        "[limits]\ncall_timeout_ms = 2000\n{limits}{}{POLICY}",
        env.demo("s", "alpha", &[])
    ));
    env.run(&[
        "call",
        "s",
        "slow",
        "--args",
        r#"{"seconds": 6, "steps": 12}"#,
        "--json",
    ])
}

#[test]
fn progress_restarts_the_call_timer() {
    let env = TestEnv::new();
    let out = slow(&env, "");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(json(&out)["content"][0]["text"], "done after 6s");
    let err = stderr(&out);
    let lines: Vec<&str> = err.lines().filter(|l| l.starts_with("progress ")).collect();
    assert_eq!(
        lines.first(),
        Some(&"progress 1/12 (8%) step 1 of 12"),
        "{err}"
    );
    assert_eq!(
        lines.last(),
        Some(&"progress 12/12 (100%) step 12 of 12"),
        "{err}"
    );
    env.assert_no_leaks();
}

#[test]
fn without_reset_the_call_ends_at_its_timeout() {
    let env = TestEnv::new();
    let out = slow(&env, "reset_timeout_on_progress = false\n");
    assert_eq!(out.status.code(), Some(1));
    let out = json(&out);
    assert_eq!(out["error"]["code"], "mcp_timeout", "{out}");
    assert!(
        out["error"]["message"]
            .as_str()
            .unwrap()
            .contains("within 2000 ms"),
        "{out}"
    );
    env.assert_no_leaks();
}

#[test]
fn max_call_ms_bounds_a_call_that_keeps_reporting_progress() {
    let env = TestEnv::new();
    let out = slow(&env, "max_call_ms = 3000\n");
    assert_eq!(out.status.code(), Some(1));
    let out = json(&out);
    assert_eq!(out["error"]["code"], "mcp_timeout", "{out}");
    let message = out["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("still running after 3000 ms (max_call_ms)"),
        "{message}"
    );
    env.assert_no_leaks();
}
