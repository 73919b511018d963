//! Keys of the overlays: help, tool detail, write-policy confirmation and the
//! arguments editor of a hand-made call (validated live against the schema).

use crossterm::event::KeyEvent;
use ratatui_textarea::{CursorMove, Input, TextArea};
use serde_json::{Map, Value};

use crate::protocol::Command;
use crate::ui::keymap::{self, Action, Scope};
use crate::ui::layout::{help_area, max_scroll, overlay_area};
use crate::ui::msg::Effect;
use crate::ui::rows::{RegistryRow, registry_rows};
use crate::ui::state::{AppState, CallEditor, Overlay};
use crate::ui::{content, pins};

pub fn key(state: &mut AppState, key: KeyEvent) -> Vec<Effect> {
    let scope = match &state.overlay {
        Some(Overlay::Help { .. }) => Scope::Help,
        Some(Overlay::ToolDetail { .. }) => Scope::Detail,
        Some(Overlay::WritePolicy { .. }) => state.write_policy_scope(),
        Some(Overlay::CallTool(_)) => Scope::CallTool,
        Some(Overlay::SignIn(_)) => return sign_in_key(state, key),
        Some(Overlay::PinDiff { confirming, .. }) => {
            if *confirming {
                Scope::PinConfirm
            } else {
                Scope::PinDiff
            }
        }
        None => return Vec::new(),
    };
    let action = keymap::lookup(scope, &key);
    if let Some(step) = scroll_step(action, state.area.height) {
        scroll(state, step);
        return Vec::new();
    }
    match (action, &mut state.overlay) {
        // No from the confirmation goes back to the diff, not out of it.
        (Some(Action::Close), Some(Overlay::PinDiff { confirming, .. })) if *confirming => {
            *confirming = false;
        }
        (Some(Action::Close), _) => state.overlay = None,
        (Some(Action::Accept), Some(Overlay::PinDiff { confirming, .. })) => *confirming = true,
        (Some(Action::Confirm), Some(Overlay::PinDiff { alias, .. })) => {
            let alias = alias.clone();
            state.overlay = None;
            return accept(state, alias);
        }
        (Some(Action::ViewPins), Some(Overlay::ToolDetail { alias, .. })) => {
            let alias = alias.clone();
            open_pin_diff(state, alias);
        }
        (Some(Action::CallByHand), Some(Overlay::ToolDetail { .. })) => open_call_editor(state),
        (Some(Action::Confirm), Some(Overlay::WritePolicy { alias })) => {
            let alias = alias.clone();
            state.overlay = None;
            return vec![Effect::Send(Command::WritePolicy(alias))];
        }
        (Some(Action::Submit), Some(Overlay::CallTool(editor))) => {
            return submit((**editor).clone(), state);
        }
        (Some(Action::Edit) | None, Some(Overlay::CallTool(editor))) => {
            editor.area.input(Input::from(key));
            revalidate(state);
        }
        _ => {}
    }
    Vec::new()
}

/// The sign-in window: a field for the redirect address, Enter to use it,
/// Esc to give up (the backend says when the sign-in is over).
fn sign_in_key(state: &mut AppState, key: KeyEvent) -> Vec<Effect> {
    let Some(Overlay::SignIn(window)) = &mut state.overlay else {
        return Vec::new();
    };
    match keymap::lookup(Scope::SignIn, &key) {
        Some(Action::Close) => {
            state.overlay = None;
            state.say("cancelling the sign-in…");
            return vec![Effect::Send(Command::SignInCancel)];
        }
        Some(Action::Submit) if !window.paste.trim().is_empty() => {
            window.problem = None;
            return vec![Effect::Send(Command::SignInPaste(
                window.paste.trim().to_string(),
            ))];
        }
        Some(Action::Submit) => {
            window.problem = Some(
                "paste the address the browser was sent to first (or wait for the browser)".into(),
            );
        }
        Some(Action::Edit) => {
            window.paste.pop();
        }
        _ => {
            if let crossterm::event::KeyCode::Char(c) = key.code
                && key
                    .modifiers
                    .difference(crossterm::event::KeyModifiers::SHIFT)
                    .is_empty()
            {
                window.paste.push(c);
            }
        }
    }
    Vec::new()
}

/// Lines an overlay key scrolls (a page is most of the screen).
fn scroll_step(action: Option<Action>, screen_height: u16) -> Option<i32> {
    let page = i32::from(screen_height.saturating_sub(8).max(1));
    match action? {
        Action::Up => Some(-1),
        Action::Down => Some(1),
        Action::PageUp => Some(-page),
        Action::PageDown => Some(page),
        _ => None,
    }
}

/// Scrolls help or the detail view, never past its last line.
fn scroll(state: &mut AppState, step: i32) {
    let max = match &state.overlay {
        Some(Overlay::Help { .. }) => {
            let area = help_area(state.area);
            let width = area.width.saturating_sub(2) as usize;
            max_scroll(area, content::help_lines(width).len())
        }
        Some(Overlay::ToolDetail { alias, tool, .. }) => {
            let area = overlay_area(state.area);
            let width = area.width.saturating_sub(2) as usize;
            max_scroll(area, content::detail_lines(state, alias, tool, width).len())
        }
        Some(Overlay::PinDiff {
            alias, confirming, ..
        }) => {
            let area = overlay_area(state.area);
            let width = area.width.saturating_sub(2) as usize;
            max_scroll(
                area,
                pins::diff_lines(state, alias, *confirming, width).len(),
            )
        }
        _ => return,
    };
    if let Some(
        Overlay::Help { scroll }
        | Overlay::ToolDetail { scroll, .. }
        | Overlay::PinDiff { scroll, .. },
    ) = &mut state.overlay
    {
        let next = i32::from(*scroll)
            .saturating_add(step)
            .clamp(0, i32::from(max));
        *scroll = u16::try_from(next).unwrap_or(max);
    }
}

/// Opens the diff view of `alias`'s changed definitions, if it has any.
pub fn open_pin_diff(state: &mut AppState, alias: String) {
    let reviewable = state
        .servers
        .iter()
        .find(|s| s.alias == alias)
        .is_some_and(pins::reviewable);
    if reviewable {
        state.overlay = Some(Overlay::PinDiff {
            alias,
            scroll: 0,
            confirming: false,
        });
    } else {
        state.say(format!(
            "`{alias}` was not refused for its definitions: nothing to review (v is for definition_changed)"
        ));
    }
}

/// Accepts exactly what the diff view showed: the backend refuses if the
/// server published something else since.
fn accept(state: &mut AppState, alias: String) -> Vec<Effect> {
    let Some(server) = state.servers.iter().find(|s| s.alias == alias) else {
        return Vec::new();
    };
    let seen = server
        .pin_changes
        .iter()
        .map(|c| c.new_sha256.clone())
        .collect();
    state.say(format!("accepting the definitions of `{alias}`…"));
    vec![Effect::Send(Command::AcceptPins { alias, seen })]
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
        state.say(format!(
            "cannot call {}: {why}",
            crate::sanitize::inert_line(&tool.name, 60)
        ));
        return;
    };
    let text =
        serde_json::to_string_pretty(&prefill(&tool.input_schema)).unwrap_or_else(|_| "{}".into());
    // The exposed tool's own compiled validator: the editor's verdict is the
    // call path's.
    let check = tool.check.clone();
    let mut area = TextArea::default();
    area.set_tab_length(2);
    area.insert_str(&text);
    // Start inside the first empty string (a required key to fill in), else at
    // the end of the first line.
    let empty = text
        .lines()
        .enumerate()
        .find_map(|(row, l)| l.find("\"\"").map(|at| (row, l[..at].chars().count() + 1)));
    match empty {
        Some((row, col)) => area.move_cursor(CursorMove::Jump(
            u16::try_from(row).unwrap_or(u16::MAX),
            u16::try_from(col).unwrap_or(u16::MAX),
        )),
        None => {
            area.move_cursor(CursorMove::Top);
            area.move_cursor(CursorMove::End);
        }
    }
    state.overlay = Some(Overlay::CallTool(Box::new(CallEditor {
        tool: exposed,
        area,
        check,
        problem: None,
    })));
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
    editor.problem = match serde_json::from_str::<Value>(&editor.text()) {
        Err(e) => Some(format!("not valid JSON yet: {e}")),
        Ok(args) => match &editor.check {
            None => Some("this tool is not exposed now: it cannot be called".into()),
            Some(check) => {
                let errors: Vec<String> = check
                    .check(&args)
                    .into_iter()
                    .take(3)
                    .map(|e| format!("at `{}`: {}", e.path, e.message))
                    .collect();
                (!errors.is_empty()).then(|| errors.join("; "))
            }
        },
    };
}

fn submit(editor: CallEditor, state: &mut AppState) -> Vec<Effect> {
    if let Some(problem) = &editor.problem {
        state.say(format!("fix the arguments first: {problem}"));
        return Vec::new();
    }
    let Ok(arguments) = serde_json::from_str(&editor.text()) else {
        return Vec::new();
    };
    state.overlay = None;
    vec![Effect::Send(Command::CallTool {
        name: editor.tool,
        arguments,
    })]
}
