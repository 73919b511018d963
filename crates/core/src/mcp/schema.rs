//! The schema is the execution boundary (SPEC rule 4).
//!
//! A published `inputSchema` must be an object schema, may only reference itself
//! (`#…` pointers), and must compile before its tool is exposed. At call time the
//! arguments are validated here before anything goes over the wire.

use jsonschema::{PatternOptions, Validator};
use serde::Serialize;
use serde_json::Value;

/// Why a published schema cannot be the boundary of an exposed tool.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SchemaProblem {
    /// Top-level `"type"` is not `"object"`; the detail says what it is.
    NotObject(String),
    /// A `$ref` (or `$dynamicRef`) that is not a local JSON pointer. Never fetched.
    ExternalRef(String),
    /// The schema does not compile; the detail is the compiler's message.
    Invalid(String),
}

/// One reason the arguments do not match the schema.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ArgumentError {
    /// JSON pointer into the arguments (`""` is the arguments object itself).
    pub instance_path: String,
    pub message: String,
}

/// At most this many argument errors go into one envelope.
const MAX_ARGUMENT_ERRORS: usize = 20;
const MAX_ERROR_MESSAGE_CHARS: usize = 300;

/// Keywords whose value is a map of subschemas.
const SCHEMA_MAPS: &[&str] = &[
    "properties",
    "patternProperties",
    "$defs",
    "definitions",
    "dependentSchemas",
    "dependencies",
];
/// Keywords whose value is one subschema (or, for `items` in old drafts, an array).
const SCHEMA_SINGLE: &[&str] = &[
    "additionalProperties",
    "items",
    "additionalItems",
    "contains",
    "not",
    "if",
    "then",
    "else",
    "propertyNames",
    "unevaluatedItems",
    "unevaluatedProperties",
    "contentSchema",
];
/// Keywords whose value is an array of subschemas.
const SCHEMA_ARRAYS: &[&str] = &["allOf", "anyOf", "oneOf", "prefixItems"];
const REF_KEYWORDS: &[&str] = &["$ref", "$dynamicRef", "$recursiveRef"];

/// Checks the shape rules that need no compiler: top-level object type and
/// local-only references.
pub fn screen(schema: &Value) -> Result<(), SchemaProblem> {
    match schema.get("type") {
        Some(Value::String(t)) if t == "object" => {}
        Some(other) => {
            return Err(SchemaProblem::NotObject(format!(
                "top-level `type` is {other}"
            )));
        }
        None => {
            return Err(SchemaProblem::NotObject(
                "top-level `type` is missing".into(),
            ));
        }
    }
    match find_external_ref(schema) {
        Some(reference) => Err(SchemaProblem::ExternalRef(reference)),
        None => Ok(()),
    }
}

/// Walks schema positions only (not `const`, `enum`, `default`, `examples`: those
/// are data, and a `$ref` key inside data is not a reference).
fn find_external_ref(schema: &Value) -> Option<String> {
    let Value::Object(map) = schema else {
        return None;
    };
    for keyword in REF_KEYWORDS {
        if let Some(Value::String(reference)) = map.get(*keyword)
            && !reference.starts_with('#')
        {
            return Some(reference.clone());
        }
    }
    for (keyword, value) in map {
        let found = if SCHEMA_MAPS.contains(&keyword.as_str()) {
            value
                .as_object()
                .and_then(|subs| subs.values().find_map(find_external_ref))
        } else if SCHEMA_SINGLE.contains(&keyword.as_str()) {
            match value {
                Value::Array(subs) => subs.iter().find_map(find_external_ref),
                single => find_external_ref(single),
            }
        } else if SCHEMA_ARRAYS.contains(&keyword.as_str()) {
            value
                .as_array()
                .and_then(|subs| subs.iter().find_map(find_external_ref))
        } else {
            None
        };
        if found.is_some() {
            return found;
        }
    }
    None
}

/// Screens and compiles a schema strictly: meta-schema valid, no retrieval of any
/// kind (offline), and `pattern`s compiled with the linear-time regex engine so a
/// hostile pattern cannot stall validation (ReDoS).
pub fn compile(schema: &Value) -> Result<Validator, SchemaProblem> {
    screen(schema)?;
    jsonschema::options()
        .offline()
        .with_pattern_options(PatternOptions::regex())
        .build(schema)
        .map_err(|e| {
            SchemaProblem::Invalid(crate::sanitize::inert_line(
                &e.to_string(),
                MAX_ERROR_MESSAGE_CHARS,
            ))
        })
}

/// Compiles a tool's `outputSchema` under the same options: any JSON schema
/// (2026-07-28 allows non-object output), local references only, offline.
pub fn compile_output(schema: &Value) -> Result<Validator, SchemaProblem> {
    if let Some(reference) = find_external_ref(schema) {
        return Err(SchemaProblem::ExternalRef(reference));
    }
    jsonschema::options()
        .offline()
        .with_pattern_options(PatternOptions::regex())
        .build(schema)
        .map_err(|e| {
            SchemaProblem::Invalid(crate::sanitize::inert_line(
                &e.to_string(),
                MAX_ERROR_MESSAGE_CHARS,
            ))
        })
}

/// Validates call arguments; returns every error (bounded), each with its instance path.
pub fn validate(validator: &Validator, arguments: &Value) -> Vec<ArgumentError> {
    validator
        .iter_errors(arguments)
        .take(MAX_ARGUMENT_ERRORS)
        .map(|e| ArgumentError {
            instance_path: e.instance_path().to_string(),
            // Messages quote the schema (enum values, patterns): server text,
            // made inert and stripped of invisible code points before the model
            // or a terminal sees it.
            message: crate::sanitize::for_model_line(&e.to_string(), MAX_ERROR_MESSAGE_CHARS),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn requires_top_level_object_type() {
        assert_eq!(screen(&json!({"type": "object"})), Ok(()));
        assert!(matches!(
            screen(&json!({"type": "string"})),
            Err(SchemaProblem::NotObject(_))
        ));
        assert!(matches!(
            screen(&json!({"type": ["object", "null"]})),
            Err(SchemaProblem::NotObject(_))
        ));
        assert!(matches!(
            screen(&json!({"properties": {}})),
            Err(SchemaProblem::NotObject(_))
        ));
    }

    #[test]
    fn rejects_every_non_local_reference() {
        for reference in [
            "https://example.com/x.json",
            "file:///etc/passwd",
            "other.json",
            "/abs",
            "urn:x",
        ] {
            let schema = json!({"type":"object","properties":{"a":{"$ref": reference}}});
            assert_eq!(
                screen(&schema),
                Err(SchemaProblem::ExternalRef(reference.into())),
                "{reference}"
            );
        }
        let nested = json!({"type":"object","anyOf":[{"items":{"$dynamicRef":"http://x"}}]});
        assert_eq!(
            screen(&nested),
            Err(SchemaProblem::ExternalRef("http://x".into()))
        );
    }

    #[test]
    fn accepts_local_references_and_ref_keys_inside_data() {
        let schema = json!({
            "type": "object",
            "$defs": {"key": {"type": "string"}},
            "properties": {"key": {"$ref": "#/$defs/key"}, "$ref": {"type": "string"}},
            "default": {"$ref": "https://example.com/not-a-reference"},
            "enum": [{"$ref": "http://data"}]
        });
        assert_eq!(screen(&schema), Ok(()));
        assert!(compile(&schema).is_ok());
    }

    #[test]
    fn invalid_schemas_do_not_compile() {
        let schema = json!({"type":"object","properties":{"a":{"type":"no-such-type"}}});
        assert!(matches!(compile(&schema), Err(SchemaProblem::Invalid(_))));
        let backtracking =
            json!({"type":"object","properties":{"a":{"type":"string","pattern":"(?=a)"}}});
        assert!(matches!(
            compile(&backtracking),
            Err(SchemaProblem::Invalid(_))
        ));
    }

    #[test]
    fn validation_reports_every_error_with_its_path() {
        let schema = json!({
            "type": "object",
            "properties": {"key": {"type": "string"}, "n": {"type": "integer", "minimum": 0}},
            "required": ["key"],
            "additionalProperties": false
        });
        let v = compile(&schema).unwrap();
        assert!(validate(&v, &json!({"key": "x", "n": 1})).is_empty());
        let errors = validate(&v, &json!({"n": -1, "extra": true}));
        let paths: Vec<&str> = errors.iter().map(|e| e.instance_path.as_str()).collect();
        assert!(paths.contains(&"/n"), "{errors:?}");
        assert!(paths.contains(&""), "{errors:?}");
        assert_eq!(errors.len(), 3, "{errors:?}");
    }

    #[test]
    fn validation_messages_quoting_the_schema_are_inert_and_without_invisible_text() {
        let schema = json!({"type": "object", "properties": {
            "tone": {"enum": ["calm\u{9b}2J", "loud\u{202e}"]}
        }});
        let validator = compile(&schema).unwrap();
        let errors = validate(&validator, &json!({"tone": "other"}));
        assert_eq!(errors.len(), 1);
        let message = &errors[0].message;
        // Controls with their whole sequence and invisible characters (bidi
        // ones too) removed: the model reads these messages.
        assert!(
            message.contains("\"calm\"") && message.contains("\"loud\""),
            "{message}"
        );
        assert!(
            !message.contains("<U+009B>") && !message.contains("2J"),
            "{message}"
        );
        assert!(!message.contains('\u{9b}') && !message.contains('\u{202e}'));
        assert!(!message.contains("<U+202E>"), "{message}");
    }
}
