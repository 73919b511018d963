//! The conversation: typed cells, rendered bottom-up so only what is visible
//! costs anything, however long the session.

use std::time::Instant;

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use super::pane_block;
use crate::protocol::OriginView;
use crate::ui::sanitize::{line, wrapped};
use crate::ui::state::{AppState, CallStatus, Cell, Focus, ToolCallCell};
use crate::ui::theme;

/// Result lines shown for a collapsed call.
const COLLAPSED_RESULT_LINES: usize = 2;
/// Result lines shown for an expanded call (the model got all of it).
const EXPANDED_RESULT_LINES: usize = 200;

pub fn draw(frame: &mut Frame, area: Rect, state: &AppState) {
    let focused = state.focus == Focus::Conversation;
    let title = if state.scroll_back > 0 {
        format!("Conversation (scrolled up {})", state.scroll_back)
    } else {
        "Conversation".into()
    };
    let block = pane_block(&title, focused);
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let width = text_width(inner.width);
    let wanted = inner.height as usize + state.scroll_back as usize;
    let selected = if focused {
        state.selected_cell.or(state.cells.len().checked_sub(1))
    } else {
        None
    };
    // Walk back from the end until the view (plus the scroll) is filled.
    let mut lines: Vec<Line<'static>> = Vec::new();
    for (i, cell) in state.cells.iter().enumerate().rev() {
        let mut cell_lines = render(cell, width, state.now);
        if Some(i) == selected {
            for l in &mut cell_lines {
                l.spans.insert(0, Span::styled("▌", theme::accent()));
            }
        }
        cell_lines.push(Line::raw(""));
        cell_lines.extend(lines);
        lines = cell_lines;
        if lines.len() >= wanted {
            break;
        }
    }
    if state.banner {
        let mut banner = banner(width);
        banner.extend(lines);
        lines = banner;
    }
    let skip = lines.len().saturating_sub(wanted);
    let visible: Vec<Line<'static>> = lines
        .into_iter()
        .skip(skip)
        .take(inner.height as usize)
        .collect();
    frame.render_widget(Paragraph::new(visible), inner);
}

/// The text width inside a conversation pane this wide inside its border (one
/// column stays for the selection mark).
pub fn text_width(inner_width: u16) -> usize {
    inner_width.saturating_sub(1) as usize
}

/// The lines a cell takes at this width, with the blank line after it.
pub fn height(cell: &Cell, width: usize, now: Instant) -> usize {
    render(cell, width, now).len() + 1
}

/// The lines of the first-run banner, when it shows.
pub fn banner_height(state: &AppState, width: usize) -> usize {
    if state.banner { banner(width).len() } else { 0 }
}

fn banner(width: usize) -> Vec<Line<'static>> {
    let text = "Welcome to mcp-harness. No config file and no model API key were found, so this runs the embedded demo: \
        two demo MCP servers (demo_alpha, demo_beta) and a scripted model that replays a script. Type anything and \
        press Enter to watch connect, approval and revocation; Tab moves between panes, ? shows every key. \
        For real servers, write ~/.config/mcp-harness/config.toml (start from config.example.toml); for a real \
        model, set ANTHROPIC_API_KEY or OPENAI_API_KEY.";
    let mut lines: Vec<Line<'static>> = wrapped(text, width)
        .into_iter()
        .map(|l| Line::styled(l, theme::accent()))
        .collect();
    lines.push(Line::raw(""));
    lines
}

/// The lines of one cell at this width.
pub fn render(cell: &Cell, width: usize, now: Instant) -> Vec<Line<'static>> {
    match cell {
        Cell::User(text) => block_of("you", theme::accent(), text, width),
        Cell::Assistant {
            agent,
            text,
            streaming,
        } => {
            let label = if *streaming {
                format!("{agent} …")
            } else {
                agent.clone()
            };
            block_of(&label, theme::strong(), text, width)
        }
        Cell::ToolCall(call) => tool_call(call, width, now),
        Cell::Notice(text) => marked("· ", text, width, theme::dim()),
        Cell::Error(text) => marked("✗ ", text, width, theme::error()),
    }
}

/// Text with a mark on its first line and continuation lines indented under it.
fn marked(mark: &str, text: &str, width: usize, style: Style) -> Vec<Line<'static>> {
    wrapped(text, width.saturating_sub(2))
        .into_iter()
        .enumerate()
        .map(|(i, l)| Line::styled(format!("{}{l}", if i == 0 { mark } else { "  " }), style))
        .collect()
}

fn block_of(label: &str, style: Style, text: &str, width: usize) -> Vec<Line<'static>> {
    let mut lines = vec![Line::styled(label.to_string(), style)];
    lines.extend(wrapped(text, width).into_iter().map(Line::raw));
    lines
}

fn tool_call(call: &ToolCallCell, width: usize, now: Instant) -> Vec<Line<'static>> {
    let (icon, status, style) = match &call.status {
        CallStatus::AwaitingApproval => ("?", "awaiting approval".to_string(), theme::warn()),
        CallStatus::Running { since } => (
            "◌",
            format!(
                "running {:.1}s",
                now.saturating_duration_since(*since).as_secs_f32()
            ),
            theme::warn(),
        ),
        CallStatus::Ok { elapsed_ms } => ("✓", format!("ok {elapsed_ms} ms"), theme::ok()),
        CallStatus::Failed { code, .. } => ("✗", code.clone(), theme::error()),
    };
    let agent = if call.agent == "lead" {
        String::new()
    } else {
        format!("{} → ", call.agent)
    };
    // The status never gets cut: the name gives way first.
    let name_room = width
        .saturating_sub(status.chars().count() + agent.chars().count() + 4)
        .max(8);
    let header = Line::from(vec![
        Span::styled(format!("{icon} "), style),
        Span::raw(agent),
        Span::styled(line(&call.name, name_room), theme::strong()),
        Span::styled(format!("  {status}"), style),
    ]);
    let origin = match &call.origin {
        OriginView::Mcp { alias, .. } => alias.clone(),
        OriginView::Builtin => "built-in".into(),
        OriginView::Unknown => "not in this request's tools".into(),
    };
    let mut about = vec![Span::styled(format!("  {origin}"), theme::dim())];
    if let Some(effect) = &call.effect {
        about.push(Span::styled(" · ", theme::dim()));
        about.push(Span::styled(effect.clone(), theme::effect(effect)));
    }
    let mut lines = vec![header];
    if let Some(progress) = call
        .progress
        .as_ref()
        .filter(|_| matches!(call.status, CallStatus::Running { .. }))
    {
        lines.push(Line::styled(
            format!("  progress {}", line(progress, width.saturating_sub(11))),
            theme::untrusted(),
        ));
    }
    let args = if call.expanded {
        serde_json::to_string_pretty(&call.arguments).unwrap_or_default()
    } else {
        call.arguments.to_string()
    };
    if call.expanded {
        lines.push(Line::from(about));
        lines.push(Line::styled("  arguments:", theme::dim()));
        lines.extend(
            wrapped(&args, width.saturating_sub(4))
                .into_iter()
                .map(|l| Line::raw(format!("    {l}"))),
        );
    } else {
        let used: usize = about.iter().map(|s| s.content.chars().count()).sum();
        about.push(Span::styled(
            format!(" · {}", line(&args, width.saturating_sub(used + 3).max(8))),
            theme::dim(),
        ));
        lines.push(Line::from(about));
    }
    if let Some(result) = &call.result {
        let max = if call.expanded {
            EXPANDED_RESULT_LINES
        } else {
            COLLAPSED_RESULT_LINES
        };
        let all = wrapped(result, width.saturating_sub(4));
        let result_style = if matches!(call.status, CallStatus::Failed { .. }) {
            theme::error()
        } else {
            Style::new()
        };
        lines.extend(
            all.iter()
                .take(max)
                .map(|l| Line::styled(format!("  │ {l}"), result_style)),
        );
        if all.len() > max {
            lines.push(Line::styled(
                format!("  │ … {} (Enter expands)", more_lines(all.len() - max)),
                theme::dim(),
            ));
        }
    }
    if let Some(server) = &call.server_output {
        lines.push(Line::styled(
            "  server output (untrusted, not shown to the model):",
            theme::untrusted(),
        ));
        let all = wrapped(server, width.saturating_sub(4));
        let max = if call.expanded {
            EXPANDED_RESULT_LINES
        } else {
            3
        };
        lines.extend(
            all.iter()
                .take(max)
                .map(|l| Line::styled(format!("  ┆ {l}"), theme::untrusted())),
        );
        if all.len() > max {
            lines.push(Line::styled(
                format!("  ┆ … {}", more_lines(all.len() - max)),
                theme::dim(),
            ));
        }
    }
    lines
}

fn more_lines(n: usize) -> String {
    if n == 1 {
        "1 more line".into()
    } else {
        format!("{n} more lines")
    }
}
