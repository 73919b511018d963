//! The server side of the official conformance suite (0.1.16 and
//! 0.2.0-alpha.12, pinned in `interop/`, every scenario: `--suite all`) run
//! against `demo-server conformance --http` directly, then against `serve
//! --http` in front of it with `[serve] names = "bare"`: every scenario that
//! passes directly passes through the gateway, except the ones listed in
//! [`BY_DESIGN`] with why. The scenarios that fail directly are listed too
//! ([`DIRECT_FAILURES`]), so a change on either side shows here.
//!
//! The suite's server mode cannot send a header, and the gateway wants a
//! client's bearer token on every request: `fixtures/bearer_preload.mjs`,
//! loaded into the suite's Node, adds `Authorization: Bearer …` to its
//! requests to the gateway (and to no other origin). The front door is the one
//! real clients meet; `dns-rebinding-protection` passes through it with a
//! valid token and a foreign Host/Origin (refused), then a loopback one.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use crate::common::TestEnv;
use crate::common::hubs::http_demo;
use crate::common::interop::Interop;
use crate::serve::{Gateway, TOKEN_A};

/// What fails against the upstream itself, and why (it is an rmcp 3.11
/// server that implements only what the 2025-11-25 scenarios and the common
/// 2026-07-28 ones ask for). 0.1.16 has none.
const DIRECT_FAILURES: &[(&str, &str)] = &[
    (
        "server-stateless",
        "rmcp 3.11's server: it sends elicitation/sampling requests and log messages to a \
         2026-07-28 client, and the demo implements no subscriptions/listen",
    ),
    (
        "caching",
        "wire-schema-valid: a message rmcp 3.11's server sends is not valid per the \
         2026-07-28 schema",
    ),
    (
        "http-custom-header-server-validation",
        "the upstream has no tool with x-mcp-header annotations to test",
    ),
    (
        "tasks-lifecycle",
        "the upstream implements none of the suite's task test tools",
    ),
    (
        "tasks-capability-negotiation",
        "the upstream implements none of the suite's task test tools",
    ),
    (
        "tasks-wire-fields",
        "the upstream implements none of the suite's task test tools",
    ),
    (
        "tasks-request-state-removal",
        "the upstream implements none of the suite's task test tools",
    ),
    (
        "tasks-mrtr-input",
        "the upstream implements none of the suite's task test tools",
    ),
    (
        "tasks-request-headers",
        "the upstream implements none of the suite's task test tools",
    ),
    (
        "tasks-dispatch-and-envelope",
        "the upstream implements none of the suite's task test tools",
    ),
    (
        "tasks-required-task-error",
        "the upstream implements none of the suite's task test tools",
    ),
    (
        "tasks-mrtr-composition",
        "the upstream implements none of the suite's task test tools",
    ),
    (
        "input-required-result-basic-elicitation",
        "the upstream implements none of the suite's input_required test tools",
    ),
    (
        "input-required-result-basic-sampling",
        "the upstream implements none of the suite's input_required test tools",
    ),
    (
        "input-required-result-basic-list-roots",
        "the upstream implements none of the suite's input_required test tools",
    ),
    (
        "input-required-result-request-state",
        "the upstream implements none of the suite's input_required test tools",
    ),
    (
        "input-required-result-multiple-input-requests",
        "the upstream implements none of the suite's input_required test tools",
    ),
    (
        "input-required-result-multi-round",
        "the upstream implements none of the suite's input_required test tools",
    ),
    (
        "input-required-result-non-tool-request",
        "the upstream implements none of the suite's input_required test tools",
    ),
    (
        "input-required-result-result-type",
        "the upstream implements none of the suite's input_required test tools",
    ),
    (
        "input-required-result-unsupported-methods",
        "the upstream implements none of the suite's input_required test tools",
    ),
    (
        "input-required-result-tampered-state",
        "the upstream implements none of the suite's input_required test tools",
    ),
    (
        "input-required-result-capability-check",
        "the upstream implements none of the suite's input_required test tools",
    ),
];

/// Scenarios that pass directly and fail through the gateway on purpose.
const BY_DESIGN: &[(&str, &str)] = &[
    (
        "tools-call-with-logging",
        "no server log message reaches an outside client: a log message names no call \
         (it could be another client's) and is server text outside any result; \
         logging/setLevel is accepted",
    ),
    (
        "tools-call-sampling",
        "the gateway never lets an upstream use an outside client's model; the harness \
         declares no sampling to its servers",
    ),
    (
        "tools-call-elicitation",
        "an upstream's question goes to the operator, never to the outside client \
         (issue 23); headless serve declines it",
    ),
    (
        "elicitation-sep1034-defaults",
        "an upstream's question goes to the operator, never to the outside client",
    ),
    (
        "elicitation-sep1330-enums",
        "an upstream's question goes to the operator, never to the outside client",
    ),
];

/// Every tool `demo-server conformance` publishes.
pub(crate) const CONFORMANCE_TOOLS: [&str; 15] = [
    "test_simple_text",
    "test_image_content",
    "test_audio_content",
    "test_embedded_resource",
    "test_multiple_content_types",
    "test_tool_with_logging",
    "test_error_handling",
    "test_tool_with_progress",
    "test_sampling",
    "test_elicitation",
    "test_elicitation_sep1034_defaults",
    "test_elicitation_sep1330_enums",
    "json_schema_2020_12_tool",
    "test_reconnection",
    "touch_watched",
];

/// A `[servers.ALIAS.tools]` body for the upstream: each tool's effect.
pub(crate) fn conformance_policy(effect: impl Fn(&str) -> &'static str) -> String {
    CONFORMANCE_TOOLS
        .iter()
        .map(|t| format!("{t} = \"{}\"\n", effect(t)))
        .collect()
}

/// A `[servers.ALIAS.tools]` body allowing every tool of the upstream.
pub(crate) fn every_tool_allowed() -> String {
    conformance_policy(|_| "allow")
}

/// Every tool of the upstream allowed, its resources readable, one client.
fn config(env: &TestEnv, url: &str) {
    let tools = every_tool_allowed();
    env.config(&format!(
        "[servers.conf]\nurl = \"{url}\"\n[servers.conf.tools]\n{tools}\
         [servers.conf.resources]\nread = \"allow\"\n\
         [serve]\nnames = \"bare\"\n\
         [serve.clients.suite]\ntoken_env = \"MCPH_TEST_TOKEN_A\"\n"
    ));
}

/// One run of the suite against `url` (with the bearer token added when
/// given): each scenario's verdict from its summary, and everything printed.
fn suite(
    interop: &Interop,
    next: bool,
    url: &str,
    token: Option<&str>,
) -> (BTreeMap<String, bool>, String) {
    let dir = tempfile::tempdir().unwrap();
    let cli = interop.conformance(next);
    let mut cmd = Command::new(interop.node());
    if let Some(token) = token {
        let preload =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/it/fixtures/bearer_preload.mjs");
        let origin = url.strip_suffix("/mcp").expect("a /mcp URL");
        cmd.arg("--import")
            .arg(preload)
            .env("MCPH_BEARER", token)
            .env("MCPH_BEARER_ORIGIN", origin)
            .env("MCPH_UNDICI_FROM", &cli);
    }
    let out = cmd
        .arg(&cli)
        .args(["server", "--url", url, "--suite", "all"])
        .current_dir(dir.path())
        .env("NO_COLOR", "1")
        .output()
        .expect("run the conformance suite");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let summary = text
        .split_once("=== SUMMARY ===")
        .unwrap_or_else(|| panic!("no summary from the suite:\n{text}"))
        .1;
    let verdicts: BTreeMap<String, bool> = summary
        .lines()
        .filter_map(|line| {
            let (mark, rest) = line.trim().split_once(' ')?;
            let (name, _) = rest.split_once(": ")?;
            match mark {
                "✓" => Some((name.to_string(), true)),
                "✗" => Some((name.to_string(), false)),
                _ => None,
            }
        })
        .collect();
    assert!(
        verdicts.len() > 20,
        "too few scenarios read from:\n{summary}"
    );
    (verdicts, text)
}

fn through_the_gateway(next: bool) {
    let interop = Interop::get();
    let env = TestEnv::new();
    let (mut upstream, url) = http_demo(&env, "conformance", &[]);
    config(&env, &url);
    let gateway = Gateway::start(&env);

    let (direct, direct_text) = suite(&interop, next, &url, None);
    let (through, through_text) = suite(&interop, next, &gateway.url, Some(TOKEN_A));
    let _ = upstream.kill();
    let _ = upstream.wait();
    let version = if next { "0.2.0-alpha.12" } else { "0.1.16" };

    let failed: Vec<&str> = direct
        .iter()
        .filter(|(_, ok)| !**ok)
        .map(|(n, _)| n.as_str())
        .collect();
    let expected: Vec<&str> = DIRECT_FAILURES
        .iter()
        .map(|(n, _)| *n)
        .filter(|n| direct.contains_key(*n))
        .collect();
    let mut expected_sorted = expected.clone();
    expected_sorted.sort_unstable();
    assert_eq!(
        failed, expected_sorted,
        "{version}: the scenarios failing against the upstream directly changed:\n{direct_text}"
    );
    assert_eq!(
        direct.keys().collect::<Vec<_>>(),
        through.keys().collect::<Vec<_>>(),
        "{version}: both runs grade the same scenarios"
    );
    for (name, ok) in &direct {
        if !ok {
            continue;
        }
        let by_design = BY_DESIGN.iter().find(|(n, _)| n == name);
        match (through[name], by_design) {
            (true, None) => {}
            (false, None) => panic!(
                "{version}: `{name}` passes against the upstream but not through the gateway:\n\
                 {through_text}"
            ),
            (false, Some(_)) => {}
            (true, Some((_, why))) => panic!(
                "{version}: `{name}` now passes through the gateway: take it off BY_DESIGN \
                 (\"{why}\")"
            ),
        }
    }
    assert_eq!(
        through.get("dns-rebinding-protection"),
        Some(&true),
        "{version}: the Origin/Host check"
    );
    gateway.stop();
}

#[cfg_attr(
    mcph_no_interop,
    ignore = "npm or python3 is missing: the interop tests install the pinned servers with them (docs/src/testing.md)"
)]
#[test]
fn conformance_0_1_16_server_scenarios_pass_through_serve_as_they_pass_directly() {
    through_the_gateway(false);
}

#[cfg_attr(
    mcph_no_interop,
    ignore = "npm or python3 is missing: the interop tests install the pinned servers with them (docs/src/testing.md)"
)]
#[test]
fn conformance_next_server_scenarios_pass_through_serve_as_they_pass_directly() {
    through_the_gateway(true);
}
