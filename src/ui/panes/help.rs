//! The `?` overlay: every key, drawn from the same table the dispatcher uses.

use ratatui::Frame;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Clear, Paragraph, Wrap};

use super::{centered, pane_block};
use crate::ui::keymap::{BINDINGS, Scope, listed};
use crate::ui::theme;

const ORDER: [Scope; 11] = [
    Scope::Global,
    Scope::Input,
    Scope::Conversation,
    Scope::Servers,
    Scope::Registry,
    Scope::Health,
    Scope::Approval,
    Scope::Elicitation,
    Scope::Detail,
    Scope::CallTool,
    Scope::WritePolicy,
];

pub fn draw(frame: &mut Frame, scroll: u16) {
    let area = centered(frame.area(), 90, frame.area().height.saturating_sub(2));
    let block = pane_block("Keys (Esc closes)", true);
    let inner = block.inner(area);
    frame.render_widget(Clear, area);
    frame.render_widget(block, area);
    let mut lines = Vec::new();
    for scope in ORDER {
        lines.push(Line::styled(scope.title(), theme::strong()));
        for b in BINDINGS.iter().filter(|b| b.scope == scope && listed(b)) {
            lines.push(Line::from(vec![
                Span::styled(format!("  {:<12}", b.keys), theme::accent()),
                Span::raw(b.desc),
            ]));
        }
    }
    lines.push(Line::raw(""));
    lines.push(Line::styled(
        "Mouse: click a pane to focus it or a row to select it; the wheel scrolls.",
        theme::dim(),
    ));
    frame.render_widget(
        Paragraph::new(lines)
            .wrap(Wrap { trim: false })
            .scroll((scroll, 0)),
        inner,
    );
}
