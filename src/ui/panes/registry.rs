//! The live registry: published tools beside what is exposed (exposed name and
//! local effect, or why not). Revoked tools stay struck out for a moment.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use crate::protocol::{AliasStatus, PinStatus};
use crate::ui::content::registry_header;
use crate::ui::layout::registry_geometry;
use crate::ui::rows::{RegistryRow, registry_rows};
use crate::ui::sanitize::line;
use crate::ui::state::{AppState, Focus};
use crate::ui::theme;
use crate::ui::theme::pane_block;

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
        &format!(
            "Registry v{} · {scope}{}",
            state.snapshot_version,
            pins_summary(state)
        ),
        focused,
    );
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let width = inner.width as usize;
    let rows = registry_rows(state);
    let geometry = registry_geometry(inner, state);
    let compact = geometry.compact;
    let mut lines = registry_header(state, width, compact);
    if rows.is_empty() {
        let hint = match state.selected_server() {
            Some(s) if s.state == AliasStatus::Ready => "it publishes no tools",
            Some(s) if s.sign_in == crate::protocol::SignInStatus::Needed => {
                "not connected: it needs a sign-in (select it in Servers and press s)"
            }
            Some(_) => "not connected (select it in Servers and press c)",
            None => "no server selected",
        };
        lines.extend(
            crate::ui::sanitize::wrapped(hint, width)
                .into_iter()
                .map(|l| Line::styled(l, theme::dim())),
        );
    }
    for (i, row) in rows
        .iter()
        .enumerate()
        .skip(geometry.first)
        .take(geometry.height)
    {
        let mut l = render_row(row, width, state.registry_all, compact);
        if focused && i == state.selected_tool {
            l = l.style(theme::selected());
        }
        lines.push(l);
    }
    frame.render_widget(Paragraph::new(lines), inner);
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

fn pin_mark(pin: PinStatus) -> Option<Span<'static>> {
    match pin {
        PinStatus::New => Some(Span::styled("+ ", theme::warn())),
        PinStatus::Changed => Some(Span::styled("≠ ", theme::error())),
        PinStatus::Pinned | PinStatus::Off => None,
    }
}

/// Said once for the selected server: its checked definitions are all pinned
/// (what runs is what was approved), or how many are not.
fn pins_summary(state: &AppState) -> String {
    let Some(server) = state.selected_server().filter(|_| !state.registry_all) else {
        return String::new();
    };
    let count = |pin| server.published.iter().filter(|t| t.pin == pin).count();
    let (pinned, new, changed) = (
        count(PinStatus::Pinned),
        count(PinStatus::New),
        count(PinStatus::Changed),
    );
    match (changed, new) {
        (0, 0) if pinned > 0 => " · ✓ pinned".into(),
        (0, 0) => String::new(),
        (0, new) => format!(" · + {new} unpinned"),
        (changed, _) => format!(" · ≠ {changed} changed"),
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
            let mut row = match (&tool.exposed_as, tool.effect) {
                (Some(exposed), effect) => {
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
                        match effect {
                            Some(effect) => {
                                Span::styled(format!(" {effect}"), theme::effect(effect))
                            }
                            None => Span::raw(" "),
                        },
                    ])
                }
                (None, _) => {
                    let why = tool.why_not.clone().unwrap_or_else(|| "not exposed".into());
                    Line::from(vec![
                        name,
                        Span::styled(format!(" ✗ {why}"), theme::error()),
                    ])
                }
            };
            // A tool not (yet) published as approved is marked first: no pin
            // yet (+), or not what was approved (≠). Pinned ones are the
            // norm, said once in the title.
            if let Some(mark) = pin_mark(tool.pin) {
                row.spans.insert(0, mark);
            }
            row
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
