//! Which shim supervises a stdio server: the small `mcp-harness-shim` beside
//! the harness when it is there and from the same build, else the harness's
//! own `__shim` — a stale or broken standalone shim never costs a connect.

use std::io::BufRead as _;
use std::os::fd::AsRawFd as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::common::{BIN, TestEnv, isolate};

const SHIM: &str = env!("CARGO_BIN_EXE_mcp-harness-shim");

const POLICY: &str = "[servers.s.tools]\nlookup = \"allow\"\nset = \"allow\"\nreset = \"allow\"\nfail = \"allow\"\nslow = \"allow\"\n";

/// `harness call s slow` (30 s) in the background, with `harness` as the binary.
fn slow_call(env: &TestEnv, harness: &Path) -> Child {
    env.config(&format!("{}{POLICY}", env.demo("s", "alpha", &[])));
    let mut cmd = Command::new(harness);
    cmd.arg("--config")
        .arg(env.path("config.toml"))
        .args([
            "call",
            "s",
            "slow",
            "--args",
            r#"{"seconds": 30, "steps": 1}"#,
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    isolate(&mut cmd, env.dir.path());
    cmd.spawn().expect("spawn the harness")
}

/// The file name of the binary running as the test's shim (the tagged
/// process with `__shim` in its command line), once the server is up.
fn supervisor(env: &TestEnv) -> String {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        for pid in env.tagged_processes() {
            let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
            if !String::from_utf8_lossy(&cmdline).contains("__shim") {
                continue;
            }
            if let Ok(exe) = std::fs::read_link(format!("/proc/{pid}/exe")) {
                return exe.file_name().unwrap().to_string_lossy().into_owned();
            }
        }
        assert!(Instant::now() < deadline, "no shim started the server");
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn stop(env: &TestEnv, mut harness: Child) {
    // SIGKILL: the shim sees its control socket close and sweeps.
    harness.kill().unwrap();
    harness.wait().unwrap();
    env.assert_no_leaks();
}

#[test]
fn the_standalone_shim_supervises_a_stdio_server() {
    let env = TestEnv::new();
    let harness = slow_call(&env, Path::new(BIN));
    assert_eq!(supervisor(&env), "mcp-harness-shim");
    stop(&env, harness);
}

/// A harness in a folder of its own (hard-linked, so `/proc/self/exe` points
/// there) beside a standalone shim of another build, or one that cannot run:
/// the server starts under the harness's own `__shim`.
#[test]
fn a_stale_or_broken_standalone_shim_falls_back_to_the_harness_own() {
    // bash: dash redirects only to single-digit fds.
    let stale = "#!/bin/bash\n# another build: answers `stale` on its control fd ($3)\n\
                 eval \"echo stale >&$3\"\nexit 2\n";
    let silent = "#!/bin/sh\n# broken: ends without a word\nexit 1\n";
    for (case, script, mode) in [
        ("stale", stale, 0o755),
        ("silent", silent, 0o755),
        ("not executable", stale, 0o644),
    ] {
        let env = TestEnv::new();
        let folder = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
        let harness = folder.path().join("mcp-harness");
        if std::fs::hard_link(BIN, &harness).is_err() {
            std::fs::copy(BIN, &harness).unwrap();
        }
        let shim: PathBuf = folder.path().join("mcp-harness-shim");
        std::fs::write(&shim, script).unwrap();
        std::fs::set_permissions(
            &shim,
            <std::fs::Permissions as std::os::unix::fs::PermissionsExt>::from_mode(mode),
        )
        .unwrap();
        let call = slow_call(&env, &harness);
        assert_eq!(supervisor(&env), "mcp-harness", "{case}");
        stop(&env, call);
    }
}

/// The standalone shim given another build's fingerprint answers `stale` on
/// its control socket and starts nothing.
#[test]
fn the_standalone_shim_of_another_build_says_stale_and_runs_nothing() {
    let env = TestEnv::new();
    let marker = env.path("started");
    let (ours, theirs) = std::os::unix::net::UnixStream::pair().unwrap();
    // Inheritable by the shim only: this test spawns nothing else meanwhile.
    nix::fcntl::fcntl(
        &theirs,
        nix::fcntl::FcntlArg::F_SETFD(nix::fcntl::FdFlag::empty()),
    )
    .unwrap();
    let out = Command::new(SHIM)
        .args(["__shim", "0123456789abcdef"])
        .arg(theirs.as_raw_fd().to_string())
        .args(["sh", "-c", &format!("touch {}", marker.display())])
        .output()
        .unwrap();
    drop(theirs);
    let mut line = String::new();
    std::io::BufReader::new(ours).read_line(&mut line).unwrap();
    assert_eq!(line, "stale\n");
    assert_eq!(out.status.code(), Some(2));
    let err = crate::common::stderr(&out);
    assert!(err.contains("another build"), "{err}");
    assert!(!marker.exists(), "the server was started");
}
