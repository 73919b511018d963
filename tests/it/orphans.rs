//! No orphans (SPEC rule 12): whichever way `check`, `call` or `run` ends —
//! normally, Ctrl-C, SIGTERM, a panic, or SIGKILL of the harness itself — no
//! process the harness started survives, nor anything those processes started:
//! here a server that ignores stdin EOF and SIGTERM, with one grandchild in its
//! process group and one that called `setsid()` to escape it.

use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use crate::common::TestEnv;

const POLICY: &str = "[servers.s.tools]\nlookup = \"allow\"\nset = \"allow\"\nreset = \"allow\"\nfail = \"allow\"\nslow = \"allow\"\n";

#[derive(Debug, Clone, Copy, PartialEq)]
enum Cmd {
    Check,
    Call,
    Run,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Exit {
    /// The command finishes by itself while the server and its grandchildren run.
    Normal,
    CtrlC,
    Sigterm,
    /// A panic on the harness's main thread (test-only trigger: SIGUSR1).
    Panic,
    /// No cleanup code of the harness runs at all.
    Sigkill,
}

/// The shim, the server and its two grandchildren.
const PROCESSES: usize = 4;

fn start(env: &TestEnv, cmd: Cmd, exit: Exit) -> Child {
    // Normal: slow enough to see every process up; otherwise stuck for good.
    let stuck = exit != Exit::Normal;
    let mut faults = crate::common::STUBBORN.to_vec();
    match (cmd, stuck) {
        (Cmd::Check, true) => faults.extend(["--fault", "hang-on-initialize"]),
        (Cmd::Check, false) => faults.extend(["--fault", "slow-initialize=1500"]),
        (_, true) => faults.extend(["--fault", "hang-on-call"]),
        (_, false) => {}
    }
    let slow = r#"{"seconds": 1.5, "steps": 1}"#;
    let scenario = format!(
        "delay_ms = 1\n[[act]]\n[[act.turn]]\ntext = \"connect\"\ntool_calls = [{{ name = \"connect_mcp\", arguments = {{ alias = \"s\" }} }}]\n\
         [[act.turn]]\ntext = \"call\"\ntool_calls = [{{ name = \"mcp__s__{}\", arguments = {} }}]\n[[act.turn]]\ntext = \"done\"\n",
        if stuck { "lookup" } else { "slow" },
        if stuck {
            r#"{ key = "apple" }"#
        } else {
            r#"{ seconds = 1.5, steps = 1 }"#
        },
    );
    std::fs::write(env.path("scenario.toml"), scenario).unwrap();
    env.config(&format!(
        "[limits]\nclose_grace_ms = 300\nconnect_timeout_ms = 60000\ncall_timeout_ms = 60000\n\
         [model]\nprovider = \"scripted\"\nscenario = \"{{DIR}}/scenario.toml\"\n{}{POLICY}",
        env.demo("s", "alpha", &faults)
    ));
    let args: Vec<&str> = match cmd {
        Cmd::Check => vec!["check"],
        Cmd::Call if stuck => vec!["call", "s", "lookup", "--args", r#"{"key":"apple"}"#],
        Cmd::Call => vec!["call", "s", "slow", "--args", slow],
        Cmd::Run => vec!["run", "--prompt", "go"],
    };
    let mut command = env.command(&args);
    command.stdout(Stdio::null()).stderr(Stdio::null());
    if exit == Exit::Panic {
        command.env("MCP_HARNESS_TEST_PANIC_ON_SIGUSR1", "1");
    }
    command.spawn().expect("spawn the harness")
}

fn wait_for_processes(env: &TestEnv, harness: &mut Child) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while env.tagged_processes().len() < PROCESSES {
        if let Ok(Some(status)) = harness.try_wait() {
            panic!("the harness ended ({status}) before every process was up");
        }
        assert!(
            Instant::now() < deadline,
            "the server and its grandchildren never all started: {:?}",
            env.tagged_processes()
        );
        std::thread::sleep(Duration::from_millis(25));
    }
}

fn signal(harness: &Child, name: &str) {
    let status = std::process::Command::new("kill")
        .args([name, &harness.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
}

fn exercise(cmd: Cmd, exit: Exit) {
    let env = TestEnv::new();
    let mut harness = start(&env, cmd, exit);
    wait_for_processes(&env, &mut harness);
    match exit {
        Exit::Normal => {}
        Exit::CtrlC => signal(&harness, "-INT"),
        Exit::Sigterm => signal(&harness, "-TERM"),
        Exit::Panic => signal(&harness, "-USR1"),
        Exit::Sigkill => harness.kill().unwrap(),
    }
    let status = harness.wait().unwrap();
    use std::os::unix::process::ExitStatusExt as _;
    let ok = match exit {
        Exit::Normal => status.success(),
        Exit::CtrlC => status.code() == Some(130),
        Exit::Sigterm => status.code() == Some(143),
        Exit::Panic => status.code() == Some(101),
        Exit::Sigkill => status.signal() == Some(9),
    };
    assert!(ok, "{cmd:?} / {exit:?}: unexpected exit {status}");
    env.assert_no_leaks();
}

#[test]
fn check_leaves_no_process_behind_on_any_exit() {
    for exit in [
        Exit::Normal,
        Exit::CtrlC,
        Exit::Sigterm,
        Exit::Panic,
        Exit::Sigkill,
    ] {
        exercise(Cmd::Check, exit);
    }
}

#[test]
fn call_leaves_no_process_behind_on_any_exit() {
    for exit in [
        Exit::Normal,
        Exit::CtrlC,
        Exit::Sigterm,
        Exit::Panic,
        Exit::Sigkill,
    ] {
        exercise(Cmd::Call, exit);
    }
}

#[test]
fn run_leaves_no_process_behind_on_any_exit() {
    for exit in [
        Exit::Normal,
        Exit::CtrlC,
        Exit::Sigterm,
        Exit::Panic,
        Exit::Sigkill,
    ] {
        exercise(Cmd::Run, exit);
    }
}

#[test]
fn a_server_killed_by_the_operator_takes_its_setsid_grandchild_along() {
    // The watchdog demo path: SIGKILL of the server's group (not the harness).
    let env = TestEnv::new();
    env.config(&format!(
        "{}{POLICY}",
        env.demo(
            "s",
            "alpha",
            &["--fault", "grandchild", "--fault", "grandchild-setsid"]
        )
    ));
    let config = mcp_harness::config::load(mcp_harness::config::ConfigSource::File(
        env.path("config.toml"),
    ))
    .unwrap();
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        let (events, mut rx) = mcp_harness::mcp::EventSink::new();
        let hub = mcp_harness::mcp::Hub::builder(
            config.servers,
            config.limits,
            mcp_harness::mcp::Vars::new(crate::common::BIN.into()),
            events,
        )
        .build();
        hub.connect("s").await.unwrap().outcome.unwrap();
        let deadline = Instant::now() + Duration::from_secs(30);
        while env.tagged_processes().len() < PROCESSES {
            assert!(Instant::now() < deadline, "grandchildren never started");
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
        hub.kill_process("s").unwrap();
        let revoked = tokio::time::timeout(Duration::from_secs(30), async {
            loop {
                if let Some(mcp_harness::mcp::McpEvent::Revoked { cause, .. }) = rx.recv().await {
                    return cause;
                }
            }
        })
        .await
        .expect("revoked");
        assert!(revoked.to_string().contains("signal 9"), "{revoked}");
        env.assert_no_leaks();
        hub.shutdown().await;
    });
}

/// Issue 20, deliverable 6: the shim adopts only an open socket as its control
/// fd. A number typed by hand — a closed fd, a standard stream, a file — is a
/// clear usage error (status 2), and no server is started.
#[test]
fn the_shim_refuses_a_control_fd_that_is_not_an_open_socket() {
    let env = TestEnv::new();
    let marker = env.path("started");
    let touch = format!("touch {}", marker.display());
    let bin = crate::common::BIN;
    for (script, problem) in [
        (
            format!("exec {bin} __shim 9 sh -c '{touch}'"),
            "is not an open file descriptor",
        ),
        (
            format!("exec {bin} __shim 1 sh -c '{touch}'"),
            "is a standard stream",
        ),
        (
            format!("exec 5</dev/null; exec {bin} __shim 5 sh -c '{touch}'"),
            "is open but not a socket",
        ),
    ] {
        let out = std::process::Command::new("sh")
            .args(["-c", &script])
            .output()
            .unwrap();
        let err = crate::common::stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{script}: {err}");
        assert!(err.contains(problem), "{script}: {err}");
        assert!(err.contains("internal"), "{err}");
        assert!(!marker.exists(), "{script}: the server was started");
    }
}
