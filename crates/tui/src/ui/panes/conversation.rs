//! The conversation: typed cells (`cells.rs` renders each), drawn bottom-up so
//! only what is visible costs anything, however long the session.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use crate::ui::cells::banner;
use crate::ui::layout::conversation_text_width;
use crate::ui::state::{AppState, Focus};
use crate::ui::text::fit_lines;
use crate::ui::theme;
use crate::ui::theme::fitted_block;

pub fn draw(frame: &mut Frame, area: Rect, state: &AppState) {
    let focused = state.focus == Focus::Conversation;
    let title = if state.scroll_back > 0 {
        format!("Conversation (scrolled up {})", state.scroll_back)
    } else {
        "Conversation".into()
    };
    let block = fitted_block(&title, focused, area.width);
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let width = conversation_text_width(inner.width);
    let wanted = inner.height as usize + state.scroll_back as usize;
    let selected = if focused {
        state.selected_cell.or(state.cells.len().checked_sub(1))
    } else {
        None
    };
    // Walk back from the end until the view (plus the scroll) is filled.
    let mut lines: Vec<Line<'static>> = Vec::new();
    for (i, cell) in state.cells.iter().enumerate().rev() {
        let mut cell_lines = cell.lines(width, state.now);
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
    frame.render_widget(
        Paragraph::new(fit_lines(visible, inner.width as usize)),
        inner,
    );
}
