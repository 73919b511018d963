//! The servers side panel: every configured alias, its state and tool count,
//! and for the selected one, why it is not ready.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use super::pane_block;
use crate::ui::sanitize::{line, wrapped};
use crate::ui::state::{AppState, Focus};
use crate::ui::theme;

pub fn draw(frame: &mut Frame, area: Rect, state: &AppState) {
    let focused = state.focus == Focus::Servers;
    let block = pane_block("Servers", focused);
    let inner = block.inner(area);
    frame.render_widget(block, area);
    frame.render_widget(Paragraph::new(lines(state, inner.width as usize)), inner);
}

/// The rows the pane's content takes at this inner width.
pub fn height(state: &AppState, width: u16) -> u16 {
    u16::try_from(lines(state, width as usize).len()).unwrap_or(u16::MAX)
}

fn lines(state: &AppState, width: usize) -> Vec<Line<'static>> {
    let focused = state.focus == Focus::Servers;
    let mut lines: Vec<Line<'static>> = Vec::new();
    if state.servers.is_empty() {
        lines.push(Line::styled("no servers configured", theme::dim()));
    }
    for (i, server) in state.servers.iter().enumerate() {
        let marker = match server.state.as_str() {
            "ready" => "●",
            "connecting" => "◌",
            "disconnected" => "○",
            _ => "✗",
        };
        let tools = if server.state == "ready" {
            format!(" {} tools", server.exposed)
        } else {
            String::new()
        };
        let name_width = width
            .saturating_sub(server.state.len() + tools.len() + 3)
            .max(4);
        let mut row = Line::from(vec![
            Span::styled(format!("{marker} "), theme::state(&server.state)),
            Span::raw(format!("{:<name_width$}", line(&server.alias, name_width))),
            Span::styled(server.state.clone(), theme::state(&server.state)),
            Span::styled(tools, theme::dim()),
        ]);
        if i == state.selected_server && focused {
            row = row.style(theme::selected());
        } else if i == state.selected_server {
            row = row.style(theme::strong());
        }
        lines.push(row);
    }
    if let Some(server) = state.selected_server() {
        lines.push(Line::raw(""));
        lines.extend(
            wrapped(&server.transport, width)
                .into_iter()
                .map(|l| Line::styled(l, theme::dim())),
        );
        if let Some(detail) = &server.detail {
            let code = server
                .code
                .as_deref()
                .map(|c| format!("{c}: "))
                .unwrap_or_default();
            lines.extend(
                wrapped(&format!("{code}{detail}"), width)
                    .into_iter()
                    .map(|l| Line::styled(l, theme::error())),
            );
        }
        if !server.policy_missing.is_empty() || !server.policy_extra.is_empty() {
            lines.extend(
                wrapped("p: write a policy for what it publishes", width)
                    .into_iter()
                    .map(|l| Line::styled(l, theme::warn())),
            );
        }
    }
    lines
}
