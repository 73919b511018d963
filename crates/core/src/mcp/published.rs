//! What a server announced via `tools/list`: external, untrusted data.

use std::sync::Arc;

use serde::Serialize;
use serde_json::Value;

use super::names::quote;

/// A tool as the server published it. Names, descriptions and annotations are
/// the server's claims: shown to the operator (inert), never used as permission.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PublishedTool {
    /// The remote name, exactly as published; used for the protocol call.
    pub name: String,
    pub title: Option<String>,
    pub description: Option<String>,
    /// The input schema as published (a JSON object; validated by `schema.rs`).
    pub input_schema: Arc<Value>,
    /// `outputSchema` as published: part of the definition the operator pins
    /// (rule 14); `structuredContent` is checked against it.
    pub output_schema: Option<Arc<Value>>,
    /// `annotations` as published (`readOnlyHint`, `destructiveHint`, …): claims only.
    pub annotations: Option<Value>,
    /// `execution.taskSupport`: whether calls run as tasks.
    pub task_support: TaskSupport,
}

/// `execution.taskSupport` of a tool (2025-11-25 tasks): `forbidden` when absent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TaskSupport {
    #[default]
    Forbidden,
    Optional,
    Required,
}

/// Something the harness noticed about a published definition, shown beside it
/// (registry, `check`, the audit log). Local facts, not the server's claims.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolFlag {
    /// The definition holds invisible code points (SPEC rule 15): the operator
    /// sees them as `<U+XXXX>`, the model gets them removed.
    HiddenText,
    /// The poisoning screen found text addressed to the model in it (SPEC
    /// rule 20): never trusted on first use.
    Suspicious,
}

/// Where a tool sat in the listing, for messages about tools without a usable name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Position {
    pub page: usize,
    pub index: usize,
}

impl PublishedTool {
    /// Whether any text of the definition (name, title, description, every
    /// string and key of the input schema and annotations) holds an invisible
    /// code point outside an emoji.
    pub fn has_hidden_text(&self) -> bool {
        use crate::sanitize::hidden::{has_hidden, value_has_hidden};
        has_hidden(&self.name)
            || self.title.as_deref().is_some_and(has_hidden)
            || self.description.as_deref().is_some_and(has_hidden)
            || value_has_hidden(&self.input_schema)
            || self.annotations.as_ref().is_some_and(value_has_hidden)
    }

    /// What the harness flags about this definition, published in `listing`
    /// (the screen does not count the listing's own tools as another's).
    pub fn flags(&self, listing: &[PublishedTool]) -> Vec<ToolFlag> {
        let mut flags = Vec::new();
        if self.has_hidden_text() {
            flags.push(ToolFlag::HiddenText);
        }
        if !super::screen::tool(self, listing).is_empty() {
            flags.push(ToolFlag::Suspicious);
        }
        flags
    }

    /// Parses one tool definition from raw JSON, so that one malformed tool is
    /// reported by name (or position) instead of failing the whole page.
    pub fn from_json(raw: &Value, at: Position) -> Result<Self, DefinitionError> {
        let obj = raw.as_object().ok_or(DefinitionError::NotAnObject(at))?;
        let name = match obj.get("name") {
            Some(Value::String(s)) if !s.is_empty() => s.clone(),
            Some(Value::String(_)) => return Err(DefinitionError::EmptyName(at)),
            Some(other) => {
                return Err(DefinitionError::NameNotAString {
                    at,
                    found: kind(other),
                });
            }
            None => return Err(DefinitionError::NoName(at)),
        };
        let wrong = |field: &'static str, expected: &'static str, found: &Value| {
            DefinitionError::WrongType {
                tool: name.clone(),
                field,
                expected,
                found: kind(found),
            }
        };
        let input_schema = match obj.get("inputSchema") {
            Some(v @ Value::Object(_)) => Arc::new(v.clone()),
            Some(other) => return Err(wrong("inputSchema", "a JSON object", other)),
            None => return Err(DefinitionError::NoInputSchema(name.clone())),
        };
        let text = |field: &'static str| match obj.get(field) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(other) => Err(wrong(field, "a string", other)),
        };
        let output_schema = match obj.get("outputSchema") {
            None | Some(Value::Null) => None,
            Some(v @ Value::Object(_)) => Some(Arc::new(v.clone())),
            Some(other) => return Err(wrong("outputSchema", "a JSON object", other)),
        };
        let annotations = match obj.get("annotations") {
            None | Some(Value::Null) => None,
            Some(v @ Value::Object(_)) => Some(v.clone()),
            Some(other) => return Err(wrong("annotations", "an object", other)),
        };
        let task_support = match obj
            .get("execution")
            .and_then(|e| e.get("taskSupport"))
            .and_then(Value::as_str)
        {
            Some("required") => TaskSupport::Required,
            Some("optional") => TaskSupport::Optional,
            _ => TaskSupport::Forbidden,
        };
        Ok(Self {
            title: text("title")?,
            description: text("description")?,
            name,
            input_schema,
            output_schema,
            annotations,
            task_support,
        })
    }
}

/// Why one published tool definition is unusable: says which tool (by name, or
/// by position when it has no usable name) and which field.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DefinitionError {
    #[error("tool #{} on page {} is not a JSON object", .0.index + 1, .0.page)]
    NotAnObject(Position),
    #[error("tool #{} on page {} has an empty `name`", .0.index + 1, .0.page)]
    EmptyName(Position),
    #[error("tool #{} on page {} has a non-string `name` ({found})", .at.index + 1, .at.page)]
    NameNotAString { at: Position, found: &'static str },
    #[error("tool #{} on page {} has no `name`", .0.index + 1, .0.page)]
    NoName(Position),
    #[error("tool {} has no `inputSchema`", quote(.0))]
    NoInputSchema(String),
    #[error("tool {}: `{field}` must be {expected}, found {found}", quote(.tool))]
    WrongType {
        tool: String,
        field: &'static str,
        expected: &'static str,
        found: &'static str,
    },
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const AT: Position = Position { page: 2, index: 0 };

    #[test]
    fn parses_a_well_formed_tool() {
        let t = PublishedTool::from_json(
            &json!({"name":"lookup","description":"d","inputSchema":{"type":"object"},
                    "annotations":{"readOnlyHint":true}}),
            AT,
        )
        .unwrap();
        assert_eq!(t.name, "lookup");
        assert_eq!(t.description.as_deref(), Some("d"));
        assert_eq!(t.annotations, Some(json!({"readOnlyHint":true})));
    }

    #[test]
    fn reports_malformed_tools_by_name_or_position() {
        let e = PublishedTool::from_json(&json!({"name": 42, "inputSchema": {}}), AT).unwrap_err();
        assert_eq!(
            e.to_string(),
            "tool #1 on page 2 has a non-string `name` (a number)"
        );
        let e = PublishedTool::from_json(&json!({"name": "no_schema"}), AT).unwrap_err();
        assert_eq!(e.to_string(), "tool `no_schema` has no `inputSchema`");
        let e =
            PublishedTool::from_json(&json!({"name": "s", "inputSchema": "x"}), AT).unwrap_err();
        assert!(
            e.to_string()
                .contains("must be a JSON object, found a string"),
            "{e}"
        );
        let e = PublishedTool::from_json(&json!("tool"), AT).unwrap_err();
        assert!(e.to_string().contains("is not a JSON object"));
    }
}
