//! What `conformance-client` does once connected: the calls a scenario asks
//! for (`MCP_CONFORMANCE_CONTEXT.toolCalls`), or else every exposed tool with
//! arguments made from its published `inputSchema` — and the protocol revision
//! the suite runs the scenario at (`MCP_CONFORMANCE_PROTOCOL_VERSION`).

use serde_json::{Map, Value, json};

use mcp_harness::mcp::{ProtocolChoice, PublishedTool};

/// The variable the suite sets to the revision it runs the scenario at.
pub const PROTOCOL_VAR: &str = "MCP_CONFORMANCE_PROTOCOL_VERSION";

/// The tool that echoes a schema back (`json-schema-2020-12-preservation`).
const SCHEMA_ECHO: &str = "json_schema_echo";

/// How deep argument generation follows nested schemas.
const MAX_DEPTH: usize = 8;

/// The suite asks clients to derive the lifecycle from the revision it names:
/// 2026-07-28 is stateless, dated revisions before it use the handshake.
pub fn protocol(requested: Option<&str>) -> ProtocolChoice {
    match requested {
        Some("2026-07-28") => ProtocolChoice::Stateless,
        Some(v) if v.len() == 10 && v < "2026-07-28" => ProtocolChoice::Handshake,
        _ => ProtocolChoice::Auto,
    }
}

/// One planned call: the published name and its arguments (`None`: no
/// schema-valid arguments could be made, so the call is skipped).
pub type Planned = (String, Option<Value>);

/// The calls to make: the context's `toolCalls` when present, else one call
/// per published tool, in listing order.
pub fn plan(context: &Value, published: &[PublishedTool]) -> Vec<Planned> {
    if let Some(calls) = context.get("toolCalls").and_then(Value::as_array) {
        return calls
            .iter()
            .filter_map(|call| {
                let name = call.get("name").and_then(Value::as_str)?;
                let arguments = call.get("arguments").cloned().unwrap_or(json!({}));
                Some((name.to_string(), Some(arguments)))
            })
            .collect();
    }
    published
        .iter()
        .map(|tool| {
            let arguments = if tool.name == SCHEMA_ECHO {
                echo_arguments(tool, published)
            } else {
                arguments(&tool.input_schema)
            };
            (tool.name.clone(), arguments)
        })
        .collect()
}

/// `{schema: <the published inputSchema of the tool the echo tool names>}`: the
/// tool named in the description of its `schema` property, else the first other tool.
fn echo_arguments(echo: &PublishedTool, published: &[PublishedTool]) -> Option<Value> {
    let hint = echo
        .input_schema
        .pointer("/properties/schema/description")
        .and_then(Value::as_str)
        .unwrap_or("");
    let others = || published.iter().filter(|t| t.name != echo.name);
    let named = others()
        .find(|t| hint.contains(&t.name))
        .or_else(|| others().next())?;
    Some(json!({ "schema": *named.input_schema }))
}

/// Arguments that satisfy `schema`: the required properties (and those with a
/// default), or failing that every property; `None` when neither validates
/// (the call is then skipped, not sent with arguments the harness would refuse).
pub fn arguments(schema: &Value) -> Option<Value> {
    let validator = mcp_harness::mcp::schema::compile(schema).ok()?;
    [false, true]
        .into_iter()
        .filter_map(|all| value_for(schema, schema, 0, all))
        .find(|candidate| mcp_harness::mcp::schema::validate(&validator, candidate).is_empty())
}

fn value_for(schema: &Value, root: &Value, depth: usize, all: bool) -> Option<Value> {
    if depth > MAX_DEPTH {
        return None;
    }
    let object = schema.as_object()?;
    if let Some(value) = object.get("const").or_else(|| object.get("default")) {
        return Some(value.clone());
    }
    if let Some(first) = object
        .get("enum")
        .and_then(Value::as_array)
        .and_then(|e| e.first())
    {
        return Some(first.clone());
    }
    if let Some(reference) = object.get("$ref").and_then(Value::as_str) {
        let target = reference.strip_prefix('#').and_then(|p| root.pointer(p))?;
        return value_for(target, root, depth + 1, all);
    }
    for union in ["anyOf", "oneOf", "allOf"] {
        if let Some(first) = object
            .get(union)
            .and_then(Value::as_array)
            .and_then(|b| b.first())
            && !object.contains_key("type")
        {
            return value_for(first, root, depth + 1, all);
        }
    }
    let kind = match object.get("type") {
        Some(Value::String(kind)) => kind.as_str(),
        Some(Value::Array(kinds)) => kinds
            .iter()
            .filter_map(Value::as_str)
            .next()
            .unwrap_or("object"),
        _ if object.contains_key("properties") => "object",
        _ => return Some(json!({})),
    };
    let number = |key: &str| object.get(key).and_then(Value::as_f64);
    Some(match kind {
        "object" => {
            let required: Vec<&str> = object
                .get("required")
                .and_then(Value::as_array)
                .map(|r| r.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            let mut out = Map::new();
            if let Some(properties) = object.get("properties").and_then(Value::as_object) {
                for (name, property) in properties {
                    let has_default = property.get("default").is_some();
                    if all || required.contains(&name.as_str()) || has_default {
                        out.insert(name.clone(), value_for(property, root, depth + 1, all)?);
                    }
                }
            }
            Value::Object(out)
        }
        "string" => {
            let min = object.get("minLength").and_then(Value::as_u64).unwrap_or(1);
            Value::String("x".repeat(usize::try_from(min.max(1)).unwrap_or(1)))
        }
        "integer" => json!(number("minimum").map_or(1, |m| m.ceil() as i64)),
        "number" => json!(number("minimum").unwrap_or(1.0)),
        "boolean" => json!(true),
        "null" => Value::Null,
        "array" => {
            let min = object.get("minItems").and_then(Value::as_u64).unwrap_or(0);
            let item = object.get("items").cloned().unwrap_or(json!({}));
            let items = (0..min)
                .map(|_| value_for(&item, root, depth + 1, all))
                .collect::<Option<Vec<_>>>()?;
            Value::Array(items)
        }
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arguments_follow_the_schema() {
        let schema = json!({
            "type": "object",
            "$defs": {"id": {"type": "string", "minLength": 3}},
            "properties": {
                "a": {"type": "number"},
                "b": {"type": "integer", "minimum": 4},
                "c": {"type": "string", "enum": ["red", "green"]},
                "d": {"$ref": "#/$defs/id"},
                "e": {"type": "boolean", "default": false},
                "f": {"type": "string"},
                "g": {"type": "array", "minItems": 2, "items": {"type": "integer"}}
            },
            "required": ["a", "b", "c", "d", "g"]
        });
        assert_eq!(
            arguments(&schema),
            Some(json!({"a": 1.0, "b": 4, "c": "red", "d": "xxx", "e": false, "g": [1, 1]}))
        );
        assert_eq!(arguments(&json!({"type": "object"})), Some(json!({})));
        // Required only through a conditional: every property is tried next.
        let conditional = json!({
            "type": "object",
            "properties": {"kind": {"type": "string", "enum": ["phone"]}, "phone": {"type": "string"}},
            "if": {"properties": {"kind": {"const": "phone"}}, "required": ["kind"]},
            "then": {"required": ["phone"]},
            "else": {"required": ["kind"]},
            "additionalProperties": false
        });
        assert_eq!(
            arguments(&conditional),
            Some(json!({"kind": "phone", "phone": "x"}))
        );
        assert_eq!(
            arguments(&json!({"type": "object", "required": ["x"], "properties": {}})),
            None
        );
    }

    #[test]
    fn the_suite_names_the_revision() {
        assert_eq!(protocol(Some("2026-07-28")), ProtocolChoice::Stateless);
        assert_eq!(protocol(Some("2025-11-25")), ProtocolChoice::Handshake);
        assert_eq!(protocol(Some("2025-06-18")), ProtocolChoice::Handshake);
        assert_eq!(protocol(None), ProtocolChoice::Auto);
    }
}
