//! Server content the operator brought in, as its own entry: whose words
//! (the alias), what (`resource URI`, `prompt NAME`), and the text the model
//! got, marked as the server's and shown inert; or why nothing came.

use ratatui::text::{Line, Span};

use super::fold::{EXPANDED_LINES, more_lines, server_output};
use crate::protocol::{ContentSource, ServerContentView};
use crate::ui::sanitize::{line, wrapped};
use crate::ui::theme;

/// Lines of text shown while collapsed.
const COLLAPSED_LINES: usize = 4;

#[derive(Debug, Clone, PartialEq)]
pub struct ServerContentCell {
    pub view: ServerContentView,
    pub expanded: bool,
}

impl From<ServerContentView> for ServerContentCell {
    fn from(view: ServerContentView) -> Self {
        Self {
            view,
            expanded: false,
        }
    }
}

impl ServerContentCell {
    pub fn lines(&self, width: usize) -> Vec<Line<'static>> {
        let view = &self.view;
        let (what, name) = match &view.source {
            ContentSource::Resource { uri } | ContentSource::Read { uri } => ("resource", uri),
            ContentSource::Prompt { name } => ("prompt", name),
        };
        let (icon, tag, style) = match (&view.error, &view.source) {
            (None, ContentSource::Resource { .. }) => {
                ("⇠", "server content, untrusted", theme::untrusted())
            }
            (None, ContentSource::Prompt { .. }) => ("⇠", "the server's words", theme::untrusted()),
            // Read in the Resources window: the model never gets it.
            (None, ContentSource::Read { .. }) => ("⇠", "for you only", theme::untrusted()),
            (Some(_), ContentSource::Read { .. }) => ("✗", "not read", theme::error()),
            (Some(_), _) => ("✗", "not included", theme::error()),
        };
        let mut lines = vec![Line::from(vec![
            Span::styled(format!("{icon} "), style),
            Span::styled(view.alias.clone(), theme::strong()),
            Span::raw(format!(" · {what}")),
            Span::styled(format!("  {tag}"), style),
        ])];
        // The URI or name on lines of its own: its end tells resources apart.
        lines.extend(
            wrapped(name, width.saturating_sub(2))
                .into_iter()
                .map(|l| Line::raw(format!("  {l}"))),
        );
        if let Some(error) = &view.error {
            lines.extend(
                wrapped(error, width.saturating_sub(4))
                    .into_iter()
                    .map(|l| Line::styled(format!("  │ {l}"), theme::error())),
            );
        }
        let max = if self.expanded {
            EXPANDED_LINES
        } else {
            COLLAPSED_LINES
        };
        let mut body: Vec<Line<'static>> = Vec::new();
        for part in &view.parts {
            // A prompt's roles head their messages; one text needs no label.
            if view.parts.len() > 1 || part.label != "text" {
                body.push(Line::styled(
                    format!("  {}", line(&part.label, 40)),
                    theme::dim(),
                ));
            }
            body.extend(
                wrapped(&part.text, width.saturating_sub(4))
                    .into_iter()
                    .map(|l| Line::styled(format!("  ┆ {l}"), theme::untrusted())),
            );
        }
        let hidden = body.len().saturating_sub(max);
        lines.extend(body.into_iter().take(max));
        if hidden > 0 {
            lines.push(Line::styled(
                format!("  ┆ … {} (Enter expands)", more_lines(hidden)),
                theme::dim(),
            ));
        }
        if let Some(server) = &view.server_output {
            lines.extend(server_output(server, width, self.expanded));
        }
        lines
    }
}
