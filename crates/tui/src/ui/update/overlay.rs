//! Keys of the overlays: help, tool detail, write-policy confirmation, the
//! arguments editor of a hand-made call (validated live with the exposed
//! tool's own validator), "kill this server?", the rules (session grants) and
//! the explanation of a call.

use crossterm::event::KeyEvent;
use ratatui_textarea::{CursorMove, Input, TextArea};
use serde_json::{Map, Value};

use crate::protocol::Command;
use crate::ui::keymap::{self, Action};
use crate::ui::layout::{help_area, max_scroll, overlay_area};
use crate::ui::msg::Effect;
use crate::ui::state::{AppState, CallEditor, Overlay, RegistryRow};
use crate::ui::{content, pins};

pub fn key(state: &mut AppState, key: KeyEvent) -> Vec<Effect> {
    if let Some(Overlay::SignIn(_)) = state.overlay {
        return super::sign_in::key(state, key);
    }
    let Some(scope) = state.overlay_scope() else {
        return Vec::new();
    };
    let action = keymap::lookup(scope, &key);
    if let Some(step) = scroll_step(action, state.area.height) {
        match &mut state.overlay {
            Some(Overlay::Rules { selected, .. }) => {
                // The grants' rows, then the tainted clients' rows.
                let last = (state.grants.len() + state.client_taints.len()).saturating_sub(1);
                *selected = selected
                    .saturating_add_signed(step.signum() as isize)
                    .min(last);
            }
            Some(Overlay::Resources { .. }) => select_resource(state, step),
            _ => scroll(state, step),
        }
        return Vec::new();
    }
    let armed = state.kill_armed();
    match (action, &mut state.overlay) {
        (Some(Action::Close), Some(Overlay::Rules { saving, .. })) if saving.is_some() => {
            *saving = None;
        }
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
        (Some(Action::Confirm), Some(Overlay::ConfirmKill { alias, .. })) if armed => {
            let alias = alias.clone();
            state.overlay = None;
            // Where the revocation shows: in tabs, the registry is another tab.
            if state.area.width < crate::ui::layout::WIDE {
                state.focus = crate::ui::state::Focus::Registry;
                state.registry_all = false;
            }
            return vec![Effect::Send(Command::KillServer(alias))];
        }
        (_, Some(Overlay::ConfirmKill { alias, .. })) => {
            // Like an approval: a key typed as it opened never decides it.
            let alias = alias.clone();
            state.say(format!(
                "arming: pause a second, then y kills `{alias}` (n or Esc cancels)"
            ));
        }
        (Some(Action::ClearTaint), Some(Overlay::Rules { .. })) => {
            return vec![Effect::Send(Command::ClearTaint)];
        }
        (Some(Action::ClearClientTaint), Some(Overlay::Rules { selected, .. })) => {
            let row = selected.checked_sub(state.grants.len());
            match row.and_then(|i| state.client_taints.keys().nth(i)) {
                Some(client) => {
                    return vec![Effect::Send(Command::ClearClientTaint(client.clone()))];
                }
                None if state.client_taints.is_empty() => {
                    state.say("no outside client's session holds flow taint");
                }
                None => state.say("select a client's row first (↓), then x clears its taint"),
            }
        }
        (Some(Action::RevokeGrant), Some(Overlay::Rules { selected, .. })) => {
            if let Some(grant) = state.grants.get(*selected) {
                return vec![Effect::Send(Command::RevokeGrant(grant.id))];
            }
        }
        (Some(Action::SaveGrant), Some(Overlay::Rules { selected, saving })) => {
            match state.grants.get(*selected) {
                Some(grant) if state.session.config_file.is_some() => *saving = Some(grant.id),
                Some(_) => state.say(
                    "there is no config file to write into (this session runs the embedded default)",
                ),
                None => {}
            }
        }
        (Some(Action::Confirm), Some(Overlay::Rules { saving, .. })) => {
            if let Some(id) = saving.take() {
                return vec![Effect::Send(Command::SaveGrant(id))];
            }
        }
        (Some(Action::Read), Some(Overlay::Resources { .. })) => return read_resource(state),
        (Some(Action::Submit), Some(Overlay::CallTool(editor))) => {
            return submit((**editor).clone(), state);
        }
        (Some(Action::Undo), Some(Overlay::CallTool(editor))) => {
            editor.area.undo();
            revalidate(state);
        }
        (Some(Action::Redo), Some(Overlay::CallTool(editor))) => {
            editor.area.redo();
            revalidate(state);
        }
        (Some(Action::Edit) | None, Some(Overlay::CallTool(editor))) => {
            editor.area.input(Input::from(key));
            revalidate(state);
        }
        _ => {}
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
        Some(Overlay::Explain { view, .. }) => {
            let area = overlay_area(state.area);
            let width = area.width.saturating_sub(2) as usize;
            max_scroll(area, content::explain_lines(view.as_ref(), width).len())
        }
        Some(Overlay::Resources { view, selected, .. }) => {
            let area = overlay_area(state.area);
            let width = area.width.saturating_sub(2) as usize;
            max_scroll(
                area,
                content::resources_lines(view.as_ref(), *selected, width).len(),
            )
        }
        Some(Overlay::PinDiff {
            alias, confirming, ..
        }) => {
            let area = overlay_area(state.area);
            let width = area.width.saturating_sub(2) as usize;
            let height = area.height.saturating_sub(2) as usize;
            max_scroll(
                area,
                pins::diff_lines(state, alias, *confirming, width, height).len(),
            )
        }
        _ => return,
    };
    if let Some(
        Overlay::Help { scroll }
        | Overlay::ToolDetail { scroll, .. }
        | Overlay::Explain { scroll, .. }
        | Overlay::Resources { scroll, .. }
        | Overlay::PinDiff { scroll, .. },
    ) = &mut state.overlay
    {
        let next = i32::from(*scroll)
            .saturating_add(step)
            .clamp(0, i32::from(max));
        *scroll = u16::try_from(next).unwrap_or(max);
    }
}

/// Moves the Resources window's selection by one row (`step`'s sign), and
/// scrolls so the selected row is in sight.
fn select_resource(state: &mut AppState, step: i32) {
    let area = overlay_area(state.area);
    let width = area.width.saturating_sub(2) as usize;
    let height = usize::from(area.height.saturating_sub(2)).max(1);
    let Some(Overlay::Resources {
        view,
        scroll,
        selected,
        ..
    }) = &mut state.overlay
    else {
        return;
    };
    let count = view.as_ref().map_or(0, |v| v.resources.len());
    *selected = selected
        .saturating_add_signed(step.signum() as isize)
        .min(count.saturating_sub(1));
    let total = content::resources_lines(view.as_ref(), *selected, width).len();
    let at = content::RESOURCE_ROWS_FROM + *selected;
    let top = usize::from(*scroll);
    let top = if at < top {
        at
    } else if at >= top + height {
        at + 1 - height
    } else {
        top
    };
    // Near the top, the window's head stays in sight.
    let top = if at < height { 0 } else { top };
    *scroll = u16::try_from(top.min(total.saturating_sub(height))).unwrap_or(u16::MAX);
}

/// Enter in the Resources window: reads the selected resource for the
/// operator; under a `deny` read policy, says so and sends nothing.
fn read_resource(state: &mut AppState) -> Vec<Effect> {
    let Some(Overlay::Resources {
        alias,
        view,
        selected,
        ..
    }) = &state.overlay
    else {
        return Vec::new();
    };
    let (alias, selected) = (alias.clone(), *selected);
    let Some(view) = view else {
        state.say("the listing has not come yet");
        return Vec::new();
    };
    if view.read == crate::protocol::PolicyEffect::Deny {
        state.say(format!(
            "reading is denied by local policy ([servers.{alias}.resources] read = \"deny\"): nothing was read"
        ));
        return Vec::new();
    }
    let Some(resource) = view.resources.get(selected) else {
        state.say(format!("`{alias}` lists no resource to read"));
        return Vec::new();
    };
    let uri = resource.uri.clone();
    // What it reads shows in the conversation, behind this window.
    state.overlay = None;
    vec![Effect::Send(Command::ReadResource(
        crate::protocol::ResourceRef { alias, uri },
    ))]
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
    let tool = match state.selected_row() {
        Some(RegistryRow::Tool { tool, .. }) => tool,
        Some(RegistryRow::Struck { alias, .. }) => {
            let text = format!("this tool of `{alias}` was revoked: connect it again to call it");
            state.say(text);
            return;
        }
        None => return,
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
    // No underline under the cursor's line (the text area's default).
    area.set_cursor_line_style(ratatui::style::Style::new());
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
