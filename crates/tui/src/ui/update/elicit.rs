//! The elicitation form's keys: ↑/↓ (Tab) move between fields, typing fills a
//! text field, Space/←/→ toggle a checkbox, pick a choice or an option of a
//! multi-select, Enter sends from any field — after checking every field, with
//! the problem shown on its field; nothing is ever sent as a silent cancel.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use crate::protocol::{Command, ElicitAnswer, FieldKind, FieldProblem};
use crate::ui::keymap::{self, Action, Scope};
use crate::ui::msg::Effect;
use crate::ui::state::{AppState, ElicitForm, FieldValue};

pub fn key(state: &mut AppState, key: KeyEvent) -> Vec<Effect> {
    let Some(form) = state.elicitations.front_mut() else {
        return Vec::new();
    };
    let id = form.view.id;
    if form.sent {
        state.say("the answer is on its way to the server; wait a moment");
        return Vec::new();
    }
    let answer = match keymap::lookup(Scope::Elicitation, &key) {
        Some(Action::Submit) => match form.answer() {
            Some(content) => ElicitAnswer::Accept(content),
            None => return Vec::new(),
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
    // An accepted answer leaves the screen only once the backend took it (it
    // checks it against the server's schema too); a refusal or cancel goes now.
    if matches!(answer, ElicitAnswer::Accept(_)) {
        if let Some(form) = state.elicitations.front_mut() {
            form.sent = true;
        }
    } else {
        close(state, id);
    }
    vec![Effect::Send(Command::Elicitation { id, answer })]
}

/// Takes form `id` off the screen; the next one gets its own quiet moment.
pub fn close(state: &mut AppState, id: u64) {
    state.elicitations.retain(|f| f.view.id != id);
    let now = state.now;
    if let Some(next) = state.elicitations.front_mut() {
        next.opened = now;
    }
}

/// The backend refused an answer: the problems go on their fields.
pub fn refused(state: &mut AppState, id: u64, problems: Vec<FieldProblem>) {
    let Some(form) = state.elicitations.iter_mut().find(|f| f.view.id == id) else {
        return;
    };
    form.sent = false;
    let mut whole = Vec::new();
    for problem in problems {
        let at = problem
            .field
            .as_ref()
            .and_then(|name| form.view.fields.iter().position(|f| f.name == *name));
        match at {
            Some(i) => form.problems[i] = Some(problem.message),
            None => whole.push(problem.message),
        }
    }
    if let Some(first) = form.problems.iter().position(Option::is_some) {
        form.selected = first;
    }
    form.problem = Some(if whole.is_empty() {
        "the server's schema refused this answer; nothing was sent — fix the marked fields".into()
    } else {
        format!("nothing was sent: {}", whole.join("; "))
    });
}

fn edit(form: &mut ElicitForm, key: KeyEvent) {
    let i = form.selected;
    let (Some(field), Some(value)) = (form.view.fields.get(i), form.values.get_mut(i)) else {
        return;
    };
    let typed = key.modifiers.difference(KeyModifiers::SHIFT).is_empty();
    let changed = match (&field.kind, value, key.code) {
        (
            FieldKind::Boolean,
            FieldValue::Bool(b),
            KeyCode::Char(' ') | KeyCode::Left | KeyCode::Right,
        ) => {
            // An optional checkbox can go back to "not answered".
            *b = match (*b, field.required) {
                (Some(false), false) => None,
                (Some(v), _) => Some(!v),
                (None, _) => Some(true),
            };
            true
        }
        (
            FieldKind::Choice(options),
            FieldValue::One(at),
            KeyCode::Left | KeyCode::Right | KeyCode::Char(' '),
        ) if !options.is_empty() => {
            let n = options.len();
            *at = Some(match (*at, key.code) {
                (None, KeyCode::Left) => n - 1,
                (None, _) => 0,
                (Some(i), KeyCode::Left) => (i + n - 1) % n,
                (Some(i), _) => (i + 1) % n,
            });
            true
        }
        (FieldKind::Choices { options, .. }, FieldValue::Many { chosen, cursor }, code)
            if !options.is_empty() =>
        {
            let n = options.len();
            match code {
                KeyCode::Left => *cursor = (*cursor + n - 1) % n,
                KeyCode::Right => *cursor = (*cursor + 1) % n,
                KeyCode::Char(' ') => {
                    if let Some(c) = chosen.get_mut(*cursor) {
                        *c = !*c;
                    }
                }
                _ => return,
            }
            true
        }
        (_, FieldValue::Text(text), KeyCode::Char(c)) if typed => {
            text.push(c);
            true
        }
        (_, FieldValue::Text(text), KeyCode::Backspace) => text.pop().is_some(),
        _ => false,
    };
    if changed {
        form.problems[i] = None;
        form.problem = None;
    }
}

/// Pasted text goes into the selected text field, on one line (a form field
/// has no line breaks).
pub fn paste(state: &mut AppState, text: &str) {
    let Some(form) = state.elicitations.front_mut() else {
        return;
    };
    let i = form.selected;
    if let Some(FieldValue::Text(value)) = form.values.get_mut(i) {
        value.push_str(&text.replace('\n', " "));
        form.problems[i] = None;
        form.problem = None;
    }
}
