//! A form's fields from the requested schema (the spec's restricted subset),
//! in the server's order: strings with their format, numbers, integers,
//! booleans, single-select (plain `enum`, titled `oneOf`, legacy `enumNames`)
//! and multi-select arrays (plain `items.enum`, titled `items.anyOf`).

use serde_json::Value;

use crate::protocol::{Choice, FieldKind, FieldView, TextFormat};

/// The fields, in `order` (the server's); a property missing from `order`
/// comes after, by name.
pub fn fields(schema: &Value, order: &[String]) -> Vec<FieldView> {
    let required: Vec<&str> = schema["required"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    let Some(properties) = schema["properties"].as_object() else {
        return Vec::new();
    };
    let mut names: Vec<&String> = order
        .iter()
        .filter(|n| properties.contains_key(n.as_str()))
        .collect();
    names.extend(properties.keys().filter(|k| !order.contains(k)));
    names
        .into_iter()
        .filter_map(|name| {
            let p = properties.get(name)?;
            Some(FieldView {
                name: name.clone(),
                title: text(p, "title"),
                description: text(p, "description"),
                kind: kind(p),
                required: required.contains(&name.as_str()),
                default: p.get("default").cloned(),
            })
        })
        .collect()
}

fn text(p: &Value, key: &str) -> Option<String> {
    p.get(key).and_then(Value::as_str).map(str::to_string)
}

fn kind(p: &Value) -> FieldKind {
    if let Some(options) = single_select(p) {
        return FieldKind::Choice(options);
    }
    match p["type"].as_str() {
        Some("array") => FieldKind::Choices {
            options: single_select(&p["items"]).unwrap_or_default(),
            min: p["minItems"].as_u64(),
            max: p["maxItems"].as_u64(),
        },
        Some("boolean") => FieldKind::Boolean,
        Some("integer") => FieldKind::Integer {
            minimum: p["minimum"].as_i64(),
            maximum: p["maximum"].as_i64(),
        },
        Some("number") => FieldKind::Number {
            minimum: p["minimum"].as_f64(),
            maximum: p["maximum"].as_f64(),
        },
        _ => FieldKind::Text {
            format: match p["format"].as_str() {
                Some("email") => Some(TextFormat::Email),
                Some("uri") => Some(TextFormat::Uri),
                Some("date") => Some(TextFormat::Date),
                Some("date-time") => Some(TextFormat::DateTime),
                _ => None,
            },
            min_length: p["minLength"].as_u64(),
            max_length: p["maxLength"].as_u64(),
        },
    }
}

/// The options of a single-select schema (or of an array's `items`): `enum`
/// with the legacy `enumNames` as titles, or `oneOf`/`anyOf` of `{const, title}`.
fn single_select(p: &Value) -> Option<Vec<Choice>> {
    if let Some(values) = p["enum"].as_array() {
        let titles = p["enumNames"].as_array();
        let options: Vec<Choice> = values
            .iter()
            .enumerate()
            .filter_map(|(i, v)| {
                Some(Choice {
                    value: v.as_str()?.to_string(),
                    title: titles
                        .and_then(|t| t.get(i))
                        .and_then(Value::as_str)
                        .map(str::to_string),
                })
            })
            .collect();
        return (!options.is_empty()).then_some(options);
    }
    let titled = p["oneOf"].as_array().or_else(|| p["anyOf"].as_array())?;
    let options: Vec<Choice> = titled
        .iter()
        .filter_map(|o| {
            Some(Choice {
                value: o["const"].as_str()?.to_string(),
                title: text(o, "title"),
            })
        })
        .collect();
    (!options.is_empty()).then_some(options)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn every_field_type_in_the_servers_order() {
        let schema = json!({
            "type": "object",
            "properties": {
                "name": {"type": "string", "title": "Your name", "minLength": 2},
                "email": {"type": "string", "format": "email"},
                "age": {"type": "integer", "minimum": 0, "maximum": 150},
                "score": {"type": "number"},
                "ok": {"type": "boolean", "default": true},
                "plain": {"type": "string", "enum": ["a", "b"]},
                "titled": {"type": "string", "oneOf": [{"const": "r", "title": "Red"}]},
                "legacy": {"type": "string", "enum": ["x"], "enumNames": ["Ex"]},
                "many": {"type": "array", "items": {"type": "string", "enum": ["p", "q"]}, "minItems": 1, "maxItems": 2},
                "many_titled": {"type": "array", "items": {"anyOf": [{"const": "s", "title": "Ess"}]}}
            },
            "required": ["name"]
        });
        let order: Vec<String> = [
            "name",
            "email",
            "age",
            "score",
            "ok",
            "plain",
            "titled",
            "legacy",
            "many",
            "many_titled",
        ]
        .map(String::from)
        .to_vec();
        let fields = fields(&schema, &order);
        let names: Vec<&str> = fields.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(names, order, "the server's order, not the alphabet");
        assert_eq!(fields[0].title.as_deref(), Some("Your name"));
        assert!(fields[0].required && !fields[1].required);
        assert!(matches!(
            fields[1].kind,
            FieldKind::Text {
                format: Some(TextFormat::Email),
                ..
            }
        ));
        assert_eq!(
            fields[2].kind,
            FieldKind::Integer {
                minimum: Some(0),
                maximum: Some(150)
            }
        );
        assert_eq!(fields[4].default, Some(json!(true)));
        let titled = |i: usize| match &fields[i].kind {
            FieldKind::Choice(options) => options.clone(),
            other => panic!("{other:?}"),
        };
        assert_eq!(titled(5)[1].value, "b");
        assert_eq!(titled(6)[0].title.as_deref(), Some("Red"));
        assert_eq!(titled(7)[0].title.as_deref(), Some("Ex"));
        assert!(matches!(
            &fields[8].kind,
            FieldKind::Choices { options, min: Some(1), max: Some(2) } if options.len() == 2
        ));
        assert!(matches!(
            &fields[9].kind,
            FieldKind::Choices { options, .. } if options[0].title.as_deref() == Some("Ess")
        ));
    }
}
