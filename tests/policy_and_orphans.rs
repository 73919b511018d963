//! `policy ALIAS` as the operator's one step to exact equality (SPEC rule 5), and
//! no orphans when the harness itself is SIGKILLed (rule 12).

mod common;

use std::time::{Duration, Instant};

use common::{TestEnv, json, stdout};

#[test]
fn the_printed_policy_block_makes_check_pass() {
    let env = TestEnv::new();
    let server = env.demo("s", "alpha", &["--toolset", "weird-names"]);
    env.config(&server);
    // Without a policy the connection is rejected…
    let before = json(&env.run(&["check", "--json"]));
    assert_eq!(before["servers"][0]["error"]["code"], "policy_mismatch");
    // …`policy` prints exactly what the server publishes, every tool "confirm"…
    let out = env.run(&["policy", "s"]);
    assert_eq!(out.status.code(), Some(0), "{}", common::stderr(&out));
    let block = stdout(&out);
    let parsed: toml::Table = toml::from_str(&block).expect("valid TOML");
    let tools = parsed["servers"]["s"]["tools"].as_table().unwrap();
    let mut names: Vec<&str> = tools.keys().map(String::as_str).collect();
    names.sort();
    assert_eq!(names, ["déjà-vu", "files/read.all", "get value"]);
    assert!(tools.values().all(|v| v.as_str() == Some("confirm")));
    // …and pasting it in is all it takes.
    env.config(&format!("{server}{block}"));
    let after = json(&env.run(&["check", "--json"]));
    assert_eq!(after["servers"][0]["status"], "ready", "{after}");
    assert!(after["servers"][0]["exposed"].as_array().unwrap().iter().all(|t| t["effect"] == "confirm"));
    env.assert_no_leaks();
}

#[test]
fn a_sigkilled_harness_leaves_no_server_behind() {
    let env = TestEnv::new();
    env.config(&format!(
        "{}[servers.s.tools]\nlookup = \"allow\"\nset = \"allow\"\nreset = \"allow\"\nfail = \"allow\"\nslow = \"allow\"\n",
        env.demo("s", "alpha", &[])
    ));
    let mut harness = env
        .command(&["call", "s", "slow", "--args", r#"{"seconds": 60, "steps": 60}"#])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    while env.tagged_processes().is_empty() {
        assert!(Instant::now() < deadline, "server never started");
        std::thread::sleep(Duration::from_millis(50));
    }
    harness.kill().unwrap(); // SIGKILL: no cleanup code of ours runs.
    harness.wait().unwrap();
    env.assert_no_leaks();
}
