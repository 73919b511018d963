//! The sign-in window (OAuth): the authorization URL to open, whether it was
//! opened here, where the browser must come back, and a field for the address
//! it was sent to when the browser runs on another machine.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Clear, Paragraph};

use crate::ui::keymap::{Scope, keys_of};
use crate::ui::sanitize::{line, wrapped};
use crate::ui::state::SignInWindow;
use crate::ui::theme;
use crate::ui::theme::pane_block;

pub fn draw(frame: &mut Frame, area: Rect, window: &SignInWindow) {
    let view = &window.view;
    let block = pane_block(&format!("Sign in · {}", line(&view.alias, 40)), true);
    let inner = block.inner(area);
    frame.render_widget(Clear, area);
    frame.render_widget(block, area);
    let width = inner.width as usize;
    let para = |text: &str, style| -> Vec<Line<'static>> {
        wrapped(text, width)
            .into_iter()
            .map(|l| Line::styled(l, style))
            .collect()
    };
    let mut lines = para(
        "Open this address in a browser and approve the access:",
        ratatui::style::Style::new(),
    );
    lines.push(Line::raw(""));
    // The URL whole, broken at the width only (it has no spaces to wrap at).
    let url: Vec<char> = view.url.chars().collect();
    for chunk in url.chunks(width.max(1)) {
        let chunk: String = chunk.iter().collect();
        lines.push(Line::styled(line(&chunk, width), theme::accent()));
    }
    lines.push(Line::raw(""));
    match &view.browser {
        None => lines.extend(para("It was opened in your browser.", theme::ok())),
        Some(why) => lines.extend(para(why, theme::warn())),
    }
    lines.extend(para(
        &format!(
            "Waiting for the browser to come back to {} …",
            line(&view.redirect, 80)
        ),
        theme::dim(),
    ));
    lines.extend(para(
        &format!(
            "A browser on another machine cannot reach that address: paste the address it was \
             sent to here (or run `mcp-harness login {}` in a terminal, which prints the URL on one line).",
            line(&view.alias, 40)
        ),
        theme::dim(),
    ));
    lines.push(Line::raw(""));
    let field = window
        .paste
        .chars()
        .rev()
        .take(width.saturating_sub(3))
        .collect::<Vec<_>>();
    let field: String = field.into_iter().rev().collect();
    lines.push(Line::from(vec![
        Span::styled("> ", theme::accent()),
        Span::raw(line(&field, width.saturating_sub(2))),
        Span::styled("▏", theme::accent()),
    ]));
    if let Some(problem) = &window.problem {
        lines.extend(para(problem, theme::error()));
    }
    lines.push(Line::raw(""));
    lines.push(Line::styled(keys_of(Scope::SignIn), theme::accent()));
    frame.render_widget(Paragraph::new(lines), inner);
}
