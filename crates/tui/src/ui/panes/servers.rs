//! The servers side panel: every configured alias, its state and tool count,
//! and for the selected one, why it is not ready (lines from `content`, which
//! the layout measures too).

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::widgets::Paragraph;

use crate::ui::content::servers_lines;
use crate::ui::state::{AppState, Focus};
use crate::ui::text::fit_lines;
use crate::ui::theme::pane_block;

pub fn draw(frame: &mut Frame, area: Rect, state: &AppState) {
    let focused = state.focus == Focus::Servers;
    let block = pane_block("Servers", focused);
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let width = inner.width as usize;
    frame.render_widget(
        Paragraph::new(fit_lines(servers_lines(state, width), width)),
        inner,
    );
}
