//! What a key does in a list pane (servers, registry, conversation, health),
//! as actions the keys and the mouse both call. A key that does not apply to
//! the selection says why instead of doing nothing.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use crate::protocol::{AliasStatus, Command};
use crate::ui::keymap::{self, Action, Scope};
use crate::ui::layout::{first_row, registry_page};
use crate::ui::msg::Effect;
use crate::ui::rows::Filter;
use crate::ui::state::{AppState, Cell, Focus, Overlay, RegistryRow};

/// Lines a page key scrolls the conversation.
pub const PAGE: i32 = 10;

pub fn pane(state: &mut AppState, action: Action) -> Vec<Effect> {
    match state.focus {
        Focus::Conversation => conversation(state, action),
        Focus::Servers => servers(state, action),
        Focus::Registry => {
            registry(state, action);
            Vec::new()
        }
        Focus::Health if action == Action::Refresh => vec![Effect::Send(Command::Refresh)],
        _ => Vec::new(),
    }
}

fn servers(state: &mut AppState, action: Action) -> Vec<Effect> {
    let Some(server) = state.selected_server() else {
        if matches!(action, Action::Up | Action::Down) {
            return Vec::new();
        }
        state.say("no server is configured: add one under [servers] in the config file");
        return Vec::new();
    };
    let alias = server.alias.clone();
    let live = matches!(server.state, AliasStatus::Ready | AliasStatus::Connecting);
    let killable = server.state == AliasStatus::Ready
        && server
            .health
            .as_ref()
            .is_some_and(|h| h.pid.is_some() && h.ended.is_none());
    let mismatch = !server.policy_missing.is_empty() || !server.policy_extra.is_empty();
    let command = match action {
        Action::Up => {
            select_server(state, -1);
            return Vec::new();
        }
        Action::Down => {
            select_server(state, 1);
            return Vec::new();
        }
        Action::ShowRegistry => {
            state.registry_all = false;
            state.focus = Focus::Registry;
            return Vec::new();
        }
        Action::SignIn | Action::SignOut => return super::sign_in::action(state, action),
        Action::WritePolicy if mismatch => {
            state.overlay = Some(Overlay::WritePolicy { alias });
            return Vec::new();
        }
        Action::WritePolicy => {
            state.say("its policy already matches what it publishes (p is for a policy_mismatch)");
            return Vec::new();
        }
        Action::ViewPins => {
            super::overlay::open_pin_diff(state, alias);
            return Vec::new();
        }
        Action::Resources if !live => {
            state.say(format!("`{alias}` is not connected (c connects it)"));
            return Vec::new();
        }
        Action::Resources => {
            // As for explain: the window's keys are the footer now.
            state.status = None;
            state.overlay = Some(Overlay::Resources {
                alias: alias.clone(),
                view: None,
                scroll: 0,
                selected: 0,
            });
            Command::ListResources(alias)
        }
        Action::Connect if live => {
            state.say(format!("`{alias}` is already connected (r reconnects it)"));
            return Vec::new();
        }
        Action::Connect => Command::Connect(alias),
        Action::Disconnect if !live => {
            state.say(format!("`{alias}` is not connected (c connects it)"));
            return Vec::new();
        }
        Action::Disconnect => Command::Disconnect(alias),
        Action::Reconnect if !live => Command::Connect(alias),
        Action::Reconnect => Command::Reconnect(alias),
        Action::Kill if !killable => {
            state.say(format!(
                "`{alias}` has no live process to kill (K is for a connected stdio server)"
            ));
            return Vec::new();
        }
        Action::Kill => {
            state.overlay = Some(Overlay::ConfirmKill {
                alias,
                opened: state.now,
            });
            return Vec::new();
        }
        _ => return Vec::new(),
    };
    vec![Effect::Send(command)]
}

fn registry(state: &mut AppState, action: Action) {
    let page = registry_page(state).unwrap_or(10).max(2) as isize;
    match action {
        Action::Up => select_tool(state, -1),
        Action::Down => select_tool(state, 1),
        Action::PageUp => select_tool(state, 1 - page),
        Action::PageDown => select_tool(state, page - 1),
        Action::Top => {
            state.selected_tool = 0;
            follow_tool(state);
        }
        Action::Bottom => {
            state.selected_tool = state.rows().refs.len().saturating_sub(1);
            follow_tool(state);
        }
        Action::ToggleAll => {
            state.registry_all = !state.registry_all;
            state.selected_tool = 0;
            state.registry_offset = 0;
        }
        Action::Filter => {
            let query = state.filter.take().map(|f| f.query).unwrap_or_default();
            state.filter = Some(Filter {
                query,
                editing: true,
            });
        }
        Action::ClearFilter if state.filter.is_some() => clear_filter(state),
        Action::ClearFilter => state.focus = Focus::Input,
        Action::Detail => match state.selected_row() {
            Some(RegistryRow::Tool { alias, tool, .. }) => {
                state.overlay = Some(Overlay::ToolDetail {
                    alias: alias.to_string(),
                    tool: tool.name.clone(),
                    scroll: 0,
                })
            }
            Some(RegistryRow::Struck { alias, .. }) => state.say(format!(
                "this tool of `{alias}` was revoked; reconnect it to see its details"
            )),
            None => {}
        },
        Action::CallByHand => super::overlay::open_call_editor(state),
        Action::ViewPins => {
            let alias = state
                .selected_row()
                .map(|r| r.alias().to_string())
                .or_else(|| state.selected_server().map(|s| s.alias.clone()));
            if let Some(alias) = alias {
                super::overlay::open_pin_diff(state, alias);
            }
        }
        _ => {}
    }
}

/// Keys while the filter is being typed: they go into the query (the rows
/// follow live), ↑/↓ move through what matches, Enter keeps it, Esc clears it.
pub fn filter_key(state: &mut AppState, key: KeyEvent) -> Vec<Effect> {
    match keymap::lookup(Scope::Filter, &key) {
        Some(Action::KeepFilter) => {
            if state.filter.as_ref().is_some_and(|f| f.query.is_empty()) {
                state.filter = None;
            } else if let Some(filter) = &mut state.filter {
                filter.editing = false;
            }
        }
        Some(Action::ClearFilter) => clear_filter(state),
        Some(action @ (Action::Up | Action::Down | Action::PageUp | Action::PageDown)) => {
            registry(state, action)
        }
        _ => {
            let Some(filter) = &mut state.filter else {
                return Vec::new();
            };
            match key.code {
                KeyCode::Backspace => {
                    filter.query.pop();
                }
                KeyCode::Char(c) if key.modifiers.difference(KeyModifiers::SHIFT).is_empty() => {
                    filter.query.push(c)
                }
                _ => return Vec::new(),
            }
            filtered(state);
        }
    }
    Vec::new()
}

/// The query changed: the selection starts at the first match.
pub fn filtered(state: &mut AppState) {
    state.selected_tool = 0;
    state.registry_offset = 0;
}

pub fn clear_filter(state: &mut AppState) {
    state.filter = None;
    state.selected_tool = 0;
    state.registry_offset = 0;
}

fn conversation(state: &mut AppState, action: Action) -> Vec<Effect> {
    let last = state.cells.len().saturating_sub(1);
    let selected = state.selected_cell.unwrap_or(last);
    match action {
        Action::Up => state.selected_cell = Some(selected.saturating_sub(1)),
        Action::Down => state.selected_cell = Some((selected + 1).min(last)),
        Action::Top => state.selected_cell = Some(0),
        Action::Bottom => {
            state.selected_cell = None;
            state.scroll_back = 0;
        }
        Action::PageUp => super::scroll::by(state, PAGE),
        Action::PageDown => super::scroll::by(state, -PAGE),
        Action::Toggle => match state.cells.get_mut(selected) {
            Some(Cell::ToolCall(call)) => call.expanded = !call.expanded,
            Some(Cell::ServerContent(content)) => content.expanded = !content.expanded,
            _ => {}
        },
        Action::Explain => {
            let Some(Cell::ToolCall(call)) = state.cells.get(selected) else {
                state.say("select a tool call (↑/↓) to explain how it was decided");
                return Vec::new();
            };
            let call_id = call.id.clone();
            // The footer is the window's now: an older message would stay
            // over its keys (and outlive it).
            state.status = None;
            state.overlay = Some(Overlay::Explain {
                call_id: call_id.clone(),
                view: None,
                scroll: 0,
            });
            return vec![Effect::Send(Command::Explain(call_id))];
        }
        Action::Retry if state.can_retry && !state.busy => {
            state.can_retry = false;
            state.busy = true;
            return vec![Effect::Send(Command::Retry)];
        }
        Action::Retry => state.say("nothing to retry: r retries a turn that failed"),
        _ => {}
    }
    if matches!(
        action,
        Action::Up | Action::Down | Action::Top | Action::Toggle
    ) {
        super::scroll::follow_selection(state);
    }
    Vec::new()
}

/// Moves the servers selection by `step` rows (within the list).
pub fn select_server(state: &mut AppState, step: isize) {
    let last = state.servers.len().saturating_sub(1);
    state.selected_server = state.selected_server.saturating_add_signed(step).min(last);
    state.selected_tool = 0;
    state.registry_offset = 0;
}

/// Moves the registry selection by `step` rows (within the rows).
pub fn select_tool(state: &mut AppState, step: isize) {
    state.selected_tool = state.selected_tool.saturating_add_signed(step);
    clamp_tool(state);
}

/// Keeps the registry selection on a row that exists, and in view.
pub fn clamp_tool(state: &mut AppState) {
    let rows = state.rows().refs.len();
    state.selected_tool = state.selected_tool.min(rows.saturating_sub(1));
    follow_tool(state);
}

/// Scrolls the registry just enough that the selection is in view.
fn follow_tool(state: &mut AppState) {
    if let Some(height) = registry_page(state) {
        let len = state.rows().refs.len();
        state.registry_offset = first_row(state.registry_offset, state.selected_tool, height, len);
    }
}
