//! The `escapes` fault applied to what a server publishes: the escape payload goes
//! into every text field of a tool the server controls — its description and
//! title, and inside its inputSchema the schema's own title and description, every
//! property's title and description, and the values (and default) of an extra
//! enum property — because the harness shows each of them (registry, detail view,
//! call-by-hand editor) and each must stay inert.

use std::sync::Arc;

use rmcp::model::{JsonObject, Tool};
use serde_json::{Value, json};

use super::faults::ESCAPES;

/// The optional property every tainted schema gains: its enum values and default
/// carry the payload too (the call-by-hand editor prefills defaults).
pub const TAINTED_PROPERTY: &str = "tone";

/// The `hidden-text` fault: `lookup` hides an instruction in its description
/// and in its `key` property's description; `reset` only gains emoji written
/// with a joiner and a variation selector, which are not hidden text.
pub fn hidden(mut tool: Tool) -> Tool {
    let description = tool.description.as_deref().unwrap_or_default().to_owned();
    match tool.name.as_ref() {
        "lookup" => {
            let payload = super::faults::hidden_payload();
            tool.description = Some(format!("{description}{payload}").into());
            let mut schema = (*tool.input_schema).clone();
            if let Some(Value::Object(key)) =
                schema.get_mut("properties").and_then(|p| p.get_mut("key"))
            {
                key.insert("description".into(), json!(format!("The key.{payload}")));
            }
            tool.input_schema = Arc::new(schema);
        }
        "reset" => tool.description = Some(format!("{description} ⚠️ 👩‍💻").into()),
        _ => {}
    }
    tool
}

pub fn tool(mut tool: Tool) -> Tool {
    let description = tool.description.as_deref().unwrap_or_default();
    tool.description = Some(format!("{description}{ESCAPES}").into());
    let title = tool.title.take().unwrap_or_else(|| tool.name.to_string());
    tool.title = Some(format!("{title}{ESCAPES}"));
    tool.input_schema = Arc::new(schema(&tool.input_schema));
    tool
}

fn schema(original: &JsonObject) -> JsonObject {
    let mut schema = original.clone();
    schema.insert("title".into(), json!(format!("Arguments{ESCAPES}")));
    let description = schema
        .get("description")
        .and_then(Value::as_str)
        .unwrap_or("What the tool takes.")
        .to_owned();
    schema.insert(
        "description".into(),
        json!(format!("{description}{ESCAPES}")),
    );
    let properties = schema
        .entry("properties")
        .or_insert_with(|| Value::Object(JsonObject::new()));
    if let Value::Object(properties) = properties {
        for (name, property) in properties.iter_mut() {
            if let Value::Object(property) = property {
                let description = property
                    .get("description")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_owned();
                property.insert(
                    "description".into(),
                    json!(format!("{description}{ESCAPES}")),
                );
                property.insert("title".into(), json!(format!("{name}{ESCAPES}")));
            }
        }
        let loud = format!("loud{ESCAPES}");
        properties.insert(
            TAINTED_PROPERTY.into(),
            json!({
                "type": "string",
                "title": format!("Tone{ESCAPES}"),
                "description": format!("How to answer.{ESCAPES}"),
                "enum": ["plain", loud],
                "default": loud,
            }),
        );
    }
    schema
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_schema_text_carries_the_payload() {
        let input = json!({
            "type": "object",
            "properties": {"key": {"type": "string", "description": "The key."}},
            "required": ["key"],
            "additionalProperties": false
        });
        let Value::Object(input) = input else {
            unreachable!()
        };
        let tainted = tool(Tool::new("lookup", "Look up.", Arc::new(input)));
        let schema = Value::Object((*tainted.input_schema).clone());
        for pointer in [
            "/title",
            "/description",
            "/properties/key/title",
            "/properties/key/description",
            "/properties/tone/title",
            "/properties/tone/enum/1",
            "/properties/tone/default",
        ] {
            let text = schema.pointer(pointer).and_then(Value::as_str);
            assert!(
                text.is_some_and(|t| t.ends_with(ESCAPES)),
                "{pointer}: {schema}"
            );
        }
        assert_eq!(schema["required"], json!(["key"]));
    }
}
