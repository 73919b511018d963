//! The `?` overlay: every key, drawn from the same table the dispatcher uses.

use ratatui::Frame;
use ratatui::widgets::{Clear, Paragraph};

use crate::ui::content::help_lines;
use crate::ui::layout::{help_area, max_scroll};
use crate::ui::theme::pane_block;

pub fn draw(frame: &mut Frame, scroll: u16) {
    let area = help_area(frame.area());
    let block = pane_block("Keys (Esc closes)", true);
    let inner = block.inner(area);
    frame.render_widget(Clear, area);
    frame.render_widget(block, area);
    let lines = help_lines(inner.width as usize);
    let scroll = scroll.min(max_scroll(area, lines.len()));
    frame.render_widget(Paragraph::new(lines).scroll((scroll, 0)), inner);
}
