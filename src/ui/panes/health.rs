//! Health of the selected connection: process, protocol, server identity (its
//! own claim), call counts and latency, the last error, the stderr tail.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use super::pane_block;
use crate::ui::sanitize::line;
use crate::ui::state::{AppState, Focus};
use crate::ui::theme;

pub fn draw(frame: &mut Frame, area: Rect, state: &AppState) {
    let focused = state.focus == Focus::Health;
    let alias = state
        .selected_server()
        .map(|s| s.alias.clone())
        .unwrap_or_default();
    let block = pane_block(&format!("Health · {alias}"), focused);
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let width = inner.width as usize;
    let mut lines: Vec<Line<'static>> = Vec::new();
    let Some(server) = state.selected_server() else {
        frame.render_widget(Paragraph::new("no server selected"), inner);
        return;
    };
    let kv = |k: &str, v: String| {
        Line::from(vec![
            Span::styled(format!("{k:<9}"), theme::dim()),
            Span::raw(v),
        ])
    };
    lines.push(Line::from(vec![
        Span::styled(format!("{:<9}", "state"), theme::dim()),
        Span::styled(server.state.clone(), theme::state(&server.state)),
    ]));
    match &server.health {
        None => lines.push(Line::styled("not connected", theme::dim())),
        Some(h) => {
            lines.push(kv(
                "pid",
                h.pid.map_or("— (http)".into(), |p| p.to_string()),
            ));
            lines.push(kv("since", h.connected_at.clone()));
            lines.push(kv("protocol", line(&h.protocol_version, 20)));
            let server_claim = format!(
                "{} {}",
                line(&h.server_name, 30),
                line(&h.server_version, 16)
            );
            lines.push(Line::from(vec![
                Span::styled(format!("{:<9}", "server"), theme::dim()),
                Span::styled(server_claim, theme::untrusted()),
            ]));
            lines.push(kv(
                "calls",
                format!("{} ok · {} failed", h.calls_ok, h.calls_failed),
            ));
            if let Some(ms) = h.last_latency_ms {
                lines.push(kv("latency", format!("{ms} ms (last call)")));
            }
            if let Some((at, error)) = &h.last_error {
                lines.push(Line::styled(
                    format!("last error {at}: {}", line(error, width.saturating_sub(20))),
                    theme::error(),
                ));
            }
            lines.push(Line::styled("stderr (untrusted):", theme::dim()));
            let room = (inner.height as usize).saturating_sub(lines.len());
            let tail = &h.stderr_tail[h.stderr_tail.len().saturating_sub(room)..];
            if tail.is_empty() {
                lines.push(Line::styled("  (nothing)", theme::dim()));
            }
            lines.extend(tail.iter().map(|l| {
                Line::styled(
                    format!("  {}", line(l, width.saturating_sub(2))),
                    theme::untrusted(),
                )
            }));
        }
    }
    frame.render_widget(Paragraph::new(lines), inner);
}
