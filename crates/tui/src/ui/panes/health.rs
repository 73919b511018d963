//! Health of the selected alias's connection: process, protocol, server
//! identity (its own claim), call counts and latency, the last error, the
//! stderr tail, and its age, counted here so it never freezes. Once the
//! connection ended, the same facts greyed, with when and why it ended.

use std::time::Duration;

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use crate::protocol::AliasStatus;
use crate::ui::sanitize::{line, wrapped};
use crate::ui::state::{AppState, Focus};
use crate::ui::text::fit_lines;
use crate::ui::theme;
use crate::ui::theme::fitted_block;

pub fn draw(frame: &mut Frame, area: Rect, state: &AppState) {
    let focused = state.focus == Focus::Health;
    let alias = state
        .selected_server()
        .map(|s| s.alias.clone())
        .unwrap_or_default();
    let block = fitted_block(&format!("Health · {alias}"), focused, area.width);
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let width = inner.width as usize;
    let mut lines: Vec<Line<'static>> = Vec::new();
    let Some(server) = state.selected_server() else {
        frame.render_widget(Paragraph::new("no server selected"), inner);
        return;
    };
    lines.push(Line::from(vec![
        Span::styled(format!("{:<9}", "state"), theme::dim()),
        Span::styled(server.state.label(), theme::state(server.state)),
    ]));
    let Some(h) = &server.health else {
        let what = match server.state {
            AliasStatus::Connecting => "connecting…".to_string(),
            AliasStatus::Disconnected => "not connected — c in Servers (2) connects it".into(),
            // It answered, then a local rule refused what it publishes.
            AliasStatus::Rejected => format!(
                "connected, then refused: {} — the reason is in Servers (2)",
                server.code.as_deref().unwrap_or("a local rule")
            ),
            _ => "no connection was made: the reason is in Servers (2)".into(),
        };
        lines.extend(
            wrapped(&what, width)
                .into_iter()
                .map(|l| Line::styled(l, theme::dim())),
        );
        frame.render_widget(Paragraph::new(fit_lines(lines, width)), inner);
        return;
    };
    // An ended connection keeps its facts, greyed: what the post-mortem needs.
    let ended = h.ended.is_some();
    let value = if ended { theme::dim() } else { Style::new() };
    let claim = if ended {
        theme::dim()
    } else {
        theme::untrusted()
    };
    let kv = |k: &str, v: String, style: Style| {
        Line::from(vec![
            Span::styled(format!("{k:<9}"), theme::dim()),
            Span::styled(v, style),
        ])
    };
    if let Some(end) = &h.ended {
        lines.push(kv("ended", end.at.clone(), theme::error()));
        lines.push(kv("lasted", age(end.lasted), theme::error()));
        lines.extend(
            wrapped(&end.why, width.saturating_sub(2))
                .into_iter()
                .take(4)
                .map(|l| Line::styled(format!("  {l}"), theme::error())),
        );
        lines.push(Line::styled("its last connection:", theme::dim()));
    }
    // How it is reached, and the process where there is one.
    let via = match h.pid {
        Some(pid) => format!("{} · pid {pid}", h.transport.label()),
        None => h.transport.label().to_string(),
    };
    lines.push(kv("via", via, value));
    lines.push(kv("since", h.connected_at.clone(), value));
    if !ended {
        let open_for = state.now.saturating_duration_since(h.opened);
        lines.push(kv("up", age(open_for), value));
    }
    lines.push(kv("protocol", line(&h.protocol_version, 20), value));
    if let Some(token) = &h.token {
        // What the operator may know of the sign-in: never the token itself.
        let expiry = match token.expires {
            None => "no expiry given".to_string(),
            Some(at) if at <= state.now => "now (renewed at the next request)".into(),
            Some(at) => format!("in {}", age(at - state.now)),
        };
        let room = width.saturating_sub(9);
        lines.push(kv("sign-in", format!("{} token", token.token_type), value));
        lines.push(kv("expires", expiry, value));
        lines.push(kv("issuer", line(&token.issuer, room), value));
        let scopes = if token.scopes.is_empty() {
            "(none named)".to_string()
        } else {
            token.scopes.join(" ")
        };
        for (i, part) in wrapped(&scopes, room).into_iter().take(3).enumerate() {
            lines.push(kv(if i == 0 { "scopes" } else { "" }, part, value));
        }
    }
    let server_claim = format!(
        "{} {}",
        line(&h.server_name, 30),
        line(&h.server_version, 16)
    );
    lines.push(kv("server", server_claim, claim));
    lines.push(kv(
        "calls",
        format!("{} ok · {} failed", h.calls_ok, h.calls_failed),
        value,
    ));
    if h.tasks_total > 0 || h.tasks_running > 0 {
        lines.push(kv(
            "tasks",
            format!("{} running · {} in all", h.tasks_running, h.tasks_total),
            value,
        ));
    }
    if let Some(ms) = h.last_latency_ms {
        lines.push(kv("latency", format!("{ms} ms (last call)"), value));
    }
    if let Some((at, error)) = &h.last_error {
        let style = if ended { theme::dim() } else { theme::error() };
        lines.push(Line::styled(format!("last error {at}:"), style));
        lines.extend(
            wrapped(error, width.saturating_sub(2))
                .into_iter()
                .take(3)
                .map(|l| Line::styled(format!("  {l}"), style)),
        );
    }
    lines.push(Line::styled("stderr (untrusted):", theme::dim()));
    let room = (inner.height as usize).saturating_sub(lines.len());
    let tail = &h.stderr_tail[h.stderr_tail.len().saturating_sub(room)..];
    if tail.is_empty() {
        lines.push(Line::styled("  (nothing)", theme::dim()));
    }
    lines.extend(
        tail.iter()
            .map(|l| Line::styled(format!("  {}", line(l, width.saturating_sub(2))), claim)),
    );
    frame.render_widget(Paragraph::new(fit_lines(lines, width)), inner);
}

/// A duration as people read an age: `45s`, `3m 07s`, `2h 05m`.
pub fn age(d: Duration) -> String {
    let s = d.as_secs();
    match s {
        0..60 => format!("{s}s"),
        60..3600 => format!("{}m {:02}s", s / 60, s % 60),
        _ => format!("{}h {:02}m", s / 3600, s / 60 % 60),
    }
}
