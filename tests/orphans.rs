//! No orphans (SPEC rule 12): whether the harness is interrupted, terminated or
//! SIGKILLed, no server process it started survives.

mod common;

use std::time::{Duration, Instant};

use common::TestEnv;

#[test]
fn a_sigkilled_harness_leaves_no_server_behind() {
    let env = TestEnv::new();
    // The server ignores stdin EOF and SIGTERM and hangs silently in the call:
    // only the parent-death signal can end it.
    env.config(&format!(
        "{}[servers.s.tools]\nlookup = \"allow\"\nset = \"allow\"\nreset = \"allow\"\nfail = \"allow\"\nslow = \"allow\"\n",
        env.demo("s", "alpha", &["--fault", "ignore-term", "--fault", "hang-on-call"])
    ));
    let mut harness = env
        .command(&["call", "s", "lookup", "--args", r#"{"key": "apple"}"#])
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

/// A harness stuck in a call to a server that ignores EOF and SIGTERM.
fn stuck_call(env: &TestEnv) -> std::process::Child {
    env.config(&format!(
        "[limits]\nclose_grace_ms = 300\n{}[servers.s.tools]\nlookup = \"allow\"\nset = \"allow\"\nreset = \"allow\"\nfail = \"allow\"\nslow = \"allow\"\n",
        env.demo("s", "alpha", &["--fault", "ignore-term", "--fault", "hang-on-call", "--fault", "grandchild"])
    ));
    let child = env
        .command(&["call", "s", "lookup", "--args", r#"{"key": "apple"}"#])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    // The server and its grandchild.
    while env.tagged_processes().len() < 2 {
        assert!(Instant::now() < deadline, "server never started");
        std::thread::sleep(Duration::from_millis(50));
    }
    // Let the call reach the server.
    std::thread::sleep(Duration::from_millis(300));
    child
}

#[test]
fn ctrl_c_and_sigterm_close_everything_and_exit_128_plus_signal() {
    for (signal, code) in [("-INT", 130), ("-TERM", 143)] {
        let env = TestEnv::new();
        let mut harness = stuck_call(&env);
        let status = std::process::Command::new("kill")
            .args([signal, &harness.id().to_string()])
            .status()
            .unwrap();
        assert!(status.success());
        let status = harness.wait().unwrap();
        assert_eq!(status.code(), Some(code), "{signal}");
        env.assert_no_leaks();
    }
}
