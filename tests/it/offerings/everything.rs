//! Resources and prompts of a real third-party server (the pinned
//! server-everything) through the headless commands.

use crate::common::interop::Interop;
use crate::common::{TestEnv, json, stderr, stdout};

#[cfg_attr(
    mcph_no_interop,
    ignore = "npm or python3 is missing: the interop tests install the pinned servers with them (docs/src/testing.md)"
)]
#[test]
fn server_everything_resources_and_prompts() {
    let interop = Interop::get();
    let env = TestEnv::new();
    let entry = interop.npm_entry("server-everything");
    let base = format!(
        "[servers.everything]\ncommand = {:?}\nargs = [{:?}, \"stdio\"]\nenv = {{ MCPH_TEST_TAG = \"{}\" }}\nconnect_timeout_ms = 60000\n",
        interop.node().to_string_lossy(),
        entry.to_string_lossy(),
        env.tag
    );
    env.config(&base);
    let policy = env.run(&["policy", "everything"]);
    assert!(policy.status.success(), "{}", stderr(&policy));
    env.config(&format!("{base}{}", stdout(&policy)));
    let out = env.run(&["resources", "everything", "--json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let v = json(&out);
    let resources = v["resources"].as_array().unwrap();
    assert!(!resources.is_empty(), "{v}");
    let templates = v["templates"].as_array().unwrap();
    assert!(
        templates
            .iter()
            .any(|t| t["uriTemplate"].as_str().unwrap().contains("{")),
        "{v}"
    );
    let uri = resources[0]["uri"].as_str().unwrap();
    let out = env.run(&["resources", "everything", "--read", uri, "--yes"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).contains("[resource]"), "{}", stdout(&out));
    let out = env.run(&[
        "resources",
        "everything",
        "--read",
        "demo://resource/dynamic/text/1",
        "--yes",
        "--json",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let out = env.run(&["prompts", "everything"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stdout(&out).contains("args-prompt city [state]"),
        "{}",
        stdout(&out)
    );
    let out = env.run(&["prompts", "everything", "--get", "args-prompt", "city=Lyon"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stdout(&out).contains("What's weather in Lyon?"),
        "{}",
        stdout(&out)
    );
    env.assert_no_leaks();
}
