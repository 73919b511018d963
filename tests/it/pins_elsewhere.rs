//! A copied config does not start a new lock silently (issue 21, item 11):
//! an alias that has no pins in the copy's lock but is pinned in the default
//! config's lock is refused (`definition_unpinned`) with both locks named and
//! a diff against the pins there, until the operator says which lock
//! (`lock = PATH`) or that this one is new (`--accept-new-lock`).

use std::path::Path;
use std::process::{Command, Output};

use super::pins::{POLICY, server};
use crate::common::{BIN, TestEnv, isolate, json};

/// The rug pull, published from the start.
const RUG_PULL: [&str; 4] = [
    "--fault",
    "mutate-tools=rug-pull",
    "--fault",
    "mutate-at-start",
];

fn run(env: &TestEnv, config: Option<&Path>, args: &[&str]) -> Output {
    let mut cmd = Command::new(BIN);
    if let Some(config) = config {
        cmd.arg("--config").arg(config);
    }
    cmd.args(args);
    isolate(&mut cmd, env.dir.path());
    cmd.output().unwrap()
}

#[test]
fn a_copied_config_is_refused_first_use_for_aliases_pinned_in_the_default_lock() {
    let env = TestEnv::new();
    let default_dir = env.path("xdg-config/mcp-harness");
    std::fs::create_dir_all(&default_dir).unwrap();
    std::fs::write(
        default_dir.join("config.toml"),
        env.fill(&server(&env, "a", &[], "", POLICY)),
    )
    .unwrap();
    // The default config (no --config) pins `a` beside itself.
    assert_eq!(run(&env, None, &["check"]).status.code(), Some(0));
    let default_lock = default_dir.join("mcp-harness.lock");
    assert!(default_lock.is_file());
    // A copy elsewhere, whose server has changed since (a rug pull).
    let copy_dir = env.path("copy");
    std::fs::create_dir_all(&copy_dir).unwrap();
    let copy = copy_dir.join("config.toml");
    std::fs::write(&copy, env.fill(&server(&env, "a", &RUG_PULL, "", POLICY))).unwrap();
    let out = run(&env, Some(&copy), &["check", "--json"]);
    assert_eq!(out.status.code(), Some(1), "refused");
    let report = json(&out);
    let error = &report["servers"][0]["error"];
    assert_eq!(error["code"], "definition_unpinned", "{error}");
    let message = error["message"].as_str().unwrap();
    assert!(
        message.contains(&default_lock.display().to_string())
            && message.contains(&copy_dir.join("mcp-harness.lock").display().to_string()),
        "{message}"
    );
    assert!(message.contains("`lookup` differs"), "{message}");
    assert!(
        error["hint"]
            .as_str()
            .unwrap()
            .contains("--accept-new-lock")
    );
    assert_eq!(
        error["changes"][0]["tool"], "lookup",
        "the diff comes along"
    );
    assert!(
        !copy_dir.join("mcp-harness.lock").exists(),
        "nothing trusted"
    );
    // `lock = PATH`: the copy is checked against the pins of the default lock.
    let text = format!(
        "lock = {:?}\n{}",
        default_lock.display().to_string(),
        env.fill(&server(&env, "a", &RUG_PULL, "", POLICY))
    );
    std::fs::write(&copy, text).unwrap();
    let report = json(&run(&env, Some(&copy), &["check", "--json"]));
    assert_eq!(
        report["servers"][0]["error"]["code"], "definition_changed",
        "{report}"
    );
    // --accept-new-lock: the operator says this lock is new; first use pins here.
    std::fs::write(&copy, env.fill(&server(&env, "a", &RUG_PULL, "", POLICY))).unwrap();
    let out = run(&env, Some(&copy), &["check", "--accept-new-lock"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        crate::common::stdout(&out)
    );
    let text = crate::common::stdout(&out);
    assert!(
        text.contains(&copy_dir.join("mcp-harness.lock").display().to_string()),
        "the first-use notice names the lock: {text}"
    );
    assert!(copy_dir.join("mcp-harness.lock").is_file());
    // From now on the copy has its own pins: no refusal without the flag.
    assert_eq!(run(&env, Some(&copy), &["check"]).status.code(), Some(0));
    env.assert_no_leaks();
}
