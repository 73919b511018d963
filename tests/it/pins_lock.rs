//! `mcp-harness.lock` itself: an invalid file fails the connections that need
//! it and is never overwritten; writers from several processes (and the
//! concurrent first-use pins of one `check`) never lose each other's entries,
//! and a reader never sees a torn file.

use std::path::Path;

use super::pins::{POLICY, check_json, read_lock, server};
use crate::common::TestEnv;
use mcp_harness::mcp::pins::lock;

#[test]
fn an_invalid_lock_file_fails_the_connection_and_is_left_alone() {
    let env = TestEnv::new();
    env.config(&server(&env, "a", &[], "", POLICY));
    let broken =
        "version = 1\n[servers.a.tools.lookup]\nsha256 = \"not a hash\"\ndefinition = \"{}\"\n";
    std::fs::write(env.path("mcp-harness.lock"), broken).unwrap();
    let (code, report) = check_json(&env);
    assert_eq!(code, Some(1), "{report}");
    let error = &report["servers"][0]["error"];
    assert_eq!(error["code"], "lock_file_error", "{error}");
    assert!(
        error["message"].as_str().unwrap().contains("sha256"),
        "{error}"
    );
    assert_eq!(
        std::fs::read_to_string(env.path("mcp-harness.lock")).unwrap(),
        broken
    );
    // With pinning off the lock file is not read at all.
    env.config(&server(&env, "a", &[], "pin = \"off\"\n", POLICY));
    let (code, report) = check_json(&env);
    assert_eq!(code, Some(0), "{report}");
    assert_eq!(report["servers"][0]["published"][0]["pin"], "off");
    env.assert_no_leaks();
}

#[test]
fn concurrent_writers_never_leave_a_torn_or_stale_lock_file() {
    let env = TestEnv::new();
    let beta = format!("{}[servers.b.tools]\n{POLICY}", env.demo("b", "beta", &[]));
    env.config(&format!("{}{beta}", server(&env, "a", &[], "", POLICY)));
    // `check` connects both at once: their first-use pins go to the same file.
    assert_eq!(env.run(&["check"]).status.code(), Some(0));
    let path = env.path("mcp-harness.lock");
    assert_eq!(
        read_lock(&env).servers.len(),
        2,
        "neither write lost the other"
    );
    // A stale pin in each alias, so every `pin` has something to write.
    let mut stale = read_lock(&env);
    for pins in stale.servers.values_mut() {
        let old = pins["lookup"].clone();
        pins.insert("gone".into(), old);
    }
    std::fs::write(&path, lock::render(&stale)).unwrap();
    // Two `pin` processes per alias at once, while this thread keeps reading.
    let writers: Vec<std::process::Child> = ["a", "b", "a", "b"]
        .iter()
        .map(|alias| env.command(&["pin", alias]).spawn().unwrap())
        .collect();
    let mut reads = 0;
    let mut writers = writers;
    while writers.iter_mut().any(|w| w.try_wait().unwrap().is_none()) {
        let text = std::fs::read_to_string(&path).unwrap();
        let lock = lock::parse(&text).expect("every read sees a whole file");
        assert_eq!(lock.servers.len(), 2, "no writer lost the other alias");
        reads += 1;
    }
    for mut w in writers {
        assert!(w.wait().unwrap().success());
    }
    assert!(reads > 0);
    // Both aliases were rewritten; neither write undid the other.
    let lock = read_lock(&env);
    for alias in ["a", "b"] {
        let pinned: Vec<&str> = lock.servers[alias].keys().map(String::as_str).collect();
        assert_eq!(pinned, ["fail", "lookup", "reset", "set"], "{alias}");
    }
    let names: Vec<String> = std::fs::read_dir(env.dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains("mcp-harness.lock"))
        .collect();
    assert_eq!(names, ["mcp-harness.lock"], "no temp file left behind");
    assert!(Path::new(&path).exists());
    env.assert_no_leaks();
}
