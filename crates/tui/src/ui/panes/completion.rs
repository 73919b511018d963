//! The completion list over the conversation, just above the input box:
//! resources after `@`, prompts after a leading `/`, a prompt's arguments
//! after its name. Labels and details are the servers' words, shown inert.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Clear, Paragraph};

use crate::protocol::AliasStatus;
use crate::ui::mentions::{Completion, Kind, MAX_CANDIDATES};
use crate::ui::sanitize::line;
use crate::ui::state::AppState;
use crate::ui::text::width;
use crate::ui::theme;

/// Rows of candidates shown at once (the list scrolls with the selection).
const ROWS: usize = 8;

pub fn draw(frame: &mut Frame, input: Rect, state: &AppState, completion: &Completion) {
    let lines = lines(state, completion, input.width.saturating_sub(2) as usize);
    let height = (lines.len() as u16 + 2).min(input.y);
    if height < 3 {
        return;
    }
    let area = Rect::new(input.x, input.y - height, input.width, height);
    let title = match &completion.kind {
        Kind::Resources => "@ resources".to_string(),
        Kind::Prompts => "/ prompts".to_string(),
        Kind::Arguments { alias, prompt } => {
            format!("arguments of /{alias}:{}", line(prompt, 40))
        }
    };
    frame.render_widget(Clear, area);
    let block = theme::fitted_block(&title, true, area.width);
    frame.render_widget(Paragraph::new(lines).block(block), area);
}

fn lines(state: &AppState, completion: &Completion, room: usize) -> Vec<Line<'static>> {
    let n = completion.candidates.len();
    if n == 0 {
        return vec![Line::styled(empty(state, completion), theme::dim())];
    }
    let selected = state.picker.selected.min(n - 1);
    let top = selected.saturating_sub(ROWS - 1);
    let label_room = completion
        .candidates
        .iter()
        .map(|c| width(&c.label))
        .max()
        .unwrap_or(0)
        .min(room * 2 / 3);
    let mut lines: Vec<Line<'static>> = completion.candidates[top..]
        .iter()
        .take(ROWS)
        .enumerate()
        .map(|(i, c)| {
            let style = if top + i == selected {
                theme::selected()
            } else {
                theme::strong()
            };
            let label = tail(&line(&c.label, usize::MAX), label_room);
            let pad = " ".repeat(label_room.saturating_sub(width(&label)) + 2);
            let detail = line(&c.detail, room.saturating_sub(label_room + 2));
            Line::from(vec![
                Span::styled(label, style),
                Span::raw(pad),
                Span::styled(detail, theme::dim()),
            ])
        })
        .collect();
    if n > ROWS {
        // The search stops at the cap: there may be more.
        let more = if n >= MAX_CANDIDATES { "+" } else { "" };
        lines.push(Line::styled(
            format!("{} of {n}{more} · type to narrow", selected + 1),
            theme::dim(),
        ));
    }
    lines
}

/// The end of `text` in `max` columns: URIs differ at their ends, so a cut
/// keeps the end and marks the start with `…`.
fn tail(text: &str, max: usize) -> String {
    if width(text) <= max {
        return text.to_string();
    }
    let mut kept: Vec<char> = Vec::new();
    let mut used = 1;
    for c in text.chars().rev() {
        let w = width(c.encode_utf8(&mut [0; 4]));
        if used + w > max {
            break;
        }
        used += w;
        kept.push(c);
    }
    kept.reverse();
    format!("…{}", kept.into_iter().collect::<String>())
}

/// Why the list is empty, and what to do.
fn empty(state: &AppState, completion: &Completion) -> String {
    if !completion.waiting.is_empty() || !completion.unasked.is_empty() {
        let mut aliases = completion.waiting.clone();
        aliases.extend(completion.unasked.iter().cloned());
        return format!("asking {}…", aliases.join(", "));
    }
    if !state.servers.iter().any(|s| s.state == AliasStatus::Ready) {
        return "no server is connected: connect one in Servers (Alt-2, c)".into();
    }
    let what = match completion.kind {
        Kind::Resources => "resources",
        Kind::Prompts => "prompts",
        Kind::Arguments { .. } => return "no more arguments (Enter sends)".into(),
    };
    let query = completion
        .token
        .text
        .trim_start_matches(['@', '/'])
        .to_string();
    if query.is_empty() {
        format!("no connected server lists {what}")
    } else {
        format!("no {what} match `{}`", line(&query, 40))
    }
}
