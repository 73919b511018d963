//! A real third-party implementation of MCP 2026-07-28: the official Python
//! SDK (`mcp` 2.3, pinned in `interop/requirements.txt`), in a fixture that
//! refuses `initialize` (`fixtures/stateless_server.py`), so the connection can
//! only be the stateless one. And the SDK's own dual-era server
//! (mcp-server-time), which the harness reaches at 2026-07-28 too.

use std::path::Path;

use crate::common::interop::Interop;
use crate::common::{TestEnv, json};
use serde_json::Value;

fn fixture() -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/it/fixtures/stateless_server.py")
        .to_string_lossy()
        .into_owned()
}

/// `[servers.py]` running the fixture; `protocol` when given.
fn config(env: &TestEnv, interop: &Interop, protocol: Option<&str>) {
    let protocol = protocol
        .map(|p| format!("protocol = \"{p}\"\n"))
        .unwrap_or_default();
    env.config(&format!(
        "[servers.py]\ncommand = {:?}\nargs = [{:?}]\nenv = {{ MCPH_TEST_TAG = \"{}\" }}\n\
         connect_timeout_ms = 30000\n{protocol}[servers.py.tools]\nshout = \"allow\"\n",
        interop.python().to_string_lossy(),
        fixture(),
        env.tag
    ));
}

fn checked(env: &TestEnv) -> Value {
    let report = json(&env.run(&["check", "--json"]));
    report["servers"][0].clone()
}

#[cfg_attr(
    mcph_no_interop,
    ignore = "npm or python3 is missing: the interop tests install the pinned servers with them (docs/src/testing.md)"
)]
#[test]
fn the_python_sdk_stateless_server_is_reached_at_2026_07_28() {
    let interop = Interop::get();
    let env = TestEnv::new();
    config(&env, &interop, None);
    let s = checked(&env);
    assert_eq!(s["status"], "ready", "{s}");
    assert_eq!(s["server"]["protocol_version"], "2026-07-28", "{s}");
    assert_eq!(s["server"]["name"], "py-stateless", "{s}");
    let out = env.run(&[
        "call",
        "py",
        "shout",
        "--args",
        r#"{"text":"quiet"}"#,
        "--json",
    ]);
    let line = json(&out);
    assert_eq!(line["ok"], true, "{line}");
    assert_eq!(line["content"][0]["text"], "QUIET", "{line}");
    env.assert_no_leaks();
}

/// The fixture is not hollow: it really refuses the handshake.
#[cfg_attr(
    mcph_no_interop,
    ignore = "npm or python3 is missing: the interop tests install the pinned servers with them (docs/src/testing.md)"
)]
#[test]
fn the_fixture_refuses_the_handshake() {
    let interop = Interop::get();
    let env = TestEnv::new();
    config(&env, &interop, Some("2025-11-25"));
    let s = checked(&env);
    assert_eq!(s["status"], "failed", "{s}");
    assert_eq!(s["error"]["code"], "protocol_version_mismatch", "{s}");
    assert!(
        s["error"]["message"]
            .as_str()
            .unwrap()
            .contains("it supports `2026-07-28`"),
        "{s}"
    );
    env.assert_no_leaks();
}

#[cfg_attr(
    mcph_no_interop,
    ignore = "npm or python3 is missing: the interop tests install the pinned servers with them (docs/src/testing.md)"
)]
#[test]
fn the_python_sdk_dual_era_server_is_reached_at_2026_07_28() {
    let interop = Interop::get();
    let env = TestEnv::new();
    env.config(&format!(
        "[servers.time]\ncommand = {:?}\nenv = {{ MCPH_TEST_TAG = \"{}\" }}\nconnect_timeout_ms = 30000\n",
        interop.time_server().to_string_lossy(),
        env.tag
    ));
    let s = checked(&env);
    assert_eq!(s["server"]["protocol_version"], "2026-07-28", "{s}");
    env.assert_no_leaks();
}
