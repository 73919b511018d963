//! Two lines at the bottom: who we talk to (and "replay" when scripted), the
//! snapshot version, the servers, whether a turn runs; then the key hints of the
//! focused pane, drawn from the keymap table.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};

use crate::ui::keymap::{Scope, hints};
use crate::ui::sanitize::line;
use crate::ui::state::{AppState, Focus, Overlay};
use crate::ui::theme;

pub fn draw(frame: &mut Frame, area: Rect, state: &AppState) {
    let [info, keys] = Layout::vertical([Constraint::Length(1), Constraint::Length(1)]).areas(area);
    let s = &state.session;
    let model = if s.replay {
        Span::styled(
            format!("{} · {} (replay)", s.provider, s.model),
            theme::warn(),
        )
    } else {
        Span::styled(
            format!("{} · {}", s.provider, line(&s.model, 40)),
            theme::accent(),
        )
    };
    let ready = state.servers.iter().filter(|v| v.state == "ready").count();
    let activity = if state.busy {
        Span::styled("● working", theme::warn())
    } else if state.can_retry {
        Span::styled("✗ failed (r retries)", theme::error())
    } else {
        Span::styled("idle", theme::dim())
    };
    let mut spans = vec![
        model,
        Span::styled(
            format!(
                " │ registry v{} │ servers {ready}/{} ready │ ",
                state.snapshot_version,
                state.servers.len()
            ),
            theme::dim(),
        ),
        activity,
    ];
    if let Some((text, _)) = &state.status {
        spans.push(Span::styled(format!(" │ {text}"), theme::strong()));
    }
    frame.render_widget(Line::from(spans), info);
    let scope = if !state.approvals.is_empty() {
        Scope::Approval
    } else if !state.elicitations.is_empty() {
        Scope::Elicitation
    } else {
        match (&state.overlay, state.focus) {
            (Some(Overlay::Help { .. }), _) => Scope::Help,
            (Some(Overlay::ToolDetail { .. }), _) => Scope::Detail,
            (Some(Overlay::WritePolicy { .. }), _) => Scope::WritePolicy,
            (Some(Overlay::CallTool(_)), _) => Scope::CallTool,
            (None, Focus::Input) => Scope::Input,
            (None, Focus::Conversation) => Scope::Conversation,
            (None, Focus::Servers) => Scope::Servers,
            (None, Focus::Registry) => Scope::Registry,
            (None, Focus::Health) => Scope::Health,
        }
    };
    let mut text = hints(scope)
        .iter()
        .map(|(k, d)| format!("{k} {d}"))
        .collect::<Vec<_>>()
        .join(" · ");
    text.push_str(" · ? help");
    frame.render_widget(Line::styled(text, theme::dim()), keys);
}
