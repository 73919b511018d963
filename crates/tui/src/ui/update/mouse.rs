//! The mouse: a click focuses the pane under it and selects the row under it;
//! the wheel scrolls the pane under it. Hit-testing uses the same layout the
//! panes are drawn with.

use crossterm::event::{MouseButton, MouseEvent, MouseEventKind};
use ratatui::layout::Position;

use super::actions::{clamp_tool, select_server, select_tool};
use crate::ui::layout::{layout, registry_row_at};
use crate::ui::msg::Effect;
use crate::ui::state::{AppState, Focus};

pub fn mouse(state: &mut AppState, event: MouseEvent) -> Vec<Effect> {
    if !state.approvals.is_empty() || state.overlay.is_some() {
        return Vec::new();
    }
    let areas = layout(state.area, state);
    let at = Position::new(event.column, event.row);
    let hit = |r: Option<ratatui::layout::Rect>| r.is_some_and(|r| r.contains(at));
    match event.kind {
        MouseEventKind::ScrollUp | MouseEventKind::ScrollDown => {
            let up = event.kind == MouseEventKind::ScrollUp;
            let step = if up { -1 } else { 1 };
            if hit(areas.servers) {
                select_server(state, step);
            } else if hit(areas.registry) {
                select_tool(state, step);
            } else {
                super::scroll::by(state, if up { 3 } else { -3 });
            }
        }
        MouseEventKind::Down(MouseButton::Left) => {
            if let Some(tab) = areas.tab_at(at) {
                state.focus = tab;
            } else if hit(areas.input) {
                state.focus = Focus::Input;
            } else if hit(areas.conversation) {
                state.focus = Focus::Conversation;
            } else if let Some(r) = areas.servers.filter(|r| r.contains(at)) {
                state.focus = Focus::Servers;
                let row = (at.y.saturating_sub(r.y + 1)) as usize;
                if row < state.servers.len() {
                    state.selected_server = row;
                    clamp_tool(state);
                }
            } else if let Some(r) = areas.registry.filter(|r| r.contains(at)) {
                state.focus = Focus::Registry;
                if let Some(row) = registry_row_at(r, state, at.y) {
                    state.selected_tool = row;
                }
            } else if hit(areas.health) {
                state.focus = Focus::Health;
            }
        }
        _ => {}
    }
    Vec::new()
}
