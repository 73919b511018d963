//! A tool's pinned form and its fingerprint: the object `{name, title?,
//! description?, inputSchema, outputSchema?, annotations?}` (absent members
//! omitted) in RFC 8785 canonical JSON, and the SHA-256 of that text.
//!
//! The canonical writer is ours, not a crate's: the RFC 8785 crates build an
//! intermediate buffer per object and re-parse every key to sort it (5 µs a
//! typical tool, half the budget of a 10,000-tool connect), while a
//! `serde_json::Value` already holds its keys sorted by code point, which is
//! the RFC's order unless a key holds a character at or above U+E000. Numbers
//! are formatted as ECMAScript does, by `ryu-js`; the tests check every output
//! against `serde_json_canonicalizer`.

use std::fmt::Write as _;

use serde_json::{Map, Number, Value};
use sha2::{Digest, Sha256};

use super::PinHash;
use crate::mcp::published::PublishedTool;

/// The definition as a JSON object (for display and diffs; members sorted).
pub fn definition(tool: &PublishedTool) -> Value {
    let mut object = Map::new();
    object.insert("name".into(), Value::String(tool.name.clone()));
    if let Some(title) = &tool.title {
        object.insert("title".into(), Value::String(title.clone()));
    }
    if let Some(description) = &tool.description {
        object.insert("description".into(), Value::String(description.clone()));
    }
    object.insert("inputSchema".into(), (*tool.input_schema).clone());
    if let Some(output) = &tool.output_schema {
        object.insert("outputSchema".into(), (**output).clone());
    }
    if let Some(annotations) = &tool.annotations {
        object.insert("annotations".into(), annotations.clone());
    }
    Value::Object(object)
}

/// The canonical text of the definition, written member by member (in the
/// RFC's order: annotations, description, inputSchema, name, outputSchema,
/// title) without building the object first.
pub fn canonical(tool: &PublishedTool, out: &mut Vec<u8>) {
    out.clear();
    out.push(b'{');
    let mut first = true;
    let mut member = |out: &mut Vec<u8>, key: &str, write: &dyn Fn(&mut Vec<u8>)| {
        if !first {
            out.push(b',');
        }
        first = false;
        write_str(out, key);
        out.push(b':');
        write(out);
    };
    if let Some(a) = &tool.annotations {
        member(out, "annotations", &|o| write_value(o, a));
    }
    if let Some(d) = &tool.description {
        member(out, "description", &|o| write_str(o, d));
    }
    member(out, "inputSchema", &|o| write_value(o, &tool.input_schema));
    member(out, "name", &|o| write_str(o, &tool.name));
    if let Some(s) = &tool.output_schema {
        member(out, "outputSchema", &|o| write_value(o, s));
    }
    if let Some(t) = &tool.title {
        member(out, "title", &|o| write_str(o, t));
    }
    out.push(b'}');
}

/// The canonical text of any JSON value.
pub fn canonical_value(value: &Value) -> String {
    let mut out = Vec::new();
    write_value(&mut out, value);
    // Only whole UTF-8 strings and ASCII were written.
    String::from_utf8(out).unwrap_or_default()
}

/// The pin of a tool as published now.
pub fn fingerprint(tool: &PublishedTool, scratch: &mut Vec<u8>) -> PinHash {
    canonical(tool, scratch);
    hash(scratch)
}

/// The SHA-256 of canonical text, lowercase hex.
pub fn hash(canonical: &[u8]) -> PinHash {
    let digest = Sha256::digest(canonical);
    let mut hex = String::with_capacity(64);
    for byte in digest.iter() {
        let _ = write!(hex, "{byte:02x}");
    }
    PinHash(hex)
}

fn write_value(out: &mut Vec<u8>, value: &Value) {
    match value {
        Value::Null => out.extend_from_slice(b"null"),
        Value::Bool(true) => out.extend_from_slice(b"true"),
        Value::Bool(false) => out.extend_from_slice(b"false"),
        Value::Number(n) => write_number(out, n),
        Value::String(s) => write_str(out, s),
        Value::Array(items) => {
            out.push(b'[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_value(out, item);
            }
            out.push(b']');
        }
        Value::Object(map) => {
            out.push(b'{');
            // Code point order (the map's) is UTF-16 order unless a key holds a
            // character from U+E000 up, where surrogate pairs sort first.
            let members: Vec<(&String, &Value)> =
                if map.keys().any(|k| k.chars().any(|c| c >= '\u{e000}')) {
                    let mut members: Vec<_> = map.iter().collect();
                    members.sort_by(|a, b| a.0.encode_utf16().cmp(b.0.encode_utf16()));
                    members
                } else {
                    map.iter().collect()
                };
            for (i, (key, item)) in members.into_iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_str(out, key);
                out.push(b':');
                write_value(out, item);
            }
            out.push(b'}');
        }
    }
}

/// Numbers are IEEE 754 doubles, printed as ECMAScript's `Number.toString`.
fn write_number(out: &mut Vec<u8>, n: &Number) {
    let value = n.as_f64().unwrap_or_default();
    if value.is_finite() {
        out.extend_from_slice(ryu_js::Buffer::new().format_finite(value).as_bytes());
    } else {
        // serde_json never holds these; keep the output valid JSON regardless.
        out.extend_from_slice(b"null");
    }
}

/// Only `"`, `\` and C0 controls are escaped (short forms where JSON has them);
/// everything else is written as itself.
fn write_str(out: &mut Vec<u8>, text: &str) {
    out.push(b'"');
    let bytes = text.as_bytes();
    let mut start = 0;
    for (i, &byte) in bytes.iter().enumerate() {
        let short: &[u8] = match byte {
            b'"' => b"\\\"",
            b'\\' => b"\\\\",
            b'\n' => b"\\n",
            b'\r' => b"\\r",
            b'\t' => b"\\t",
            0x08 => b"\\b",
            0x0c => b"\\f",
            0x00..=0x1f => b"",
            _ => continue,
        };
        out.extend_from_slice(&bytes[start..i]);
        if short.is_empty() {
            out.extend_from_slice(format!("\\u{byte:04x}").as_bytes());
        } else {
            out.extend_from_slice(short);
        }
        start = i + 1;
    }
    out.extend_from_slice(&bytes[start..]);
    out.push(b'"');
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::sync::Arc;

    fn tool(value: Value) -> PublishedTool {
        PublishedTool::from_json(
            &value,
            crate::mcp::published::Position { page: 1, index: 0 },
        )
        .expect("a well-formed tool")
    }

    fn oracle(value: &Value) -> String {
        String::from_utf8(serde_json_canonicalizer::to_vec(value).unwrap()).unwrap()
    }

    #[test]
    fn values_match_the_rfc_8785_reference_implementation() {
        let values = [
            json!({"b": 1, "a": [true, false, null], "c": {"z": "", "y": {}}}),
            json!([
                1.0,
                1e21,
                1e-7,
                -0.0,
                0.1,
                123456789012345678u64,
                -5,
                1.5e-7,
                1e300,
                4.5
            ]),
            json!({"\u{e000}": 1, "\u{1f600}": 2, "\u{ff}": 3, "a": 4, "": 5}),
            json!(
                "quote \" backslash \\ nl \n cr \r tab \t bs \u{8} ff \u{c} nul \u{0} us \u{1f} del \u{7f}"
            ),
            json!("é \u{202e} \u{e0041}\u{e0042} \u{200b} \u{2028} 😀"),
            json!({"numbers": [0, 1, -1, 9007199254740993u64, 2.5e-300, 1e22, 100]}),
        ];
        for value in &values {
            assert_eq!(canonical_value(value), oracle(value), "{value}");
        }
    }

    #[test]
    fn the_composed_definition_is_the_canonical_form_of_the_object() {
        let tools = [
            tool(json!({"name": "lookup", "inputSchema": {"type": "object"}})),
            tool(json!({
                "name": "t\u{e000}", "title": "T", "description": "does\nthings \u{e0049}",
                "inputSchema": {"type": "object", "properties": {"k": {"type": "string", "default": null}}},
                "outputSchema": {"type": "object"},
                "annotations": {"readOnlyHint": true, "title": "x"}
            })),
        ];
        let mut scratch = Vec::new();
        for t in &tools {
            canonical(t, &mut scratch);
            assert_eq!(
                String::from_utf8(scratch.clone()).unwrap(),
                oracle(&definition(t))
            );
        }
    }

    #[test]
    fn absent_members_are_omitted_and_every_member_counts() {
        let base = json!({"name": "a", "inputSchema": {"type": "object"}});
        let mut scratch = Vec::new();
        let pin = fingerprint(&tool(base.clone()), &mut scratch);
        assert_eq!(pin.as_str().len(), 64);
        assert!(
            pin.as_str()
                .chars()
                .all(|c| matches!(c, '0'..='9' | 'a'..='f'))
        );
        canonical(&tool(base.clone()), &mut scratch);
        assert_eq!(scratch, br#"{"inputSchema":{"type":"object"},"name":"a"}"#);
        // An explicit null is no member at all.
        let with_null = json!({"name": "a", "inputSchema": {"type": "object"}, "title": null});
        assert_eq!(fingerprint(&tool(with_null), &mut scratch), pin);
        for changed in [
            json!({"name": "b", "inputSchema": {"type": "object"}}),
            json!({"name": "a", "inputSchema": {"type": "object"}, "title": ""}),
            json!({"name": "a", "inputSchema": {"type": "object"}, "description": "d"}),
            json!({"name": "a", "inputSchema": {"type": "object", "required": []}}),
            json!({"name": "a", "inputSchema": {"type": "object"}, "outputSchema": {"type": "object"}}),
            json!({"name": "a", "inputSchema": {"type": "object"}, "annotations": {}}),
        ] {
            assert_ne!(
                fingerprint(&tool(changed.clone()), &mut scratch),
                pin,
                "{changed}"
            );
        }
        // Key order and number spelling as published do not matter.
        let a = tool(
            json!({"name": "a", "inputSchema": {"type": "object", "maximum": 1.0, "minimum": 0}}),
        );
        let b = PublishedTool {
            input_schema: Arc::new(json!({"minimum": 0.0, "type": "object", "maximum": 1})),
            ..a.clone()
        };
        assert_eq!(fingerprint(&a, &mut scratch), fingerprint(&b, &mut scratch));
    }

    #[test]
    fn the_hash_is_sha256_of_the_text() {
        // SHA-256("abc"), FIPS 180-2 appendix B.1.
        assert_eq!(
            hash(b"abc").as_str(),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }
}
