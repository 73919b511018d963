//! The live registry: published tools beside what is exposed (exposed name and
//! local effect, or why not). Revoked tools stay struck out for a moment.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use super::pane_block;
use crate::ui::sanitize::line;
use crate::ui::state::{AppState, Focus};
use crate::ui::theme;
use crate::ui::view::{RegistryRow, registry_rows};

pub fn draw(frame: &mut Frame, area: Rect, state: &AppState) {
    let focused = state.focus == Focus::Registry;
    let scope = if state.registry_all {
        "all servers".to_string()
    } else {
        state
            .selected_server()
            .map(|s| s.alias.clone())
            .unwrap_or_default()
    };
    let block = pane_block(
        &format!("Registry v{} · {scope}", state.snapshot_version),
        focused,
    );
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let width = inner.width as usize;
    let rows = registry_rows(state);
    let compact = !fits(&rows, width, state.registry_all);
    let mut lines = header(state, width, compact);
    let header_rows = lines.len();
    if rows.is_empty() {
        let hint = match state.selected_server() {
            Some(s) if s.state == "ready" => "it publishes no tools",
            Some(_) => "not connected (select it in Servers and press c)",
            None => "no server selected",
        };
        lines.extend(
            crate::ui::sanitize::wrapped(hint, width)
                .into_iter()
                .map(|l| Line::styled(l, theme::dim())),
        );
    }
    let (height, first) = window(state, inner.height as usize, header_rows);
    for (i, row) in rows.iter().enumerate().skip(first).take(height) {
        let mut l = render_row(row, width, state.registry_all, compact);
        if focused && i == state.selected_tool {
            l = l.style(theme::selected());
        }
        lines.push(l);
    }
    frame.render_widget(Paragraph::new(lines), inner);
}

/// Whether every row fits with its full exposed name.
fn fits(rows: &[RegistryRow<'_>], width: usize, show_alias: bool) -> bool {
    rows.iter().all(|row| match row {
        RegistryRow::Tool { alias, tool } => {
            let prefix = if show_alias { alias.len() + 1 } else { 0 };
            let exposed = tool.exposed_as.as_ref().map_or(0, String::len);
            let effect = tool.effect.as_ref().map_or(0, String::len);
            let mark = if tool.hidden_text { 14 } else { 0 };
            prefix + tool.name.chars().count() + mark + 3 + exposed + 1 + effect <= width
        }
        RegistryRow::Revoked { .. } => true,
    })
}

/// The exposed name without its `mcp__{alias}__` prefix (the alias is in the
/// title or the row). Normalising keeps one character per character, so the
/// prefix is as long as the alias plus seven; an alias with `__` in it is cut
/// right, where splitting on `__` would not be.
fn tail<'a>(exposed: &'a str, alias: &str) -> &'a str {
    let prefix = "mcp__".len() + alias.chars().count() + "__".len();
    match exposed.char_indices().nth(prefix) {
        Some((at, _)) if exposed.starts_with("mcp__") => &exposed[at..],
        _ => exposed,
    }
}

fn render_row(
    row: &RegistryRow<'_>,
    width: usize,
    show_alias: bool,
    compact: bool,
) -> Line<'static> {
    let prefix = if show_alias {
        format!("{}/", row.alias())
    } else {
        String::new()
    };
    match row {
        RegistryRow::Tool { tool, .. } => {
            let name = line(&format!("{prefix}{}", tool.name), (width / 2).max(8));
            // Invisible characters in its definition (rule 15): marked, always.
            let name = if tool.hidden_text {
                Span::styled(format!("{name} [hidden text]"), theme::warn())
            } else {
                Span::raw(name)
            };
            match (&tool.exposed_as, &tool.effect) {
                (Some(exposed), effect) => {
                    let effect = effect.clone().unwrap_or_default();
                    // Narrow pane: the exposed name is mcp__{alias}__ + the tool's
                    // normalized name; show that tail only (the detail view has it whole).
                    let shown = if compact {
                        format!("…{}", tail(exposed, row.alias()))
                    } else {
                        exposed.clone()
                    };
                    Line::from(vec![
                        name,
                        Span::styled(" → ", theme::dim()),
                        Span::raw(shown),
                        Span::styled(format!(" {effect}"), theme::effect(&effect)),
                    ])
                }
                (None, _) => {
                    let why = tool.why_not.clone().unwrap_or_else(|| "not exposed".into());
                    Line::from(vec![
                        name,
                        Span::styled(format!(" ✗ {why}"), theme::error()),
                    ])
                }
            }
        }
        RegistryRow::Revoked { name, cause, alias } => {
            let why = format!(" revoked: {cause}");
            // The full name when it fits beside why; its tail otherwise.
            let shown = if name.chars().count() + why.chars().count() <= width {
                (*name).to_string()
            } else {
                format!("…{}", tail(name, alias))
            };
            Line::from(vec![
                Span::styled(line(&shown, width.saturating_sub(14)), theme::revoked()),
                Span::styled(
                    line(&why, width.saturating_sub(shown.chars().count())),
                    theme::error(),
                ),
            ])
        }
    }
}

/// The lines above the rows: for a rejected or failed alias the whole reason
/// first, then the column header.
fn header(state: &AppState, width: usize, compact: bool) -> Vec<Line<'static>> {
    let mut lines = Vec::new();
    if let Some(server) = state.selected_server().filter(|_| !state.registry_all)
        && let Some(detail) = &server.detail
    {
        let code = server
            .code
            .as_deref()
            .map(|c| format!("{c}: "))
            .unwrap_or_default();
        let reason =
            crate::ui::sanitize::wrapped(&format!("{} — {code}{detail}", server.state), width);
        lines.extend(
            reason
                .into_iter()
                .take(8)
                .map(|l| Line::styled(l, theme::error())),
        );
        if !server.policy_missing.is_empty() || !server.policy_extra.is_empty() {
            let hint = crate::ui::sanitize::wrapped(
                "In Servers, p writes a policy for what it publishes.",
                width,
            );
            lines.extend(hint.into_iter().map(|l| Line::styled(l, theme::warn())));
        }
        lines.push(Line::raw(""));
    }
    let columns = match state.selected_server() {
        Some(s) if compact && !state.registry_all => {
            format!("published → exposed as mcp__{}__… · effect", s.alias)
        }
        _ if compact => "published → exposed as mcp__…__… · effect".to_string(),
        _ => "published → exposed as · effect".to_string(),
    };
    lines.push(Line::styled(line(&columns, width), theme::dim()));
    lines
}

/// How many rows fit, and the first one shown (the selection stays in view).
fn window(state: &AppState, inner_height: usize, header_rows: usize) -> (usize, usize) {
    let height = inner_height.saturating_sub(header_rows);
    (
        height,
        state.selected_tool.saturating_sub(height.saturating_sub(1)),
    )
}

/// The row under screen line `y` of the pane drawn in `area` (for clicks).
pub fn row_at(area: Rect, state: &AppState, y: u16) -> Option<usize> {
    let inner = area.inner(ratatui::layout::Margin::new(1, 1));
    let rows = registry_rows(state);
    let compact = !fits(&rows, inner.width as usize, state.registry_all);
    let header_rows = header(state, inner.width as usize, compact).len();
    let (height, first) = window(state, inner.height as usize, header_rows);
    let offset = (y.checked_sub(inner.y)? as usize).checked_sub(header_rows)?;
    (offset < height).then_some(first + offset)
}
