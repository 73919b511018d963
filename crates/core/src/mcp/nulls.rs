//! Arguments as models send them: in strict structured-output modes a model
//! fills every property, writing `null` for the optional ones it means to leave
//! out. A `null` the schema does not admit, for a property that is not
//! required, is dropped before validation — and the call's detail says so.
//! Everything else is validated as it came (a `null` for a required property
//! stays, and fails).

use jsonschema::Validator;
use jsonschema::error::ValidationErrorKind;
use serde_json::Value;

/// Drops the `null`s the schema refuses at optional properties; returns the
/// JSON pointers of what was dropped (empty when nothing was).
pub fn drop_refused_nulls(validator: &Validator, arguments: &mut Value) -> Vec<String> {
    if validator.is_valid(arguments) {
        return Vec::new();
    }
    // Every `null` an error points at.
    let mut candidates: Vec<String> = validator
        .iter_errors(arguments)
        .map(|e| e.instance_path().to_string())
        .filter(|path| {
            arguments.pointer(path).is_some_and(Value::is_null) && is_member(arguments, path)
        })
        .collect();
    candidates.sort();
    candidates.dedup();
    if candidates.is_empty() {
        return Vec::new();
    }
    let mut trial = arguments.clone();
    for path in &candidates {
        remove(&mut trial, path);
    }
    // A property that is required after all keeps its `null` (and fails as sent).
    let required: Vec<String> = validator
        .iter_errors(&trial)
        .filter_map(|e| match e.kind() {
            ValidationErrorKind::Required { property } => property
                .as_str()
                .map(|p| format!("{}/{}", e.instance_path(), escape(p))),
            _ => None,
        })
        .collect();
    candidates.retain(|path| !required.contains(path));
    for path in &candidates {
        remove(arguments, path);
    }
    candidates
}

fn escape(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

fn unescape(token: &str) -> String {
    token.replace("~1", "/").replace("~0", "~")
}

/// Whether `pointer` names a member of an object (not an array element, not the root).
fn is_member(root: &Value, pointer: &str) -> bool {
    pointer
        .rsplit_once('/')
        .is_some_and(|(parent, _)| root.pointer(parent).is_some_and(Value::is_object))
}

/// Removes the object member at `pointer` (arrays keep their elements: a
/// `null` in a list is a value, not an omitted property).
fn remove(root: &mut Value, pointer: &str) {
    let Some((parent, key)) = pointer.rsplit_once('/') else {
        return;
    };
    if let Some(Value::Object(object)) = root.pointer_mut(parent) {
        object.remove(&unescape(key));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn validator(schema: Value) -> Validator {
        jsonschema::validator_for(&schema).unwrap()
    }

    #[test]
    fn refused_nulls_of_optional_properties_are_dropped() {
        let v = validator(json!({
            "type": "object",
            "properties": {
                "region": {"type": "string"},
                "verbose": {"type": "boolean"},
                "maybe": {"type": ["string", "null"]},
                "nested": {"type": "object", "properties": {"depth": {"type": "integer"}}},
                "list": {"type": "array", "items": {"type": "integer"}}
            },
            "required": ["region"]
        }));
        let mut args = json!({"region": "eu", "verbose": null, "maybe": null,
                              "nested": {"depth": null}, "list": [1, null]});
        let dropped = drop_refused_nulls(&v, &mut args);
        assert_eq!(dropped, ["/nested/depth", "/verbose"]);
        assert_eq!(
            args,
            json!({"region": "eu", "maybe": null, "nested": {}, "list": [1, null]}),
            "admitted nulls and nulls in arrays stay"
        );
    }

    #[test]
    fn a_null_for_a_required_property_stays() {
        let v = validator(json!({
            "type": "object",
            "properties": {"region": {"type": "string"}, "a/b": {"type": "string"}},
            "required": ["region"]
        }));
        let mut args = json!({"region": null, "a/b": null});
        assert_eq!(drop_refused_nulls(&v, &mut args), ["/a~1b"]);
        assert_eq!(args, json!({"region": null}));
        let mut valid = json!({"region": "x"});
        assert!(drop_refused_nulls(&v, &mut valid).is_empty());
    }
}
