//! The approval prompt: a modal over everything, local facts only — the exposed
//! name, the alias, the arguments and the local effect that makes us ask.

use ratatui::Frame;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Clear, Paragraph};

use crate::protocol::Requester;
use crate::ui::keymap::{Scope, hints};
use crate::ui::layout::centered;
use crate::ui::sanitize::{name, wrapped};
use crate::ui::state::{AppState, Cell, Focus, Prompt};
use crate::ui::text::fit_lines;
use crate::ui::theme;
use crate::ui::theme::fitted_block;

pub fn draw(frame: &mut Frame, state: &AppState) {
    let Some(prompt) = state.approvals.front() else {
        return;
    };
    let pretty = serde_json::to_string_pretty(&prompt.view.arguments).unwrap_or_default();
    let width = 72.max(frame.area().width * 3 / 5).min(frame.area().width);
    let args_rows = wrapped(&pretty, width.saturating_sub(4) as usize).len() as u16;
    let keys: Vec<String> = hints(Scope::Approval)
        .iter()
        .map(|b| format!("{} {}", b.keys, b.hint))
        .collect();
    // The model's own words that came with the call: context, never a fact.
    let words: Vec<String> = model_words(state, prompt)
        .map(|t| wrapped(t, width.saturating_sub(4) as usize))
        .unwrap_or_default();
    let words_rows = if words.is_empty() {
        0
    } else {
        words.len().min(WORDS) as u16 + 1
    };
    let armed = state.prompt_armed();
    let mut footer: Vec<Line<'static>> = Vec::new();
    if !armed {
        // Until a quiet moment, keys go where they were going: say so here,
        // where the operator is looking, not only in the status bar.
        let arming = format!("arming: {}", where_keys_go(state));
        footer.extend(
            wrapped(&arming, width.saturating_sub(2) as usize)
                .into_iter()
                .map(|l| Line::styled(l, theme::warn())),
        );
    }
    let key_style = if armed { theme::accent() } else { theme::dim() };
    footer.extend(
        packed(&keys, width.saturating_sub(2) as usize)
            .into_iter()
            .map(|l| Line::styled(l, key_style)),
    );
    // Fit the content (8 fixed rows, the arguments, the keys, the border); the
    // arguments scroll when they do not fit.
    let wanted = 8 + words_rows + args_rows + footer.len() as u16 + 2;
    let area = centered(
        frame.area(),
        width,
        wanted.min(frame.area().height.saturating_sub(2)),
    );
    let queued = state.approvals.len();
    let title = if queued > 1 {
        format!("Approval needed (1 of {queued})")
    } else {
        "Approval needed".into()
    };
    let block = fitted_block(&title, true, area.width);
    let inner = block.inner(area);
    frame.render_widget(Clear, area);
    frame.render_widget(block, area);
    let width = inner.width as usize;
    let view = &prompt.view;
    let kv = |k: &str, v: String| {
        Line::from(vec![
            Span::styled(format!("{k:<13}"), theme::dim()),
            Span::raw(v),
        ])
    };
    let mut lines = vec![kv("tool", name(&view.tool, width.saturating_sub(13)))];
    match (&view.alias, &view.remote_name) {
        (Some(alias), Some(remote)) => {
            lines.push(kv("server alias", alias.clone()));
            lines.push(kv("published as", name(remote, width.saturating_sub(13))));
        }
        _ => lines.push(kv("kind", "built-in tool".into())),
    }
    lines.push(kv("requested by", view.requested_by.to_string()));
    // What the answer is bound to: this call, this definition, these arguments.
    lines.push(kv(
        "call",
        name(view.call_id.as_str(), width.saturating_sub(13)),
    ));
    if view.alias.is_some() {
        let definition = match &view.definition {
            Some(pin) => format!("pinned sha256:{}", short(pin)),
            None => "not pinned".into(),
        };
        lines.push(kv("definition", definition));
    }
    lines.push(Line::from(vec![
        Span::styled(format!("{:<13}", "reason"), theme::dim()),
        Span::styled(
            format!("local policy: {}", view.effect),
            theme::effect(view.effect),
        ),
    ]));
    if !words.is_empty() {
        let who = match &view.requested_by {
            Requester::Lead => "the Lead".to_string(),
            other => other.to_string(),
        };
        lines.push(Line::styled(
            format!("{who} said (the model's words, not a fact):"),
            theme::dim(),
        ));
        let shown = words.len().min(WORDS);
        for (i, l) in words.iter().take(shown).enumerate() {
            let more = i + 1 == shown && words.len() > shown;
            lines.push(Line::styled(
                format!("  {l}{}", if more { " …" } else { "" }),
                theme::untrusted(),
            ));
        }
    }
    lines.push(Line::styled(
        format!("arguments (sha256:{}):", short(&view.arguments_sha256)),
        theme::dim(),
    ));
    let args: Vec<String> = wrapped(&pretty, width.saturating_sub(2));
    let room = (inner.height as usize).saturating_sub(lines.len() + footer.len());
    let start = (prompt.scroll as usize).min(args.len().saturating_sub(room));
    lines.extend(
        args.iter()
            .skip(start)
            .take(room)
            .map(|l| Line::raw(format!("  {l}"))),
    );
    if args.len() > room
        && let Some(last) = lines.last_mut()
    {
        *last = Line::styled(
            format!("  … {} of {} lines (↑/↓ scroll)", start + room, args.len()),
            theme::dim(),
        );
    }
    lines.extend(footer);
    frame.render_widget(Paragraph::new(fit_lines(lines, width)), inner);
}

/// The first 16 hex digits of a SHA-256: enough to tell two apart by eye.
fn short(hex: &str) -> &str {
    hex.get(..16).unwrap_or(hex)
}

/// Key hints joined with ` · `, a new line only between two of them (a key
/// is never parted from what it does).
pub(super) fn packed(items: &[String], width: usize) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    for item in items {
        match lines.last_mut() {
            Some(line) if line.chars().count() + 3 + item.chars().count() <= width => {
                line.push_str(" · ");
                line.push_str(item);
            }
            _ => lines.push(item.clone()),
        }
    }
    lines
}

/// Lines of the model's words shown at most.
const WORDS: usize = 6;

/// The text the asking agent wrote in the reply that made this call: the
/// nearest assistant entry of the same agent before the call's own entry.
fn model_words<'a>(state: &'a AppState, prompt: &Prompt) -> Option<&'a str> {
    if prompt.view.requested_by == Requester::Operator {
        return None;
    }
    let call_id = &prompt.view.call_id;
    let at = state
        .cells
        .iter()
        .rposition(|c| matches!(c, Cell::ToolCall(call) if call.id == *call_id))?;
    state.cells[..at]
        .iter()
        .rev()
        .find_map(|c| match c {
            Cell::ToolCall(_) => None,
            Cell::Assistant { agent, text, .. } if *agent == prompt.view.requested_by => {
                Some(text.as_str())
            }
            // Anything else (a notice, the operator's message) ends the reply.
            _ => Some(""),
        })
        .filter(|t| !t.trim().is_empty())
}

/// Where a key goes while a prompt or form is arming: typing in the input box
/// goes on; anything else waits for the pause.
pub(super) fn where_keys_go(state: &AppState) -> &'static str {
    if state.overlay.is_none() && state.focus == Focus::Input {
        "keys go to the input box until you pause for a second"
    } else {
        "its keys work after a second with no keys (the panes get none)"
    }
}
