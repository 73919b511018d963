//! The elicitation form: the server's words (untrusted, marked so) and the
//! fields it asks for, prefilled with the schema's defaults.

use ratatui::Frame;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Clear, Paragraph};

use crate::protocol::FieldKind;
use crate::ui::keymap::{Scope, hints};
use crate::ui::layout::centered;
use crate::ui::sanitize::{line, wrapped};
use crate::ui::state::AppState;
use crate::ui::theme;
use crate::ui::theme::pane_block;

pub fn draw(frame: &mut Frame, state: &AppState) {
    let Some(form) = state.elicitations.front() else {
        return;
    };
    let width = 72.max(frame.area().width * 3 / 5).min(frame.area().width);
    let inner_width = width.saturating_sub(2) as usize;
    let mut lines = vec![
        Line::from(vec![
            Span::styled("server ", theme::dim()),
            Span::raw(form.view.alias.clone()),
        ]),
        Line::styled("asks (its own words, untrusted):", theme::dim()),
    ];
    lines.extend(
        wrapped(&form.view.message, inner_width.saturating_sub(2))
            .into_iter()
            .map(|l| Line::styled(format!("  {l}"), theme::untrusted())),
    );
    lines.push(Line::raw(""));
    for (i, (field, value)) in form.view.fields.iter().zip(&form.values).enumerate() {
        let label = field.title.clone().unwrap_or_else(|| field.name.clone());
        let mark = if field.required { "*" } else { " " };
        let shown = match &field.kind {
            FieldKind::Boolean => format!("[{}]", if value == "true" { "x" } else { " " }),
            FieldKind::Choice(options) => format!("‹ {} ›  ({})", value, options.join(" / ")),
            _ => format!("{value}▏"),
        };
        let mut row = Line::from(vec![
            Span::styled(format!("{mark}{:<16} ", line(&label, 16)), theme::strong()),
            Span::raw(line(&shown, inner_width.saturating_sub(18))),
        ]);
        if i == form.selected {
            row = row.style(theme::selected());
        }
        lines.push(row);
        if let Some(description) = &field.description {
            lines.push(Line::styled(
                format!("   {}", line(description, inner_width.saturating_sub(3))),
                theme::untrusted(),
            ));
        }
    }
    if let Some(problem) = &form.problem {
        lines.push(Line::styled(problem.clone(), theme::error()));
    }
    let keys: Vec<String> = hints(Scope::Elicitation)
        .iter()
        .filter(|(k, _)| *k != "Ctrl-C" && *k != "Tab")
        .map(|(k, d)| format!("{k} {d}"))
        .collect();
    let armed = state.form_armed();
    if !armed {
        let arming = format!(
            "arming: keys go to the {} until you pause for a second",
            super::approval::where_keys_go(state)
        );
        lines.extend(
            wrapped(&arming, inner_width)
                .into_iter()
                .map(|l| Line::styled(l, theme::warn())),
        );
    }
    let key_style = if armed { theme::accent() } else { theme::dim() };
    lines.extend(
        wrapped(&keys.join(" · "), inner_width)
            .into_iter()
            .map(|l| Line::styled(l, key_style)),
    );
    let height = (lines.len() as u16 + 2).min(frame.area().height.saturating_sub(2));
    let area = centered(frame.area(), width, height);
    let title = if state.elicitations.len() > 1 {
        format!("Input requested (1 of {})", state.elicitations.len())
    } else {
        "Input requested".into()
    };
    let block = pane_block(&title, true);
    let inner = block.inner(area);
    frame.render_widget(Clear, area);
    frame.render_widget(block, area);
    frame.render_widget(Paragraph::new(lines), inner);
}
