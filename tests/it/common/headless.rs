//! `mcp-harness run --json` as a test drives it: no model key in the
//! environment, and the events read back as JSON values.

use std::process::Output;

use serde_json::Value;

use super::TestEnv;

/// `run ARGS` in `env`, with no model API key in the environment.
pub fn run(env: &TestEnv, args: &[&str]) -> (Output, Vec<Value>) {
    let mut argv = vec!["run"];
    argv.extend_from_slice(args);
    let out = env
        .command(&argv)
        .env_remove("ANTHROPIC_API_KEY")
        .env_remove("OPENAI_API_KEY")
        .output()
        .unwrap();
    let events = super::stdout(&out)
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect();
    (out, events)
}

pub fn of<'a>(events: &'a [Value], kind: &str) -> Vec<&'a Value> {
    events.iter().filter(|e| e["event"] == kind).collect()
}
