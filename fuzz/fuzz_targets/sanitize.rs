//! The sanitizer: nothing a terminal acts on survives `inert`, `inert_line` is
//! one bounded line, and `--json` output is terminal-safe yet lossless.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mcp_harness::cli::json::to_line;
use mcp_harness::sanitize::{inert, inert_line, is_dangerous};

fuzz_target!(|text: &str| {
    let kept = inert(text, true);
    assert!(
        !kept
            .chars()
            .any(|c| (c.is_control() && c != '\n' && c != '\t') || is_dangerous(c))
    );
    let flat = inert(text, false);
    assert!(!flat.chars().any(|c| c.is_control() || is_dangerous(c)));
    let line = inert_line(text, 40);
    assert!(line.chars().count() <= 40);
    assert!(!line.contains('\n'));
    let json = to_line(&serde_json::json!({ "t": text }));
    assert!(
        !json.chars().any(|c| c.is_control() || is_dangerous(c)),
        "{json:?}"
    );
    let back: serde_json::Value = serde_json::from_str(&json).expect("valid JSON");
    assert_eq!(back["t"].as_str(), Some(text));
});
