//! Schema screening and strict compilation of untrusted `inputSchema`s: any JSON
//! is accepted or refused with a reason, never a panic or a hang; a schema that
//! passes compiles offline, and validation of arbitrary arguments is total.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mcp_harness::mcp::published::{Position, PublishedTool};
use mcp_harness::mcp::schema::{SchemaProblem, compile, screen, validate};
use serde_json::Value;

fuzz_target!(|data: &[u8]| {
    // First line: the schema; the rest: arguments to validate against it.
    let (schema_bytes, args_bytes) = match data.iter().position(|b| *b == b'\n') {
        Some(i) => (&data[..i], &data[i + 1..]),
        None => (data, &b"{}"[..]),
    };
    let Ok(schema) = serde_json::from_slice::<Value>(schema_bytes) else {
        return;
    };
    let screened = screen(&schema);
    let compiled = compile(&schema);
    if let Err(SchemaProblem::ExternalRef(_) | SchemaProblem::NotObject(_)) = screened {
        assert!(compiled.is_err(), "compile must refuse what screen refuses");
    }
    if let Ok(validator) = compiled {
        let args = serde_json::from_slice::<Value>(args_bytes).unwrap_or(Value::Null);
        for error in validate(&validator, &args) {
            let _ = (error.instance_path, error.message);
        }
    }
    // The same schema inside a tool definition, as a server would publish it.
    let tool = serde_json::json!({"name": "t", "inputSchema": schema});
    let _ = PublishedTool::from_json(&tool, Position { page: 1, index: 0 });
});
