//! What a key does in a list pane (servers, registry, conversation, health),
//! as actions the keys and the mouse both call.

use crate::protocol::{Command, SignInStatus};
use crate::ui::keymap::Action;
use crate::ui::msg::Effect;
use crate::ui::rows::{RegistryRow, registry_rows};
use crate::ui::state::{AppState, Cell, Focus, Overlay};

pub fn pane(state: &mut AppState, action: Action) -> Vec<Effect> {
    let alias = state.selected_server().map(|s| s.alias.clone());
    match (state.focus, action) {
        (Focus::Conversation, a) => return conversation(state, a),
        (Focus::Servers, Action::Up) => select_server(state, -1),
        (Focus::Servers, Action::Down) => select_server(state, 1),
        (Focus::Servers, Action::ViewPins) => {
            if let Some(alias) = alias {
                super::overlay::open_pin_diff(state, alias);
            }
        }
        (Focus::Servers, Action::ShowRegistry) => {
            state.registry_all = false;
            state.focus = Focus::Registry;
        }
        (Focus::Servers, Action::WritePolicy) => {
            let mismatch = state
                .selected_server()
                .is_some_and(|s| !s.policy_missing.is_empty() || !s.policy_extra.is_empty());
            match (alias, mismatch) {
                (Some(alias), true) => state.overlay = Some(Overlay::WritePolicy { alias }),
                _ => state.say(
                    "its policy already matches what it publishes (p is for a policy_mismatch)",
                ),
            }
        }
        (Focus::Servers, Action::SignIn | Action::SignOut) => return sign_in(state, action),
        (Focus::Servers, a) => {
            let Some(alias) = alias else {
                return Vec::new();
            };
            let command = match a {
                Action::Connect => Command::Connect(alias),
                Action::Disconnect => Command::Disconnect(alias),
                Action::Reconnect => Command::Reconnect(alias),
                Action::Kill => Command::KillServer(alias),
                _ => return Vec::new(),
            };
            return vec![Effect::Send(command)];
        }
        (Focus::Registry, Action::Up) => select_tool(state, -1),
        (Focus::Registry, Action::Down) => select_tool(state, 1),
        (Focus::Registry, Action::ToggleAll) => {
            state.registry_all = !state.registry_all;
            clamp_tool(state);
        }
        (Focus::Registry, Action::Detail) => {
            if let Some(RegistryRow::Tool { alias, tool }) =
                registry_rows(state).get(state.selected_tool).copied()
            {
                state.overlay = Some(Overlay::ToolDetail {
                    alias: alias.to_string(),
                    tool: tool.name.clone(),
                    scroll: 0,
                });
            }
        }
        (Focus::Registry, Action::CallByHand) => super::overlay::open_call_editor(state),
        (Focus::Registry, Action::ViewPins) => {
            let row = registry_rows(state)
                .get(state.selected_tool)
                .map(|r| r.alias().to_string());
            if let Some(alias) = row.or(alias) {
                super::overlay::open_pin_diff(state, alias);
            }
        }
        (Focus::Health, Action::Refresh) => return vec![Effect::Send(Command::Refresh)],
        _ => {}
    }
    Vec::new()
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
        Action::PageUp => return scrolled(state, PAGE),
        Action::PageDown => return scrolled(state, -PAGE),
        Action::Toggle => {
            if let Some(Cell::ToolCall(call)) = state.cells.get_mut(selected) {
                call.expanded = !call.expanded;
            }
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

/// Lines a page key scrolls the conversation.
pub const PAGE: i32 = 10;

/// Paging scrolls the view; the selection stays where it was.
fn scrolled(state: &mut AppState, lines: i32) -> Vec<Effect> {
    super::scroll::by(state, lines);
    Vec::new()
}

/// Moves the servers selection by `step` rows (within the list).
/// `s` and `o` on the selected server.
fn sign_in(state: &mut AppState, action: Action) -> Vec<Effect> {
    let Some(server) = state.selected_server() else {
        return Vec::new();
    };
    let alias = server.alias.clone();
    match (server.sign_in, action) {
        (SignInStatus::NotUsed, _) => {
            state.say(format!(
                "`{alias}` does not sign in (a stdio server, or `auth = \"none\"`)"
            ));
            Vec::new()
        }
        (SignInStatus::SignedIn, Action::SignIn) => {
            state.say(format!("`{alias}` is signed in; o signs out"));
            Vec::new()
        }
        (_, Action::SignIn) => {
            state.say(format!(
                "signing in to `{alias}`: waiting for its authorization page…"
            ));
            vec![Effect::Send(Command::SignIn(alias))]
        }
        (_, _) => vec![Effect::Send(Command::SignOut(alias))],
    }
}

pub fn select_server(state: &mut AppState, step: isize) {
    let last = state.servers.len().saturating_sub(1);
    state.selected_server = state.selected_server.saturating_add_signed(step).min(last);
    clamp_tool(state);
}

/// Moves the registry selection by `step` rows (within the rows).
pub fn select_tool(state: &mut AppState, step: isize) {
    state.selected_tool = state.selected_tool.saturating_add_signed(step);
    clamp_tool(state);
}

/// Keeps the registry selection on a row that exists.
pub fn clamp_tool(state: &mut AppState) {
    let rows = registry_rows(state).len();
    state.selected_tool = state.selected_tool.min(rows.saturating_sub(1));
}
