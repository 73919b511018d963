//! Config parsing: any text gives a config or a `ConfigError` with a message,
//! never a panic (the TOML error's span is used to compute line/column).
#![no_main]

use libfuzzer_sys::fuzz_target;
use mcp_harness::config::{self, ConfigSource};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    match config::parse(text, ConfigSource::File("fuzz.toml".into())) {
        Ok(config) => {
            // Every alias is non-empty, and normalized aliases are distinct.
            let mut seen = std::collections::BTreeSet::new();
            for server in &config.servers {
                assert!(!server.alias.as_str().trim().is_empty());
                assert!(seen.insert(mcp_harness::mcp::names::normalize(server.alias.as_str())));
            }
        }
        Err(error) => {
            let _ = error.to_string();
        }
    }
});
