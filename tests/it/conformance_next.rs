//! The client scenarios of the conformance suite 0.2.0-alpha.12 (npm alias
//! `conformance-next`, pinned in `interop/`) outside `auth/*`, each at its
//! default wire and at every revision the suite offers it at
//! (`--spec-version`), graded by the suite: `mcp-harness conformance-client`
//! performs them with the product's own connection code.
//!
//! Two scenarios fail on purpose (docs/src/testing.md, "The conformance suites"): the harness's rules
//! reject the whole connection where the suite expects the client to carry on
//! without the offending tool. Their tests hold exactly that: every check but
//! the one about carrying on passes, and the client says why it stopped.

use std::process::Command;

use crate::common::BIN;
use crate::common::interop::Interop;

/// Runs one scenario (at `wire`, or the suite's default): whether the suite
/// passed it, and everything it printed.
fn run(name: &str, wire: Option<&str>) -> (bool, String) {
    let interop = Interop::get();
    let dir = tempfile::tempdir().unwrap();
    let mut cmd = Command::new(interop.node());
    cmd.arg(interop.conformance(true))
        .args(["client", "--command", &format!("{BIN} conformance-client")])
        .args(["--scenario", name]);
    if let Some(wire) = wire {
        cmd.args(["--spec-version", wire]);
    }
    let out = cmd
        .current_dir(dir.path())
        .env("NO_COLOR", "1")
        .env("XDG_DATA_HOME", dir.path().join("data"))
        .output()
        .expect("run the conformance suite");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (
        out.status.success() && text.contains("OVERALL: PASSED"),
        text,
    )
}

fn passes(name: &str, wire: Option<&str>) {
    let (ok, text) = run(name, wire);
    // sse-retry grades a reconnect delay measured on the suite's side; one
    // scheduling stall on a loaded machine can push it out (see conformance.rs).
    if !ok && name == "sse-retry" {
        eprintln!("sse-retry failed once, retrying:\n{text}");
        let (again, retried) = run(name, wire);
        assert!(again, "0.2.0-alpha.12 {name} @{wire:?} failed:\n{retried}");
        return;
    }
    assert!(ok, "0.2.0-alpha.12 {name} @{wire:?} failed:\n{text}");
}

/// One test per scenario and wire (`None`: the suite's default).
macro_rules! scenarios {
    ($($test:ident => $name:literal @ $wire:expr,)*) => {
        $(
            #[cfg_attr(mcph_no_interop, ignore = "npm or python3 is missing: the interop tests install the pinned servers with them (docs/src/testing.md)")]
            #[test]
            fn $test() {
                passes($name, $wire);
            }
        )*
    };
}

scenarios! {
    initialize_default => "initialize" @ None,
    initialize_2025_06_18 => "initialize" @ Some("2025-06-18"),
    initialize_2025_11_25 => "initialize" @ Some("2025-11-25"),
    tools_call_default => "tools_call" @ None,
    tools_call_2025_06_18 => "tools_call" @ Some("2025-06-18"),
    tools_call_2025_11_25 => "tools_call" @ Some("2025-11-25"),
    tools_call_2026_07_28 => "tools_call" @ Some("2026-07-28"),
    elicitation_defaults => "elicitation-sep1034-client-defaults" @ None,
    elicitation_defaults_2025_11_25 => "elicitation-sep1034-client-defaults" @ Some("2025-11-25"),
    sse_retry => "sse-retry" @ None,
    sse_retry_2025_11_25 => "sse-retry" @ Some("2025-11-25"),
    request_metadata => "request-metadata" @ None,
    request_metadata_2026_07_28 => "request-metadata" @ Some("2026-07-28"),
    request_state => "sep-2322-client-request-state" @ None,
    request_state_2026_07_28 => "sep-2322-client-request-state" @ Some("2026-07-28"),
    standard_headers => "http-standard-headers" @ None,
    standard_headers_2026_07_28 => "http-standard-headers" @ Some("2026-07-28"),
    custom_headers => "http-custom-headers" @ None,
    custom_headers_2026_07_28 => "http-custom-headers" @ Some("2026-07-28"),
    schema_preservation => "json-schema-2020-12-preservation" @ None,
    schema_preservation_2025_11_25 => "json-schema-2020-12-preservation" @ Some("2025-11-25"),
    schema_preservation_2026_07_28 => "json-schema-2020-12-preservation" @ Some("2026-07-28"),
    skills_no_prefetch => "sep-2640-client-no-prefetch" @ None,
}

/// `text` without ANSI colour sequences (the suite colours its check list
/// even under `NO_COLOR`).
fn plain(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            // ESC [ … final byte in @..~
            for c in chars.by_ref() {
                if ('@'..='~').contains(&c) && c != '[' {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// The lines of the suite's check list: `(check id, passed)`.
fn checks(text: &str) -> Vec<(String, bool)> {
    plain(text)
        .lines()
        .filter_map(|line| {
            let start = line.find('[')? + 1;
            let end = start + line[start..].find(']')?;
            let id = line[start..end].trim().to_string();
            if line.contains("SUCCESS") {
                Some((id, true))
            } else if line.contains("FAILURE") {
                Some((id, false))
            } else {
                None
            }
        })
        .collect()
}

/// Invalid `x-mcp-header` annotations: the suite expects the client to drop
/// those tools and keep the rest; rule 5 rejects the connection, naming each.
/// Every "MUST NOT call" check passes; only "keep valid tools" fails.
#[cfg_attr(
    mcph_no_interop,
    ignore = "npm or python3 is missing: the interop tests install the pinned servers with them (docs/src/testing.md)"
)]
#[test]
fn invalid_tool_headers_reject_the_connection_on_purpose() {
    for wire in [None, Some("2026-07-28")] {
        let (ok, text) = run("http-invalid-tool-headers", wire);
        assert!(!ok, "{text}");
        let checks = checks(&text);
        let failed: Vec<&str> = checks
            .iter()
            .filter(|(_, passed)| !passed)
            .map(|(id, _)| id.as_str())
            .collect();
        assert_eq!(failed, ["sep-2243-client-reject-invalid-tool"], "{text}");
        assert_eq!(checks.len(), 12, "{text}");
        assert!(text.contains("invalid_tool_definition"), "{text}");
        assert!(text.contains("header rule"), "{text}");
    }
}

/// A network `$ref` in an input schema: nothing is fetched (the check passes),
/// but rule 4 rejects the whole connection, so the client exits 1.
#[cfg_attr(
    mcph_no_interop,
    ignore = "npm or python3 is missing: the interop tests install the pinned servers with them (docs/src/testing.md)"
)]
#[test]
fn network_ref_rejects_the_connection_on_purpose() {
    for wire in [None, Some("2026-07-28")] {
        let (ok, text) = run("json-schema-ref-no-deref", wire);
        assert!(!ok, "{text}");
        assert_eq!(
            checks(&text),
            [("sep-2106-no-network-ref-deref".to_string(), true)],
            "{text}"
        );
        assert!(text.contains("schema_external_ref"), "{text}");
        assert!(text.contains("CLIENT EXITED WITH ERROR (code 1)"), "{text}");
    }
}
