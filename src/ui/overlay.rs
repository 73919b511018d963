//! Keys of the overlays: help, tool detail, write-policy confirmation and the
//! arguments editor of a hand-made call (validated live against the schema).

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use serde_json::{Map, Value};

use super::keymap::{self, Action, Scope};
use super::state::{AppState, CallEditor, Overlay};
use super::update::{Effect, status};
use super::view::{RegistryRow, registry_rows};
use crate::protocol::Command;

pub fn key(state: &mut AppState, key: KeyEvent) -> Vec<Effect> {
    let scope = match &state.overlay {
        Some(Overlay::Help { .. }) => Scope::Help,
        Some(Overlay::ToolDetail { .. }) => Scope::Detail,
        Some(Overlay::WritePolicy { .. }) => Scope::WritePolicy,
        Some(Overlay::CallTool(_)) => Scope::CallTool,
        None => return Vec::new(),
    };
    if let Some(Action::InterruptOrQuit) = keymap::lookup(Scope::Global, &key) {
        state.overlay = None;
        return super::input::quit(state);
    }
    match (keymap::lookup(scope, &key), &mut state.overlay) {
        (Some(Action::Close), _) => state.overlay = None,
        (Some(Action::Up), Some(Overlay::ToolDetail { scroll, .. } | Overlay::Help { scroll })) => {
            *scroll = scroll.saturating_sub(1)
        }
        (
            Some(Action::Down),
            Some(Overlay::ToolDetail { scroll, .. } | Overlay::Help { scroll }),
        ) => *scroll = scroll.saturating_add(1),
        (Some(Action::CallByHand), Some(Overlay::ToolDetail { .. })) => open_call_editor(state),
        (Some(Action::Confirm), Some(Overlay::WritePolicy { alias })) => {
            let alias = alias.clone();
            state.overlay = None;
            return vec![Effect::Send(Command::WritePolicy(alias))];
        }
        (Some(Action::Submit), Some(Overlay::CallTool(editor))) => {
            return submit(editor.clone(), state);
        }
        (None, Some(Overlay::CallTool(editor))) => {
            match key.code {
                KeyCode::Char(c) if key.modifiers.difference(KeyModifiers::SHIFT).is_empty() => {
                    editor.text.push(c)
                }
                KeyCode::Enter => editor.text.push('\n'),
                KeyCode::Tab => editor.text.push_str("  "),
                KeyCode::Backspace => {
                    editor.text.pop();
                }
                _ => {}
            }
            revalidate(state);
        }
        _ => {}
    }
    Vec::new()
}

/// Opens the editor for the selected registry tool, prefilled from its schema.
pub fn open_call_editor(state: &mut AppState) {
    let row = registry_rows(state).get(state.selected_tool).copied();
    let Some(RegistryRow::Tool { tool, .. }) = row else {
        return;
    };
    let Some(exposed) = tool.exposed_as.clone() else {
        let why = tool
            .why_not
            .clone()
            .unwrap_or_else(|| "it is not exposed".into());
        status(
            state,
            format!(
                "cannot call {}: {why}",
                crate::sanitize::inert_line(&tool.name, 60)
            ),
        );
        return;
    };
    let schema = tool.input_schema.clone();
    let text = serde_json::to_string_pretty(&prefill(&schema)).unwrap_or_else(|_| "{}".into());
    state.overlay = Some(Overlay::CallTool(CallEditor {
        tool: exposed,
        schema,
        text,
        problem: None,
    }));
    revalidate(state);
}

/// `{}` with each property's `default`, and a placeholder for required ones.
pub fn prefill(schema: &Value) -> Value {
    let mut args = Map::new();
    let required: Vec<&str> = schema["required"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    if let Some(properties) = schema["properties"].as_object() {
        for (name, property) in properties {
            if let Some(default) = property.get("default") {
                args.insert(name.clone(), default.clone());
            } else if required.contains(&name.as_str()) {
                let placeholder = match property["type"].as_str() {
                    Some("integer" | "number") => Value::from(0),
                    Some("boolean") => Value::Bool(false),
                    Some("array") => Value::Array(Vec::new()),
                    Some("object") => Value::Object(Map::new()),
                    _ => Value::String(String::new()),
                };
                args.insert(name.clone(), placeholder);
            }
        }
    }
    Value::Object(args)
}

/// Parses and validates the editor's text; the problem is shown under it.
pub fn revalidate(state: &mut AppState) {
    let Some(Overlay::CallTool(editor)) = &mut state.overlay else {
        return;
    };
    editor.problem = match serde_json::from_str::<Value>(&editor.text) {
        Err(e) => Some(format!("not valid JSON yet: {e}")),
        Ok(args) => match jsonschema::validator_for(&editor.schema) {
            Err(e) => Some(format!("the schema does not compile: {e}")),
            Ok(validator) => {
                let errors: Vec<String> = validator
                    .iter_errors(&args)
                    .take(3)
                    .map(|e| format!("at `{}`: {e}", e.instance_path()))
                    .collect();
                (!errors.is_empty()).then(|| errors.join("; "))
            }
        },
    };
}

fn submit(editor: CallEditor, state: &mut AppState) -> Vec<Effect> {
    if let Some(problem) = &editor.problem {
        status(state, format!("fix the arguments first: {problem}"));
        return Vec::new();
    }
    let Ok(arguments) = serde_json::from_str(&editor.text) else {
        return Vec::new();
    };
    state.overlay = None;
    vec![Effect::Send(Command::CallTool {
        name: editor.tool,
        arguments,
    })]
}
