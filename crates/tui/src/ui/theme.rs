//! Semantic styles: named roles, 16-colour safe, readable on dark and light
//! terminals (no fixed backgrounds except for the selection and badges).

use ratatui::style::{Color, Modifier, Style};
use ratatui::text::Span;
use ratatui::widgets::{Block, Borders};

use crate::protocol::{AliasStatus, PolicyEffect};

pub fn ok() -> Style {
    Style::new().fg(Color::Green)
}

pub fn warn() -> Style {
    Style::new().fg(Color::Yellow)
}

pub fn error() -> Style {
    Style::new().fg(Color::Red)
}

pub fn dim() -> Style {
    Style::new().add_modifier(Modifier::DIM)
}

pub fn accent() -> Style {
    Style::new().fg(Color::Cyan)
}

pub fn strong() -> Style {
    Style::new().add_modifier(Modifier::BOLD)
}

pub fn selected() -> Style {
    Style::new().add_modifier(Modifier::REVERSED)
}

pub fn revoked() -> Style {
    Style::new()
        .fg(Color::Red)
        .add_modifier(Modifier::CROSSED_OUT)
}

/// Text that came from a server or the model: marked, never styled as ours.
pub fn untrusted() -> Style {
    Style::new().fg(Color::Magenta)
}

/// The border of the focused pane.
pub fn border(focused: bool) -> Style {
    if focused { accent() } else { dim() }
}

/// The colour of an alias state.
pub fn state(state: AliasStatus) -> Style {
    match state {
        AliasStatus::Ready => ok(),
        AliasStatus::Connecting => warn(),
        AliasStatus::Rejected | AliasStatus::Failed | AliasStatus::Lost => error(),
        AliasStatus::Disconnected => dim(),
    }
}

/// The colour of a local effect.
pub fn effect(effect: PolicyEffect) -> Style {
    match effect {
        PolicyEffect::Allow => ok(),
        PolicyEffect::Confirm => warn(),
        PolicyEffect::Deny => error(),
    }
}

/// A bordered pane with its title; the focused one stands out.
pub fn pane_block(title: &str, focused: bool) -> Block<'static> {
    Block::default()
        .borders(Borders::ALL)
        .border_style(border(focused))
        .title(Span::styled(
            format!(" {title} "),
            if focused { strong() } else { dim() },
        ))
}

/// A pane block whose title is cut (with `…`) to a pane `width` wide.
pub fn fitted_block(title: &str, focused: bool, width: u16) -> Block<'static> {
    let room = width.saturating_sub(4) as usize;
    pane_block(&super::text::fit(title, room), focused)
}
