//! How much of a long text an entry shows, and how it says what it left out.

use ratatui::text::Line;

use crate::ui::sanitize::wrapped;
use crate::ui::theme;

/// Lines shown of an expanded entry (the model got all of it).
pub const EXPANDED_LINES: usize = 200;

pub fn more_lines(n: usize) -> String {
    if n == 1 {
        "1 more line".into()
    } else {
        format!("{n} more lines")
    }
}

/// Lines of server output shown while an entry is collapsed.
const COLLAPSED_SERVER_LINES: usize = 3;

/// What a server said that the model did not see, marked untrusted: three
/// lines while collapsed, the rest counted.
pub fn server_output(text: &str, width: usize, expanded: bool) -> Vec<Line<'static>> {
    let mut lines = vec![Line::styled(
        "  server output (untrusted, not shown to the model):",
        theme::untrusted(),
    )];
    let all = wrapped(text, width.saturating_sub(4));
    let max = if expanded {
        EXPANDED_LINES
    } else {
        COLLAPSED_SERVER_LINES
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
    lines
}
