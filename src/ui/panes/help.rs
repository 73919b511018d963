//! The `?` overlay: every key, drawn from the same table the dispatcher uses.

use ratatui::Frame;
use ratatui::layout::{Margin, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Clear, Paragraph};

use super::{centered, pane_block};
use crate::ui::keymap::{BINDINGS, Scope, listed};
use crate::ui::sanitize::wrapped;
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

/// Where help is drawn on a screen this big.
fn area(screen: Rect) -> Rect {
    centered(screen, 90, screen.height.saturating_sub(2))
}

/// Every key, wrapped to `width`.
fn lines(width: usize) -> Vec<Line<'static>> {
    // The keys' column is as wide as the widest keys.
    let column = BINDINGS
        .iter()
        .map(|b| b.keys.chars().count())
        .max()
        .unwrap_or(0)
        + 3;
    let mut lines = Vec::new();
    for scope in ORDER {
        lines.push(Line::styled(scope.title(), theme::strong()));
        for b in BINDINGS.iter().filter(|b| b.scope == scope && listed(b)) {
            // Keys in a column of their own; a long description wraps under itself.
            let keys = format!("  {:<width$}", b.keys, width = column - 2);
            let indent = column;
            for (i, part) in wrapped(b.desc, width.saturating_sub(indent))
                .into_iter()
                .enumerate()
            {
                lines.push(Line::from(vec![
                    Span::styled(
                        if i == 0 {
                            keys.clone()
                        } else {
                            " ".repeat(indent)
                        },
                        theme::accent(),
                    ),
                    Span::raw(part),
                ]));
            }
        }
    }
    lines.push(Line::raw(""));
    lines.extend(
        wrapped(
            "Mouse: click a pane to focus it or a row to select it; the wheel scrolls.",
            width,
        )
        .into_iter()
        .map(|l| Line::styled(l, theme::dim())),
    );
    lines
}

/// How far help can scroll on a screen this big (its last line at the bottom).
pub fn max_scroll(screen: Rect) -> u16 {
    let inner = area(screen).inner(Margin::new(1, 1));
    let total = lines(inner.width as usize).len();
    u16::try_from(total.saturating_sub(inner.height as usize)).unwrap_or(u16::MAX)
}

pub fn draw(frame: &mut Frame, scroll: u16) {
    let area = area(frame.area());
    let block = pane_block("Keys (Esc closes)", true);
    let inner = block.inner(area);
    frame.render_widget(Clear, area);
    frame.render_widget(block, area);
    let scroll = scroll.min(max_scroll(frame.area()));
    frame.render_widget(
        Paragraph::new(lines(inner.width as usize)).scroll((scroll, 0)),
        inner,
    );
}
