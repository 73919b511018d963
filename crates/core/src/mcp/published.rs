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
}

/// Where a tool sat in the listing, for messages about tools without a usable name.
#[derive(Debug, Clone, Copy)]
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

    /// What the harness flags about this definition.
    pub fn flags(&self) -> Vec<ToolFlag> {
        if self.has_hidden_text() {
            vec![ToolFlag::HiddenText]
        } else {
            Vec::new()
        }
    }

    /// Parses one tool definition from raw JSON, so that one malformed tool is
    /// reported by name (or position) instead of failing the whole page.
    pub fn from_json(raw: &Value, at: Position) -> Result<Self, String> {
        let where_ = || format!("tool #{} on page {}", at.index + 1, at.page);
        let obj = raw
            .as_object()
            .ok_or_else(|| format!("{} is not a JSON object", where_()))?;
        let name = match obj.get("name") {
            Some(Value::String(s)) if !s.is_empty() => s.clone(),
            Some(Value::String(_)) => return Err(format!("{} has an empty `name`", where_())),
            Some(other) => {
                return Err(format!(
                    "{} has a non-string `name` ({})",
                    where_(),
                    kind(other)
                ));
            }
            None => return Err(format!("{} has no `name`", where_())),
        };
        let named = || format!("tool {}", quote(&name));
        let input_schema = match obj.get("inputSchema") {
            Some(v @ Value::Object(_)) => Arc::new(v.clone()),
            Some(other) => {
                return Err(format!(
                    "{}: `inputSchema` must be a JSON object, found {}",
                    named(),
                    kind(other)
                ));
            }
            None => return Err(format!("{} has no `inputSchema`", named())),
        };
        let text = |field: &str| -> Result<Option<String>, String> {
            match obj.get(field) {
                None | Some(Value::Null) => Ok(None),
                Some(Value::String(s)) => Ok(Some(s.clone())),
                Some(other) => Err(format!(
                    "{}: `{field}` must be a string, found {}",
                    named(),
                    kind(other)
                )),
            }
        };
        let output_schema = match obj.get("outputSchema") {
            None | Some(Value::Null) => None,
            Some(v @ Value::Object(_)) => Some(Arc::new(v.clone())),
            Some(other) => {
                return Err(format!(
                    "{}: `outputSchema` must be a JSON object, found {}",
                    named(),
                    kind(other)
                ));
            }
        };
        let annotations = match obj.get("annotations") {
            None | Some(Value::Null) => None,
            Some(v @ Value::Object(_)) => Some(v.clone()),
            Some(other) => {
                return Err(format!(
                    "{}: `annotations` must be an object, found {}",
                    named(),
                    kind(other)
                ));
            }
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
        assert_eq!(e, "tool #1 on page 2 has a non-string `name` (a number)");
        let e = PublishedTool::from_json(&json!({"name": "no_schema"}), AT).unwrap_err();
        assert_eq!(e, "tool `no_schema` has no `inputSchema`");
        let e =
            PublishedTool::from_json(&json!({"name": "s", "inputSchema": "x"}), AT).unwrap_err();
        assert!(e.contains("must be a JSON object, found a string"), "{e}");
        let e = PublishedTool::from_json(&json!("tool"), AT).unwrap_err();
        assert!(e.contains("is not a JSON object"));
    }
}
