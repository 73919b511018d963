//! The renderer: draws each pane where `layout` puts it, from the state,
//! read-only. It never imports the reducer (`update/`).

mod approval;
mod completion;
mod conversation;
mod elicitation;
mod health;
mod help;
mod overlays;
mod registry;
mod servers;
mod sign_in;
mod status_bar;

use ratatui::Frame;
use ratatui::text::{Line, Span};

use super::layout::{TABS, layout, tab};
use super::state::{AppState, Focus, Overlay};
use super::theme;

/// Draws the whole screen.
pub fn draw(frame: &mut Frame, state: &AppState) {
    let areas = layout(frame.area(), state);
    if let Some(r) = areas.tabs {
        let mut spans = Vec::new();
        for (label, focus) in TABS {
            let style = if tab(state.focus) == focus {
                theme::selected()
            } else {
                theme::dim()
            };
            spans.push(Span::styled(format!(" {label} "), style));
            spans.push(Span::raw("  "));
        }
        frame.render_widget(Line::from(spans), r);
    }
    if let Some(r) = areas.conversation {
        conversation::draw(frame, r, state);
    }
    if let Some(r) = areas.input {
        // The text area is drawn from the state, its frame around it: a copy
        // with the block set on it would copy the whole undo history each frame.
        let block = theme::pane_block("Message", state.focus == Focus::Input);
        let inner = block.inner(r);
        frame.render_widget(block, r);
        frame.render_widget(&state.input, inner);
    }
    if let Some(r) = areas.servers {
        servers::draw(frame, r, state);
    }
    if let Some(r) = areas.registry {
        registry::draw(frame, r, state);
    }
    if let Some(r) = areas.health {
        health::draw(frame, r, state);
    }
    if let Some(r) = areas.input
        && state.focus == Focus::Input
        && let Some(completion) = state.completion()
    {
        completion::draw(frame, r, state, &completion);
    }
    status_bar::draw(frame, areas.status, state);
    match &state.overlay {
        Some(Overlay::Help { scroll }) => help::draw(frame, *scroll),
        Some(overlay) => overlays::draw(frame, state, overlay),
        None => {}
    }
    // Put aside (behind a window the operator opened, or by F3), what waits
    // is a badge in the status bar instead.
    if state.prompt_shown() {
        approval::draw(frame, state);
    } else if state.form_shown() {
        elicitation::draw(frame, state);
    }
}
