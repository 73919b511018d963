//! The live registry: published tools beside what is exposed (exposed name and
//! local effect, or why not), the effect in a fixed right-hand column. A
//! revoked listing stays where it was, struck out, each row read `ALIAS/TOOL`.
//! Only the rows on screen are drawn.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use crate::protocol::{AliasStatus, PinStatus};
use crate::ui::content::{registry_empty, registry_header};
use crate::ui::layout::registry_geometry;
use crate::ui::rows::{ARROW, EFFECT_WIDTH, RegistryRow, flag_mark};
use crate::ui::sanitize::{inert_text, wrapped};
use crate::ui::state::{AppState, Focus};
use crate::ui::text::{fit, fit_lines, fit_middle, fit_qualified, pad, pad_middle};
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

/// `Registry v4 · demo_alpha`, and while a filter is set `· /QUERY M/N`. In a
/// narrow pane the pins summary gives way first, then the query (cut with
/// `…`), then the registry's name: the counts stay, however narrow.
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
    let counts = format!("{cursor} {}/{}", rows.refs.len(), rows.total);
    let query = inert_text(&filter.query);
    filter_title(
        &base,
        &pins,
        &query,
        &counts,
        (width as usize).saturating_sub(4),
    )
}

/// `BASE PINS · /QUERY COUNTS` in `room` columns, giving way in that order.
fn filter_title(base: &str, pins: &str, query: &str, counts: &str, room: usize) -> String {
    use crate::ui::text::width;
    let sep = " · /";
    // What the query has beside a name and the counts.
    let beside = |name: &str| room.saturating_sub(width(name) + width(sep) + width(counts));
    let wanted = width(query).min(8);
    let with_pins = format!("{base}{pins}");
    if beside(&with_pins) >= wanted {
        return format!("{with_pins}{sep}{}{counts}", fit(query, beside(&with_pins)));
    }
    let least = wanted.min(4);
    if beside(base) >= least {
        return format!("{base}{sep}{}{counts}", fit(query, beside(base)));
    }
    // Too narrow for the name: cut it, then the query, down to the counts.
    let query = fit(query, least);
    let name = room.saturating_sub(width(sep) + width(&query) + width(counts));
    if name >= 4 {
        return format!("{}{sep}{query}{counts}", fit(base, name));
    }
    let short = format!("/{query}{counts}");
    if width(&short) <= room {
        return short;
    }
    counts.trim_start_matches(['▏', ' ']).to_string()
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
        // The name yields, never the effect: the arrow's columns are kept.
        let name_col = self.name.min(left.saturating_sub(ARROW));
        let rest = left.saturating_sub(name_col + ARROW);
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
                let name = fit_qualified(alias, &inert_text(&tool.name), name_col);
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
                let name = inert_text(&tool.name);
                let qualifier = self.all.then_some(*alias);
                let (arrow, middle, cut, style) = match &tool.exposed_as {
                    Some(exposed) if !self.compact => {
                        (" → ", exposed.clone(), Cut::Middle, Style::new())
                    }
                    Some(exposed) => {
                        // The exposed name is mcp__ALIAS__ + the normalized name:
                        // show the end only where normalizing changed it.
                        let end = tail(exposed, alias);
                        if end == tool.name {
                            ("   ", String::new(), Cut::Middle, Style::new())
                        } else {
                            (" → ", end.to_string(), Cut::Middle, Style::new())
                        }
                    }
                    None => (
                        " ✗ ",
                        tool.why_not.clone().unwrap_or_else(|| "not exposed".into()),
                        Cut::End,
                        theme::error(),
                    ),
                };
                let name_style = if tool.hidden_text || !tool.suspicious.is_empty() {
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
                let middle = match cut {
                    Cut::Middle => pad_middle(&middle, rest),
                    Cut::End => pad(&middle, rest),
                };
                spans.extend([
                    Span::styled(
                        name_cell(qualifier, &name, flag_mark(tool), name_col),
                        name_style,
                    ),
                    Span::styled(arrow, theme::dim()),
                    Span::styled(middle, style),
                    effect,
                ]);
                Line::from(spans)
            }
        }
    }
}

/// Where a text yields: a name in its middle (both ends tell names apart), a
/// sentence at its end.
enum Cut {
    Middle,
    End,
}

/// A name (`ALIAS/NAME` in the all-servers view) in `columns` columns, cut in
/// the middle; a definition with invisible characters (rule 15) keeps its
/// whole mark after the name wherever it fits.
fn name_cell(alias: Option<&str>, name: &str, flagged: &str, columns: usize) -> String {
    let cut = |columns| match alias {
        Some(alias) => fit_qualified(alias, name, columns),
        None => fit_middle(name, columns),
    };
    if flagged.is_empty() {
        return pad(&cut(columns), columns);
    }
    let mark = crate::ui::text::width(flagged);
    if columns >= mark + 4 {
        pad(&format!("{}{flagged}", cut(columns - mark)), columns)
    } else {
        pad_middle(&format!("{name}{flagged}"), columns)
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
        // A refused alias runs nothing: its pins matching is no all-clear.
        (0, 0) if server.state == AliasStatus::Rejected => String::new(),
        (0, 0) if pinned > 0 => " · ✓ pinned".into(),
        (0, 0) => String::new(),
        (0, new) => format!(" · + {new} unpinned"),
        (changed, _) => format!(" · ≠ {changed} changed"),
    }
}
