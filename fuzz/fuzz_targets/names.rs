//! Name normalization: only `[A-Za-z0-9_]` comes out, one character per input
//! character; exposed names carry the prefix; quoted names are inert.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mcp_harness::mcp::ServerAlias;
use mcp_harness::mcp::names::{EXPOSED_PREFIX, exposed_name, normalize, quote};

fuzz_target!(|data: (&str, &str)| {
    let (alias, tool) = data;
    let normalized = normalize(tool);
    assert!(
        normalized
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_')
    );
    assert_eq!(normalized.len(), tool.chars().count());
    assert_eq!(normalize(&normalized), normalized, "idempotent");
    let alias = ServerAlias::new(alias);
    let name = exposed_name(&alias, tool);
    assert!(name.starts_with(EXPOSED_PREFIX));
    assert!(name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_'));
    let quoted = quote(tool);
    assert!(
        !quoted
            .chars()
            .any(|c| c.is_control() || mcp_harness::sanitize::is_dangerous(c))
    );
    assert!(
        quoted.chars().count() <= 82,
        "bounded: {}",
        quoted.chars().count()
    );
});
