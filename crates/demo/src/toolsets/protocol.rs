//! The tool sets about what 2026-07-28 and output schemas add:
//!
//! - `headers`: `lookup`, whose `key` is mirrored into an `Mcp-Param-Key`
//!   header (`x-mcp-header`), and `bad_header`, whose annotation sits on an
//!   object property — invalid, so a 2026-07-28 client over HTTP must not call it.
//! - `structured`: `report` declares an `outputSchema` and keeps to it,
//!   `bad_report` declares the same and breaks it; `note` takes an optional
//!   string (a model in strict mode sends `null` for it).

use rmcp::model::{CallToolResult, ContentBlock, JsonObject, Tool};
use serde_json::{Value, json};

use super::{Behaviour, Toolset, schema};

/// The tools of `toolset`, if it is one of these.
pub fn named(toolset: Toolset) -> Option<(Vec<Tool>, Behaviour)> {
    match toolset {
        Toolset::Headers => Some((headers(), Behaviour::Echo)),
        Toolset::Structured => Some((structured(), Behaviour::Structured)),
        _ => None,
    }
}

fn headers() -> Vec<Tool> {
    vec![
        Tool::new(
            "lookup",
            "Echo the key it is given; the key also travels as an HTTP header.",
            schema(json!({
                "type": "object",
                "properties": {"key": {"type": "string", "x-mcp-header": "Key"}},
                "required": ["key"]
            })),
        ),
        Tool::new(
            "bad_header",
            "Its x-mcp-header annotation is on an object property, which the spec forbids.",
            schema(json!({
                "type": "object",
                "properties": {"filter": {"type": "object", "x-mcp-header": "Filter"}}
            })),
        ),
    ]
}

fn report_schema() -> Value {
    json!({
        "type": "object",
        "properties": {"count": {"type": "integer"}, "topic": {"type": "string"}},
        "required": ["count", "topic"]
    })
}

fn structured() -> Vec<Tool> {
    let input = json!({
        "type": "object",
        "properties": {
            "topic": {"type": "string"},
            "note": {"type": "string", "description": "Optional."}
        },
        "required": ["topic"],
        "additionalProperties": false
    });
    vec![
        Tool::new(
            "report",
            "Count the sources on a topic; the answer follows its outputSchema.",
            schema(input.clone()),
        )
        .with_raw_output_schema(schema(report_schema())),
        Tool::new(
            "bad_report",
            "Count the sources on a topic; the answer breaks its own outputSchema.",
            schema(input),
        )
        .with_raw_output_schema(schema(report_schema())),
    ]
}

/// The answer of a `structured` tool.
pub fn answer(name: &str, args: &JsonObject) -> CallToolResult {
    let topic = args.get("topic").and_then(Value::as_str).unwrap_or("");
    let structured = if name == "bad_report" {
        json!({"count": "three", "topic": topic})
    } else {
        json!({"count": 3, "topic": topic})
    };
    let mut result = CallToolResult::success(vec![ContentBlock::text(format!(
        "{name}: {structured} (arguments {})",
        Value::Object(args.clone())
    ))]);
    result.structured_content = Some(structured);
    result
}
