//! The elicitation form: the server's words (untrusted, marked so) and the
//! fields it asks for, in its order, each with its label, its required mark,
//! what it takes, and — after a refused send — its problem.

use ratatui::Frame;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Clear, Paragraph};

use crate::protocol::{CallId, FieldKind, FieldView, Requester};
use crate::ui::keymap::Scope;
use crate::ui::keymap::key_items;
use crate::ui::layout::centered;
use crate::ui::sanitize::{inert_text, line, wrapped};
use crate::ui::state::{AppState, ElicitForm, FieldValue, choice_label};
use crate::ui::text::{fit_lines, width};
use crate::ui::theme::{self, fitted_block};

/// The label column at its narrowest (with the required mark).
const LABEL: usize = 18;

/// What a field's value keeps when the screen is too narrow for its labels.
const VALUE_ROOM: usize = 30;

/// Whose call the question came during: an outside client's is answered by
/// the operator for it, never by the gateway, so the form says which.
fn during(call: &CallId, requester: &Requester) -> Line<'static> {
    let mut line = vec![Span::styled("during ", theme::dim())];
    line.extend(whose_call(call, requester));
    Line::from(line)
}

/// `outside client claude's call gw-3`.
fn whose_call(call: &CallId, requester: &Requester) -> Vec<Span<'static>> {
    let whose = match requester {
        Requester::Client(name) => format!("outside client {}", inert_text(name)),
        other => other.to_string(),
    };
    vec![
        Span::styled(whose, theme::accent()),
        Span::styled("'s call ", theme::dim()),
        Span::raw(inert_text(call.as_str())),
    ]
}

/// The calls a question may have come during, when the connection cannot
/// tell which: said as such, one per line, never a guess.
fn may_be(calls: &[(CallId, Requester)]) -> Vec<Line<'static>> {
    let mut lines = vec![Line::styled(
        format!(
            "during one of {} calls in flight (the server did not say which):",
            calls.len()
        ),
        theme::dim(),
    )];
    for (call, requester) in calls {
        let mut line = vec![Span::raw("  ")];
        line.extend(whose_call(call, requester));
        lines.push(Line::from(line));
    }
    lines
}

pub fn draw(frame: &mut Frame, state: &AppState) {
    let Some(form) = state.elicitations.front() else {
        return;
    };
    // The form widens to its longest label (up to the screen) before it cuts one.
    let screen = frame.area().width as usize;
    let label = form
        .view
        .fields
        .iter()
        .map(|f| width(&inert_text(f.title.as_deref().unwrap_or(&f.name))) + 1)
        .fold(LABEL, usize::max);
    let width = (72.max(screen * 3 / 5) + label - LABEL).min(screen);
    let inner_width = width.saturating_sub(2);
    let label = label.min(LABEL.max(inner_width.saturating_sub(VALUE_ROOM)));
    let width = width as u16;
    let mut lines = vec![Line::from(vec![
        Span::styled("server ", theme::dim()),
        Span::raw(inert_text(&form.view.alias)),
    ])];
    if let Some((call, requester)) = &form.view.during {
        lines.push(during(call, requester));
    } else if !form.view.may_be.is_empty() {
        lines.extend(may_be(&form.view.may_be));
    }
    lines.push(Line::styled(
        "asks (its own words, untrusted):",
        theme::dim(),
    ));
    lines.extend(
        wrapped(&form.view.message, inner_width.saturating_sub(2))
            .into_iter()
            .map(|l| Line::styled(format!("  {l}"), theme::untrusted())),
    );
    lines.push(Line::raw(""));
    for (i, (field, value)) in form.view.fields.iter().zip(&form.values).enumerate() {
        lines.extend(field_lines(form, i, field, value, label, inner_width));
    }
    if form.view.fields.is_empty() {
        lines.push(Line::styled(
            "(no fields: Enter answers with nothing, Ctrl-D declines)",
            theme::dim(),
        ));
    }
    if let Some(problem) = &form.problem {
        lines.push(Line::styled(problem.clone(), theme::error()));
    }
    if form.sent {
        lines.push(Line::styled("sending…", theme::warn()));
    }
    let armed = state.form_armed();
    if !armed {
        let arming = format!("arming: {}", super::approval::where_keys_go(state));
        lines.extend(
            wrapped(&arming, inner_width)
                .into_iter()
                .map(|l| Line::styled(l, theme::warn())),
        );
    }
    let key_style = if armed { theme::accent() } else { theme::dim() };
    lines.extend(
        super::approval::packed(&key_items(Scope::Elicitation), inner_width)
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
    let block = fitted_block(&title, true, area.width);
    let inner = block.inner(area);
    frame.render_widget(Clear, area);
    frame.render_widget(block, area);
    // Keep the focused field on screen when the form is taller than the screen.
    let focus_line = lines
        .iter()
        .position(|l| l.style == theme::selected())
        .unwrap_or(0);
    let room = inner.height as usize;
    let skip = (focus_line + 4).saturating_sub(room);
    let lines: Vec<Line<'static>> = lines.into_iter().skip(skip).collect();
    frame.render_widget(Paragraph::new(fit_lines(lines, inner_width)), inner);
}

fn field_lines(
    form: &ElicitForm,
    i: usize,
    field: &FieldView,
    value: &FieldValue,
    label_column: usize,
    width: usize,
) -> Vec<Line<'static>> {
    let focused = i == form.selected;
    let label = field.title.clone().unwrap_or_else(|| field.name.clone());
    let mark = if field.required { "*" } else { " " };
    let head = Span::styled(
        format!(
            "{mark}{} ",
            crate::ui::text::pad(&inert_text(&label), label_column - 1)
        ),
        theme::strong(),
    );
    let shown = shown(field, value, focused);
    let mut row = Line::from(vec![
        head,
        Span::raw(line(&shown, width.saturating_sub(label_column + 1))),
    ]);
    if focused {
        row = row.style(theme::selected());
    }
    let mut lines = vec![row];
    let indent = " ".repeat(label_column + 1);
    if let Some(description) = &field.description {
        lines.push(Line::styled(
            format!(
                "{indent}{}",
                line(description, width.saturating_sub(label_column + 1))
            ),
            theme::untrusted(),
        ));
    }
    if focused && let Some(hint) = hint(&field.kind) {
        lines.push(Line::styled(format!("{indent}{hint}"), theme::dim()));
    }
    if let Some(problem) = form.problems.get(i).and_then(Option::as_ref) {
        lines.push(Line::styled(
            format!(
                "{indent}✗ {}",
                line(problem, width.saturating_sub(label_column + 3))
            ),
            theme::error(),
        ));
    }
    lines
}

/// What a field shows as its value.
fn shown(field: &FieldView, value: &FieldValue, focused: bool) -> String {
    match (&field.kind, value) {
        (_, FieldValue::Text(t)) => {
            let cursor = if focused { "▏" } else { "" };
            format!("{}{cursor}", inert_text(t))
        }
        (_, FieldValue::Bool(b)) => match b {
            Some(true) => "[x] yes".into(),
            Some(false) => "[ ] no".into(),
            None => "[-] not answered".into(),
        },
        (FieldKind::Choice(options), FieldValue::One(at)) => {
            let current = at
                .and_then(|i| options.get(i))
                .map_or("(none chosen)".to_string(), |c| inert_text(choice_label(c)));
            format!("‹ {current} ›  of {}", options.len())
        }
        (FieldKind::Choices { options, .. }, FieldValue::Many { chosen, cursor }) => options
            .iter()
            .zip(chosen)
            .enumerate()
            .map(|(i, (o, on))| {
                let mark = if *on { "[x]" } else { "[ ]" };
                let here = if focused && i == *cursor { "›" } else { " " };
                format!("{here}{mark} {}", inert_text(choice_label(o)))
            })
            .collect::<Vec<_>>()
            .join(" "),
        _ => String::new(),
    }
}

/// What a field takes, said under it while it has the focus.
fn hint(kind: &FieldKind) -> Option<String> {
    let range = |min: Option<String>, max: Option<String>, unit: &str| match (min, max) {
        (Some(a), Some(b)) => format!(" {a}–{b}{unit}"),
        (Some(a), None) => format!(" at least {a}{unit}"),
        (None, Some(b)) => format!(" at most {b}{unit}"),
        (None, None) => String::new(),
    };
    Some(match kind {
        FieldKind::Text {
            format,
            min_length,
            max_length,
        } => {
            let what = format.map_or("text", |f| f.hint());
            let len = range(
                min_length.map(|n| n.to_string()),
                max_length.map(|n| n.to_string()),
                " characters",
            );
            format!(
                "{what}{}",
                if len.is_empty() {
                    len
                } else {
                    format!(",{len}")
                }
            )
        }
        FieldKind::Integer { minimum, maximum } => format!(
            "a whole number{}",
            range(
                minimum.map(|n| n.to_string()),
                maximum.map(|n| n.to_string()),
                ""
            )
        ),
        FieldKind::Number { minimum, maximum } => format!(
            "a number{}",
            range(
                minimum.map(|n| n.to_string()),
                maximum.map(|n| n.to_string()),
                ""
            )
        ),
        FieldKind::Boolean => "Space toggles".into(),
        FieldKind::Choice(_) => "←/→ choose".into(),
        FieldKind::Choices { min, max, .. } => format!(
            "←/→ move · Space picks{}",
            range(
                min.map(|n| n.to_string()),
                max.map(|n| n.to_string()),
                " of them"
            )
        ),
    })
}
