//! The official MCP conformance suite (`@modelcontextprotocol/conformance`,
//! pinned in `interop/`) grading `mcp-harness conformance-client`, which performs
//! each scenario with the product's own connection code.

use std::process::Command;

use crate::common::BIN;
use crate::common::interop::Interop;

/// Runs one scenario; the suite exits 0 only when every check passed.
fn scenario(interop: &Interop, name: &str) -> (bool, String) {
    let dir = tempfile::tempdir().unwrap();
    let suite = interop.npm_entry("conformance");
    let out = Command::new(interop.node())
        .arg(&suite)
        .args(["client", "--command", &format!("{BIN} conformance-client")])
        .args(["--scenario", name])
        // The suite writes results/ into its working directory.
        .current_dir(dir.path())
        .env("NO_COLOR", "1")
        .output()
        .expect("run the conformance suite");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), text)
}

fn passes(name: &str) {
    let interop = Interop::get();
    let (ok, text) = scenario(&interop, name);
    assert!(ok, "conformance scenario {name} failed:\n{text}");
    assert!(text.contains("OVERALL: PASSED"), "{text}");
}

#[cfg_attr(
    mcph_no_interop,
    ignore = "npm or python3 is missing: the interop tests install the pinned servers with them (docs/src/testing.md)"
)]
#[test]
fn conformance_initialize() {
    passes("initialize");
}

#[cfg_attr(
    mcph_no_interop,
    ignore = "npm or python3 is missing: the interop tests install the pinned servers with them (docs/src/testing.md)"
)]
#[test]
fn conformance_tools_call() {
    passes("tools_call");
}

#[cfg_attr(
    mcph_no_interop,
    ignore = "npm or python3 is missing: the interop tests install the pinned servers with them (docs/src/testing.md)"
)]
#[test]
fn conformance_elicitation_defaults() {
    passes("elicitation-sep1034-client-defaults");
}

#[cfg_attr(
    mcph_no_interop,
    ignore = "npm or python3 is missing: the interop tests install the pinned servers with them (docs/src/testing.md)"
)]
#[test]
fn conformance_sse_retry() {
    let interop = Interop::get();
    // The suite grades the reconnect delay against the server's `retry` of 500 ms
    // within 450–1000 ms, measured on its side; on a loaded 2-core machine one
    // scheduling stall can push it out. One retry keeps the test about the
    // behaviour (reconnect with Last-Event-ID after `retry`), not the load.
    let passed = |(ok, text): &(bool, String)| *ok && text.contains("OVERALL: PASSED");
    let mut outcome = scenario(&interop, "sse-retry");
    if !passed(&outcome) {
        eprintln!("sse-retry failed once, retrying:\n{}", outcome.1);
        outcome = scenario(&interop, "sse-retry");
    }
    assert!(
        passed(&outcome),
        "conformance scenario sse-retry failed:\n{}",
        outcome.1
    );
}
