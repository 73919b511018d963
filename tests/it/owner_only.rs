//! The data dir is the operator's alone (issue 21, item 10): the session
//! folder, its `audit.jsonl` and `transcript.jsonl` (which quote results), the
//! log file and the pins lock are owner-only when made, and a data dir an older
//! harness left readable by others is tightened on the next start.

use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};

use super::pins::{POLICY, server};
use crate::common::{TestEnv, stderr};

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .permissions()
        .mode()
        & 0o777
}

/// The data dir, its one session folder and the files that must be owner-only.
fn layout(env: &TestEnv) -> (Vec<PathBuf>, Vec<PathBuf>) {
    let data = env.path("xdg-data/mcp-harness");
    let sessions = data.join("sessions");
    let session = std::fs::read_dir(&sessions)
        .unwrap()
        .next()
        .expect("a session folder")
        .unwrap()
        .path();
    let dirs = vec![data.clone(), sessions, session.clone()];
    let files = vec![
        session.join("audit.jsonl"),
        session.join("transcript.jsonl"),
        data.join("mcp-harness.log"),
        env.path("mcp-harness.lock"),
    ];
    (dirs, files)
}

fn call(env: &TestEnv) {
    let out = env.run(&["call", "a", "lookup", "--args", r#"{"key":"apple"}"#]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
}

#[test]
fn sessions_logs_and_the_lock_are_owner_only_and_old_ones_are_tightened() {
    let env = TestEnv::new();
    env.config(&server(&env, "a", &[], "", POLICY));
    call(&env);
    let (dirs, files) = layout(&env);
    for dir in &dirs {
        assert_eq!(mode(dir), 0o700, "{}", dir.display());
    }
    for file in &files {
        assert_eq!(mode(file), 0o600, "{}", file.display());
    }
    // What an older harness left: everything readable by everyone (and no
    // record that the data dir was ever tightened).
    std::fs::remove_file(env.path("xdg-data/mcp-harness/.owner-only")).unwrap();
    for dir in &dirs {
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    for file in &files {
        std::fs::set_permissions(file, std::fs::Permissions::from_mode(0o644)).unwrap();
    }
    // `check` opens no session of its own: the start itself tightens them.
    assert_eq!(env.run(&["check"]).status.code(), Some(0));
    for dir in &dirs {
        assert_eq!(mode(dir), 0o700, "tightened: {}", dir.display());
    }
    for file in files.iter().filter(|f| !f.ends_with("mcp-harness.lock")) {
        assert_eq!(mode(file), 0o600, "tightened: {}", file.display());
    }
    env.assert_no_leaks();
}
