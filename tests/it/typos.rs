//! The walk's small frictions (issue 21, item 13, headless): a mistyped tool
//! name or config key names the closest one, a mistyped subcommand gets clap's
//! suggestion, and `check` says `pinned now` for what this very run pinned.

use super::pins::{POLICY, server};
use crate::common::{TestEnv, stderr, stdout};

#[test]
fn typos_name_the_closest_tool_key_and_command() {
    let env = TestEnv::new();
    env.config(&server(&env, "a", &[], "", POLICY));
    let out = env.run(&["check"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    let lookup = text
        .lines()
        .find(|l| l.trim_start().starts_with("lookup"))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(lookup.ends_with("pinned now"), "{text}");
    let out = env.run(&["call", "a", "lokup", "--args", r#"{"key":"apple"}"#]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("did you mean `lookup`?"),
        "{}",
        stderr(&out)
    );
    let out = env.run(&["chek"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("similar subcommand"),
        "{}",
        stderr(&out)
    );
    env.config("[servers.a]\ncomand = \"x\"\n");
    let out = env.run(&["check"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("did you mean `command`?"),
        "{}",
        stderr(&out)
    );
    env.assert_no_leaks();
}
