//! Arguments a schema does not declare (issue 24). A schema that lists
//! `properties` but does not say `additionalProperties: false` admits any other
//! key as well: `{"city": "Boston", "__exec": "curl … | sh"}` would validate and
//! reach the server. Unless the operator allows it (`extra_arguments =
//! "allow"`), such keys are refused before the wire, like any other invalid
//! argument. What a schema declares is worked out once per exposed tool, at
//! exposure; a call only looks its keys up.

use std::collections::BTreeSet;

use regex::Regex;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::schema::ArgumentError;

/// `[servers.ALIAS] extra_arguments`: what happens to arguments outside the
/// properties a tool's schema declares, when the schema itself does not say.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ExtraArguments {
    /// Refused before the wire (`mcp_invalid_arguments`, naming them).
    #[default]
    Refuse,
    /// Sent as the model wrote them (the schema's own word).
    Allow,
}

/// How one exposed tool treats arguments its schema does not declare: what
/// `check` shows, so the operator sees which schemas would admit anything.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Undeclared {
    /// The schema refuses them itself (`additionalProperties: false` or
    /// `unevaluatedProperties: false`).
    RefusedBySchema,
    /// The schema would admit them; the harness refuses them.
    RefusedByHarness,
    /// They reach the server: the schema admits them explicitly
    /// (`additionalProperties: true` or a schema), declares no properties, or
    /// the alias has `extra_arguments = "allow"`.
    Admitted,
}

/// The argument names a schema declares: the refusal the harness adds.
#[derive(Debug, Clone)]
pub struct Declared {
    names: BTreeSet<String>,
    patterns: Vec<Regex>,
}

/// How deep combinators and local `$ref`s are followed; deeper (or cyclic)
/// schemas are left to their own word (nothing refused).
const MAX_DEPTH: usize = 16;

/// At most this many undeclared keys are named in one envelope.
const MAX_NAMED: usize = 20;

/// Classifies `schema` under `mode`; `Some` when the harness refuses what it
/// does not declare.
pub fn classify(schema: &Value, mode: ExtraArguments) -> (Undeclared, Option<Declared>) {
    let says = |keyword: &str| schema.get(keyword);
    match (says("additionalProperties"), says("unevaluatedProperties")) {
        (Some(Value::Bool(false)), _) | (_, Some(Value::Bool(false))) => {
            return (Undeclared::RefusedBySchema, None);
        }
        // The schema's explicit word on other keys (true, or a schema) is respected.
        (Some(_), _) | (_, Some(_)) => return (Undeclared::Admitted, None),
        (None, None) => {}
    }
    let mut declared = Declared {
        names: BTreeSet::new(),
        patterns: Vec::new(),
    };
    let mut patterns = BTreeSet::new();
    if !collect(schema, schema, 0, &mut declared.names, &mut patterns)
        || (declared.names.is_empty() && patterns.is_empty())
    {
        return (Undeclared::Admitted, None);
    }
    for pattern in patterns {
        match Regex::new(&pattern) {
            Ok(regex) => declared.patterns.push(regex),
            // A pattern this engine cannot read: the harness cannot judge
            // which keys it admits, so it refuses none.
            Err(_) => return (Undeclared::Admitted, None),
        }
    }
    match mode {
        ExtraArguments::Allow => (Undeclared::Admitted, None),
        ExtraArguments::Refuse => (Undeclared::RefusedByHarness, Some(declared)),
    }
}

/// Gathers the names and patterns `node` declares, following the combinators
/// that apply to the same object (`allOf`, `anyOf`, `oneOf`, `if`/`then`/`else`,
/// `dependentSchemas`, local `$ref`s). False: a part of it admits other keys
/// explicitly, or cannot be followed — then nothing is refused.
fn collect(
    node: &Value,
    root: &Value,
    depth: usize,
    names: &mut BTreeSet<String>,
    patterns: &mut BTreeSet<String>,
) -> bool {
    if depth > MAX_DEPTH {
        return false;
    }
    let Value::Object(map) = node else {
        // `true` admits anything; `false` admits nothing (no keys to add).
        return !matches!(node, Value::Bool(true)) || depth == 0;
    };
    if depth > 0 {
        match map.get("additionalProperties") {
            None | Some(Value::Bool(false)) => {}
            Some(_) => return false,
        }
        match map.get("unevaluatedProperties") {
            None | Some(Value::Bool(false)) => {}
            Some(_) => return false,
        }
    }
    if let Some(Value::Object(properties)) = map.get("properties") {
        names.extend(properties.keys().cloned());
    }
    if let Some(Value::Object(properties)) = map.get("patternProperties") {
        patterns.extend(properties.keys().cloned());
    }
    if let Some(Value::Array(required)) = map.get("required") {
        names.extend(
            required
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_string),
        );
    }
    let mut subs: Vec<&Value> = Vec::new();
    for keyword in ["allOf", "anyOf", "oneOf"] {
        if let Some(Value::Array(list)) = map.get(keyword) {
            subs.extend(list);
        }
    }
    for keyword in ["if", "then", "else"] {
        subs.extend(map.get(keyword));
    }
    if let Some(Value::Object(dependent)) = map.get("dependentSchemas") {
        subs.extend(dependent.values());
    }
    for keyword in ["$ref", "$dynamicRef"] {
        if let Some(Value::String(reference)) = map.get(keyword) {
            // Only local pointers reach here (the schema rule refuses others).
            let Some(target) = reference
                .strip_prefix('#')
                .and_then(|pointer| resolve(root, pointer))
            else {
                return false;
            };
            subs.push(target);
        }
    }
    subs.into_iter()
        .all(|sub| collect(sub, root, depth + 1, names, patterns))
}

/// A local JSON pointer; a percent-encoded one is not followed (nothing is
/// refused then, which is the safe side for a rare form).
fn resolve<'a>(root: &'a Value, pointer: &str) -> Option<&'a Value> {
    match pointer {
        "" => Some(root),
        p if p.contains('%') => None,
        p => root.pointer(p),
    }
}

impl Declared {
    /// The keys of `arguments` the schema does not declare, in order.
    pub fn undeclared<'a>(&self, arguments: &'a Map<String, Value>) -> Vec<&'a str> {
        arguments
            .keys()
            .filter(|key| {
                !self.names.contains(*key) && !self.patterns.iter().any(|p| p.is_match(key))
            })
            .map(String::as_str)
            .collect()
    }

    /// One argument error per undeclared key, for the envelope.
    pub fn errors(&self, keys: &[&str]) -> Vec<ArgumentError> {
        let declared: Vec<String> = self
            .names
            .iter()
            .take(MAX_NAMED)
            .map(|n| quote(n))
            .collect();
        let declared = if declared.is_empty() {
            "none".to_string()
        } else {
            declared.join(", ")
        };
        keys.iter()
            .take(MAX_NAMED)
            .map(|key| ArgumentError {
                instance_path: format!("/{}", key.replace('~', "~0").replace('/', "~1")),
                message: format!(
                    "{} is not a parameter of this tool (declared: {declared})",
                    quote(key)
                ),
            })
            .collect()
    }
}

/// The model wrote the keys, the server the declared names: both inert here.
fn quote(text: &str) -> String {
    format!("`{}`", crate::sanitize::for_model_line(text, 80))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn refused(schema: Value) -> Declared {
        match classify(&schema, ExtraArguments::Refuse) {
            (Undeclared::RefusedByHarness, Some(d)) => d,
            other => panic!("{schema}: {:?}", other.0),
        }
    }

    fn args(value: Value) -> Map<String, Value> {
        value.as_object().unwrap().clone()
    }

    #[test]
    fn keys_outside_the_declared_properties_are_found() {
        let d = refused(
            json!({"type": "object", "properties": {"city": {"type": "string"},
                                "units": {"type": "string"}}, "required": ["city"]}),
        );
        assert_eq!(
            d.undeclared(&args(json!({"__exec": "curl x | sh", "city": "Boston"}))),
            ["__exec"]
        );
        // The benign twin: an optional parameter given or left out.
        assert!(
            d.undeclared(&args(json!({"city": "Boston", "units": "C"})))
                .is_empty()
        );
        assert!(d.undeclared(&args(json!({"city": "Boston"}))).is_empty());
        let errors = d.errors(&["a/b"]);
        assert_eq!(errors[0].instance_path, "/a~1b");
        assert!(errors[0].message.contains("`city`, `units`"), "{errors:?}");
    }

    #[test]
    fn the_schemas_own_word_is_respected() {
        let open = json!({"type": "object", "properties": {"a": {}}, "additionalProperties": true});
        assert_eq!(
            classify(&open, ExtraArguments::Refuse).0,
            Undeclared::Admitted
        );
        let typed = json!({"type": "object", "properties": {"a": {}},
                           "additionalProperties": {"type": "string"}});
        assert_eq!(
            classify(&typed, ExtraArguments::Refuse).0,
            Undeclared::Admitted
        );
        let closed =
            json!({"type": "object", "properties": {"a": {}}, "additionalProperties": false});
        assert_eq!(
            classify(&closed, ExtraArguments::Refuse).0,
            Undeclared::RefusedBySchema
        );
        let unevaluated = json!({"type": "object", "unevaluatedProperties": false});
        assert_eq!(
            classify(&unevaluated, ExtraArguments::Refuse).0,
            Undeclared::RefusedBySchema
        );
        // No properties declared: nothing to hold the keys against.
        let bare = json!({"type": "object"});
        assert_eq!(
            classify(&bare, ExtraArguments::Refuse).0,
            Undeclared::Admitted
        );
        // The operator's word.
        let plain = json!({"type": "object", "properties": {"a": {}}});
        assert!(matches!(
            classify(&plain, ExtraArguments::Allow),
            (Undeclared::Admitted, None)
        ));
    }

    #[test]
    fn combinators_patterns_and_local_references_declare_too() {
        let d = refused(json!({
            "type": "object",
            "$defs": {"paging": {"properties": {"page": {"type": "integer"}}}},
            "properties": {"q": {"type": "string"}},
            "patternProperties": {"^x-": {"type": "string"}},
            "allOf": [{"$ref": "#/$defs/paging"}],
            "anyOf": [{"properties": {"limit": {}}}, {"required": ["cursor"]}]
        }));
        let given = args(json!({"q": 1, "x-trace": "t", "page": 2, "limit": 3,
                                "cursor": "c", "other": 0}));
        assert_eq!(d.undeclared(&given), ["other"]);
        // A part that admits other keys explicitly leaves the decision to the schema.
        let nested_open = json!({"type": "object", "properties": {"a": {}},
                                 "allOf": [{"additionalProperties": true}]});
        assert_eq!(
            classify(&nested_open, ExtraArguments::Refuse).0,
            Undeclared::Admitted
        );
        // A reference that cannot be followed, or a cycle, refuses nothing.
        let dangling =
            json!({"type": "object", "properties": {"a": {}}, "allOf": [{"$ref": "#/$defs/no"}]});
        assert_eq!(
            classify(&dangling, ExtraArguments::Refuse).0,
            Undeclared::Admitted
        );
        let cycle = json!({"type": "object", "properties": {"a": {}}, "$defs": {"c": {"$ref": "#/$defs/c"}},
                           "allOf": [{"$ref": "#/$defs/c"}]});
        assert_eq!(
            classify(&cycle, ExtraArguments::Refuse).0,
            Undeclared::Admitted
        );
    }
}
