//! The live registry: published tools beside what is exposed (exposed name and
//! local effect, or why not), the effect in a fixed right-hand column. A
//! revoked listing stays where it was, struck out, each row read `ALIAS/TOOL`.
//! Only the rows on screen are drawn.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use crate::protocol::PinStatus;
use crate::ui::content::{registry_empty, registry_header};
use crate::ui::layout::registry_geometry;
use crate::ui::rows::{EFFECT_WIDTH, RegistryRow};
use crate::ui::sanitize::{inert_text, wrapped};
use crate::ui::state::{AppState, Focus};
use crate::ui::text::{fit, fit_lines, pad};
use crate::ui::theme::{self, fitted_block};

pub fn draw(frame: &mut Frame, area: Rect, state: &AppState) {
    let focused = state.focus == Focus::Registry;
    let block = fitted_block(&title(state, area.width), focused, area.width);
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let width = inner.width as usize;
    let rows = state.rows();
    let geometry = registry_geometry(inner, state);
    let mut lines = registry_header(state, width, geometry.compact);
    if rows.refs.is_empty() {
        lines.extend(
            wrapped(&registry_empty(state), width)
                .into_iter()
                .map(|l| Line::styled(l, theme::dim())),
        );
    }
    let shape = Shape {
        width,
        name: rows.name_column(width, geometry.compact),
        all: state.registry_all,
        compact: geometry.compact,
    };
    let source = state.source();
    for i in geometry.first..(geometry.first + geometry.height).min(rows.refs.len()) {
        let Some(row) = source.resolve(rows.refs[i]) else {
            continue;
        };
        let mut line = shape.row(&row);
        if focused && i == state.selected_tool {
            line = line.style(theme::selected());
        }
        lines.push(line);
    }
    frame.render_widget(Paragraph::new(fit_lines(lines, width)), inner);
}

/// The mark of a tool whose definition holds invisible characters.
pub const HIDDEN: &str = " [hidden text]";

/// `Registry v4 · demo_alpha`, and while a filter is set `· /QUERY M/N`; in a
/// narrow pane the query gives way (cut with `…`) before the counts do.
fn title(state: &AppState, width: u16) -> String {
    let scope = if state.registry_all {
        "all servers".to_string()
    } else {
        state
            .selected_server()
            .map(|s| s.alias.clone())
            .unwrap_or_default()
    };
    let base = format!("Registry v{} · {scope}", state.snapshot_version);
    let pins = pins_summary(state);
    let Some(filter) = &state.filter else {
        return base + &pins;
    };
    let rows = state.rows();
    let cursor = if filter.editing { "▏" } else { "" };
    let counts = format!(" {}/{}", rows.refs.len(), rows.total);
    let query = inert_text(&filter.query);
    // Borders and " · /": what the query has beside the rest.
    let room = |title: &str| {
        (width as usize).saturating_sub(
            4 + crate::ui::text::width(title) + 4 + counts.len() + cursor.chars().count(),
        )
    };
    // The pins summary gives way first, then the query (cut with …); the
    // counts stay.
    let with_pins = base.clone() + &pins;
    let mut title = if room(&with_pins) >= crate::ui::text::width(&query).min(8) {
        with_pins
    } else {
        base
    };
    let room = room(&title).max(4);
    title.push_str(&format!(" · /{}{cursor}{counts}", fit(&query, room)));
    title
}

/// How the rows are laid out this frame.
struct Shape {
    width: usize,
    /// The name column.
    name: usize,
    all: bool,
    compact: bool,
}

impl Shape {
    fn row(&self, row: &RegistryRow<'_>) -> Line<'static> {
        let tool = row.tool();
        let left = self.width.saturating_sub(EFFECT_WIDTH + 1);
        let name_col = self.name.min(left);
        let rest = left.saturating_sub(name_col + 3);
        let effect_word = row.effect_word();
        let effect = Span::styled(
            format!(" {effect_word:>EFFECT_WIDTH$}"),
            match (row, tool.effect) {
                (RegistryRow::Struck { .. }, _) => theme::error(),
                (_, Some(effect)) => theme::effect(effect),
                (_, None) => theme::dim(),
            },
        );
        match row {
            RegistryRow::Struck { alias, cause, .. } => {
                let name = format!("{alias}/{}", inert_text(&tool.name));
                Line::from(vec![
                    Span::styled(pad(&name, name_col), theme::revoked()),
                    // The effect column says "revoked"; here, why.
                    Span::styled(pad(&format!("   {}", cause.text), rest + 3), theme::error()),
                    effect,
                ])
            }
            RegistryRow::Tool { alias, .. } => {
                // A tool not (yet) published as approved is marked first: no
                // pin yet (+), or not what was approved (≠). Pinned ones are
                // the norm, said once in the title.
                let mark = pin_mark(tool.pin);
                let mut name = if self.all {
                    format!("{alias}/{}", inert_text(&tool.name))
                } else {
                    inert_text(&tool.name)
                };
                // Invisible characters in its definition (rule 15): marked, always.
                if tool.hidden_text {
                    name.push_str(HIDDEN);
                }
                let (arrow, middle, style) = match &tool.exposed_as {
                    Some(exposed) if !self.compact => (" → ", exposed.clone(), Style::new()),
                    Some(exposed) => {
                        // The exposed name is mcp__ALIAS__ + the normalized name:
                        // show the end only where normalizing changed it.
                        let end = tail(exposed, alias);
                        if end == tool.name {
                            ("   ", String::new(), Style::new())
                        } else {
                            (" → ", end.to_string(), Style::new())
                        }
                    }
                    None => (
                        " ✗ ",
                        tool.why_not.clone().unwrap_or_else(|| "not exposed".into()),
                        theme::error(),
                    ),
                };
                let name_style = if tool.hidden_text {
                    theme::warn()
                } else {
                    Style::new()
                };
                let mut spans = Vec::with_capacity(5);
                let name_col = match mark {
                    Some(mark) => {
                        spans.push(mark);
                        name_col.saturating_sub(2)
                    }
                    None => name_col,
                };
                spans.extend([
                    Span::styled(pad(&name, name_col), name_style),
                    Span::styled(arrow, theme::dim()),
                    Span::styled(pad(&middle, rest), style),
                    effect,
                ]);
                Line::from(spans)
            }
        }
    }
}

/// The exposed name without its `mcp__{alias}__` prefix. Normalising keeps one
/// character per character, so the prefix is as long as the alias plus seven;
/// an alias with `__` in it is cut right, where splitting on `__` would not be.
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
