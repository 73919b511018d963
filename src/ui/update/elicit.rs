//! The elicitation form: a server asked for input. Typing fills the selected
//! field; Space toggles a boolean; ←/→ pick a choice; Enter sends; the values are
//! checked against the fields' kinds before anything is sent.

use std::time::Instant;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use serde_json::{Map, Value};

use crate::protocol::{Command, ElicitAnswer, ElicitationView, FieldKind};
use crate::ui::keymap::{self, Action, Scope};
use crate::ui::msg::Effect;
use crate::ui::state::{AppState, ElicitForm};

/// A new form with the schema's defaults filled in.
pub fn form(view: ElicitationView, now: Instant) -> ElicitForm {
    let values = view
        .fields
        .iter()
        .map(|f| match (&f.default, &f.kind) {
            (Some(d), _) => d.clone(),
            (None, FieldKind::Boolean) => "false".into(),
            (None, FieldKind::Choice(options)) if f.required => {
                options.first().cloned().unwrap_or_default()
            }
            (None, _) => String::new(),
        })
        .collect();
    ElicitForm {
        view,
        values,
        selected: 0,
        problem: None,
        opened: now,
    }
}

pub fn key(state: &mut AppState, key: KeyEvent) -> Vec<Effect> {
    let Some(form) = state.elicitations.front_mut() else {
        return Vec::new();
    };
    let id = form.view.id;
    let answer = match keymap::lookup(Scope::Elicitation, &key) {
        Some(Action::Submit) => match content(form) {
            Ok(content) => ElicitAnswer::Accept(content),
            Err(problem) => {
                form.problem = Some(problem);
                return Vec::new();
            }
        },
        Some(Action::Deny) => ElicitAnswer::Decline,
        Some(Action::Close) => ElicitAnswer::Cancel,
        Some(Action::Up) => {
            form.selected = form.selected.saturating_sub(1);
            return Vec::new();
        }
        Some(Action::Down) => {
            form.selected = (form.selected + 1).min(form.view.fields.len().saturating_sub(1));
            return Vec::new();
        }
        _ => {
            edit(form, key);
            return Vec::new();
        }
    };
    state.elicitations.pop_front();
    // The next form gets its own quiet moment.
    let now = state.now;
    if let Some(next) = state.elicitations.front_mut() {
        next.opened = now;
    }
    vec![Effect::Send(Command::Elicitation { id, answer })]
}

fn edit(form: &mut ElicitForm, key: KeyEvent) {
    let Some(field) = form.view.fields.get(form.selected) else {
        return;
    };
    let Some(value) = form.values.get_mut(form.selected) else {
        return;
    };
    form.problem = None;
    match (&field.kind, key.code) {
        (FieldKind::Boolean, KeyCode::Char(' ') | KeyCode::Left | KeyCode::Right) => {
            *value = if value == "true" {
                "false".into()
            } else {
                "true".into()
            };
        }
        (FieldKind::Choice(options), KeyCode::Left | KeyCode::Right | KeyCode::Char(' '))
            if !options.is_empty() =>
        {
            let at = options.iter().position(|o| o == value);
            let next = match (at, key.code) {
                (None, _) => 0,
                (Some(i), KeyCode::Left) => (i + options.len() - 1) % options.len(),
                (Some(i), _) => (i + 1) % options.len(),
            };
            *value = options[next].clone();
        }
        (FieldKind::Text | FieldKind::Number | FieldKind::Integer, KeyCode::Char(c))
            if key.modifiers.difference(KeyModifiers::SHIFT).is_empty() =>
        {
            value.push(c)
        }
        (FieldKind::Text | FieldKind::Number | FieldKind::Integer, KeyCode::Backspace) => {
            value.pop();
        }
        _ => {}
    }
}

/// Pasted text goes into the selected text field, on one line (a form field
/// has no line breaks).
pub fn paste(state: &mut AppState, text: &str) {
    let Some(form) = state.elicitations.front_mut() else {
        return;
    };
    let kind = form.view.fields.get(form.selected).map(|f| &f.kind);
    if let (Some(FieldKind::Text | FieldKind::Number | FieldKind::Integer), Some(value)) =
        (kind, form.values.get_mut(form.selected))
    {
        value.push_str(&text.replace('\n', " "));
        form.problem = None;
    }
}

/// The answer's content, or why it cannot be sent yet.
pub fn content(form: &ElicitForm) -> Result<Map<String, Value>, String> {
    let mut content = Map::new();
    for (field, text) in form.view.fields.iter().zip(&form.values) {
        if text.is_empty() {
            if field.required {
                return Err(format!("`{}` is required", field.name));
            }
            continue;
        }
        let value = match &field.kind {
            FieldKind::Text | FieldKind::Choice(_) => Value::String(text.clone()),
            FieldKind::Boolean => Value::Bool(text == "true"),
            FieldKind::Integer => Value::from(
                text.trim()
                    .parse::<i64>()
                    .map_err(|_| format!("`{}` must be a whole number", field.name))?,
            ),
            FieldKind::Number => {
                let n = text
                    .trim()
                    .parse::<f64>()
                    .map_err(|_| format!("`{}` must be a number", field.name))?;
                serde_json::Number::from_f64(n)
                    .map(Value::Number)
                    .ok_or_else(|| format!("`{}` must be a finite number", field.name))?
            }
        };
        content.insert(field.name.clone(), value);
    }
    Ok(content)
}
