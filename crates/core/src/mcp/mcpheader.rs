//! `x-mcp-header` (2026-07-28, Streamable HTTP): a property of a tool's input
//! schema may ask to be mirrored into an `Mcp-Param-{name}` header. A
//! definition whose annotations break the spec's constraints must not be used;
//! rmcp drops such tools from the listing without a word, the harness rejects
//! the connection naming each (rule 5: what is published is what is judged).

use std::collections::HashSet;

use serde_json::{Map, Value};

use super::names::quote;

const KEY: &str = "x-mcp-header";

/// RFC 9110 `tchar`.
fn is_tchar(c: char) -> bool {
    c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c)
}

/// Which of the spec's constraints an `x-mcp-header` annotation breaks (`at`
/// is the property's quoted path).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HeaderError {
    #[error("x-mcp-header annotates the schema root, not a property")]
    AtRoot,
    #[error("x-mcp-header at {} is not on a `properties` path from the root", quote(.0))]
    OffChain(String),
    #[error("property {at}: x-mcp-header must be a string")]
    NotAString { at: String },
    #[error("property {at}: x-mcp-header is empty")]
    Empty { at: String },
    #[error("property {at}: x-mcp-header {} is not an HTTP field-name token", quote(.header))]
    NotAToken { at: String, header: String },
    #[error("property {at}: x-mcp-header {} is used twice (case-insensitively)", quote(.header))]
    Twice { at: String, header: String },
    #[error("property {at}: x-mcp-header is only allowed on string, integer or boolean properties")]
    WrongType { at: String },
}

/// Why the `x-mcp-header` annotations of `schema` are invalid, if they are.
pub fn check(schema: &Value) -> Result<(), HeaderError> {
    let Some(root) = schema.as_object() else {
        return Ok(());
    };
    if root.contains_key(KEY) {
        return Err(HeaderError::AtRoot);
    }
    let mut seen = HashSet::new();
    walk_properties(root, &mut Vec::new(), &mut seen)?;
    // Anywhere else (inside `items`, `anyOf`, `$defs`, …) it is not statically reachable.
    if let Some(path) = off_chain(root, true) {
        return Err(HeaderError::OffChain(path));
    }
    Ok(())
}

fn walk_properties(
    schema: &Map<String, Value>,
    path: &mut Vec<String>,
    seen: &mut HashSet<String>,
) -> Result<(), HeaderError> {
    let Some(Value::Object(properties)) = schema.get("properties") else {
        return Ok(());
    };
    for (name, property) in properties {
        let Some(property) = property.as_object() else {
            continue;
        };
        path.push(name.clone());
        if let Some(header) = property.get(KEY) {
            let at = quote(&path.join("."));
            let Value::String(header) = header else {
                return Err(HeaderError::NotAString { at });
            };
            if header.is_empty() {
                return Err(HeaderError::Empty { at });
            }
            if !header.chars().all(is_tchar) {
                let header = header.clone();
                return Err(HeaderError::NotAToken { at, header });
            }
            if !seen.insert(header.to_ascii_lowercase()) {
                let header = header.clone();
                return Err(HeaderError::Twice { at, header });
            }
            match property.get("type").and_then(Value::as_str) {
                Some("string" | "integer" | "boolean") => {}
                _ => return Err(HeaderError::WrongType { at }),
            }
        }
        walk_properties(property, path, seen)?;
        path.pop();
    }
    Ok(())
}

/// The path of an annotation outside every `properties` chain, if any.
fn off_chain(schema: &Map<String, Value>, on_chain: bool) -> Option<String> {
    if !on_chain && schema.contains_key(KEY) {
        return Some("(nested schema)".into());
    }
    for (keyword, value) in schema {
        let nested = match (keyword.as_str(), value) {
            // Data, not schemas.
            ("const" | "enum" | "default" | "examples", _) => None,
            ("properties", Value::Object(properties)) => properties
                .iter()
                .filter_map(|(name, p)| Some((name, p.as_object()?)))
                .find_map(|(name, p)| off_chain(p, on_chain).map(|inner| join(name, &inner))),
            (_, Value::Object(sub)) => off_chain(sub, false),
            (_, Value::Array(items)) => items
                .iter()
                .filter_map(Value::as_object)
                .find_map(|sub| off_chain(sub, false)),
            _ => None,
        };
        if nested.is_some() {
            return nested;
        }
    }
    None
}

fn join(name: &str, inner: &str) -> String {
    if inner.starts_with('(') {
        format!("{name} {inner}")
    } else {
        format!("{name}.{inner}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn with(property: Value) -> Value {
        json!({"type": "object", "properties": {"p": property}})
    }

    #[test]
    fn valid_annotations_pass() {
        assert!(check(&with(json!({"type": "string", "x-mcp-header": "Region"}))).is_ok());
        assert!(check(&json!({"type": "object", "properties": {
            "outer": {"type": "object", "properties": {"id": {"type": "integer", "x-mcp-header": "Id"}}}
        }}))
        .is_ok());
        assert!(check(&json!({"type": "object"})).is_ok());
    }

    #[test]
    fn the_spec_constraints_are_enforced() {
        for bad in [
            with(json!({"type": "string", "x-mcp-header": ""})),
            with(json!({"type": "object", "x-mcp-header": "Data"})),
            with(json!({"type": "array", "items": {"type": "string"}, "x-mcp-header": "Items"})),
            with(json!({"type": "null", "x-mcp-header": "Nil"})),
            with(json!({"type": "number", "x-mcp-header": "Score"})),
            with(json!({"type": "string", "x-mcp-header": "My Region"})),
            with(json!({"type": "string", "x-mcp-header": "Region:Primary"})),
            with(json!({"type": "string", "x-mcp-header": "Région"})),
            with(json!({"type": "string", "x-mcp-header": "Region\t1"})),
            with(json!({"type": "string", "x-mcp-header": 7})),
            json!({"type": "object", "x-mcp-header": "Root"}),
            json!({"type": "object", "properties": {
                "a": {"type": "string", "x-mcp-header": "MyField"},
                "b": {"type": "string", "x-mcp-header": "myfield"}
            }}),
            json!({"type": "object", "properties": {
                "a": {"type": "array", "items": {"type": "string", "x-mcp-header": "Deep"}}
            }}),
        ] {
            assert!(check(&bad).is_err(), "{bad}");
        }
    }
}
