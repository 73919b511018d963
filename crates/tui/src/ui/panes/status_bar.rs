//! The bottom rows: who we talk to (and "replay" when scripted), the snapshot
//! version, the servers, whether something runs; then either the message of an
//! operator command (on rows of its own, so it is readable at 80 columns) or
//! the key hints of the focused pane, drawn from the keymap table and fitted to
//! the width in the table's order.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};

use crate::protocol::{AliasStatus, ServingView};
use crate::ui::keymap::{Action, hints};
use crate::ui::layout::MESSAGE_ROWS;
use crate::ui::sanitize::{line, wrapped};
use crate::ui::state::{AppState, Focus};
use crate::ui::theme;

/// Below this width the info line uses its short form.
const NARROW: u16 = 100;

pub fn draw(frame: &mut Frame, area: Rect, state: &AppState) {
    let info = Rect { height: 1, ..area };
    let rest = Rect {
        y: area.y + 1,
        height: area.height.saturating_sub(1),
        ..area
    };
    frame.render_widget(
        crate::ui::text::fit_line(info_line(state, area.width), area.width as usize),
        info,
    );
    let lines: Vec<Line<'static>> = match &state.status {
        Some((text, _)) => wrapped(text, area.width as usize)
            .into_iter()
            .take(MESSAGE_ROWS)
            .map(|l| Line::styled(l, theme::strong()))
            .collect(),
        None => vec![Line::styled(
            fit(&hint_items(state), area.width as usize),
            theme::dim(),
        )],
    };
    frame.render_widget(ratatui::widgets::Paragraph::new(lines), rest);
}

fn info_line(state: &AppState, width: u16) -> Line<'static> {
    let s = &state.session;
    let narrow = width < NARROW;
    let model = match (s.replay, narrow) {
        _ if s.no_model.is_some() => Span::styled(
            if narrow {
                "no model"
            } else {
                "no model configured"
            },
            theme::warn(),
        ),
        (true, true) => Span::styled(format!("{} (replay)", s.provider), theme::warn()),
        (true, false) => Span::styled(
            format!("{} · {} (replay)", s.provider, s.model),
            theme::warn(),
        ),
        (false, true) => Span::styled(line(&s.model, 24), theme::accent()),
        (false, false) => Span::styled(
            format!("{} · {}", s.provider, line(&s.model, 40)),
            theme::accent(),
        ),
    };
    let ready = state
        .servers
        .iter()
        .filter(|v| v.state == AliasStatus::Ready)
        .count();
    let activity = if state.paused.is_some() && !state.input_text().trim().is_empty() {
        // Enter with text in the box does not go on: say what does.
        Span::styled(
            "⏸ replay paused: clear the box, then Enter",
            theme::accent(),
        )
    } else if state.paused.is_some() {
        Span::styled("⏸ replay paused: Enter goes on", theme::accent())
    } else if state.busy {
        Span::styled("● working", theme::warn())
    } else if !state.hand_calls.is_empty() {
        Span::styled("● hand call running", theme::warn())
    } else if state.can_retry {
        Span::styled("✗ failed (r retries)", theme::error())
    } else {
        Span::styled("idle", theme::dim())
    };
    let middle = if narrow {
        format!(
            " │ v{} │ {ready}/{} ready │ ",
            state.snapshot_version,
            state.servers.len()
        )
    } else {
        format!(
            " │ registry v{} │ servers {ready}/{} ready │ ",
            state.snapshot_version,
            state.servers.len()
        )
    };
    let mut spans = vec![model, Span::styled(middle, theme::dim())];
    if let Some(serving) = &state.serving {
        spans.push(Span::styled(serving_text(serving, narrow), theme::accent()));
        // Outside clients' sessions that hold flow taint (F2 clears them).
        if let Some(taints) = client_taints(state, narrow) {
            spans.push(Span::styled(taints, theme::warn()));
        }
        spans.push(Span::styled(" │ ", theme::dim()));
    }
    spans.push(activity);
    if let Some(taint) = state.taint.label() {
        // Flow control: what the session has read (sinks may ask because of it).
        spans.push(Span::styled(format!(" │ flow: {taint}"), theme::warn()));
    }
    if let Some(badge) = waiting_badge(state) {
        spans.push(Span::styled(format!(" │ {badge}"), theme::warn()));
    } else if state.prompt_shown() {
        spans.push(Span::styled(" │ approval waiting", theme::warn()));
    }
    Line::from(spans)
}

/// The control room's gateway: that it serves, where (the port, on the
/// loopback address it must have) and how many client sessions are live:
/// `serving :8765 · 2 clients`, narrow `serving :8765 (2)`.
fn serving_text(serving: &ServingView, narrow: bool) -> String {
    let at = match serving.addr {
        std::net::SocketAddr::V4(a) if *a.ip() == std::net::Ipv4Addr::LOCALHOST => {
            format!(":{}", a.port())
        }
        other => other.to_string(),
    };
    match (narrow, serving.sessions) {
        (true, n) => format!("serving {at} ({n})"),
        (false, 1) => format!("serving {at} · 1 client"),
        (false, n) => format!("serving {at} · {n} clients"),
    }
}

/// ` · flow ide: untrusted+private, ci: private`; narrow ` · 2 tainted`.
fn client_taints(state: &AppState, narrow: bool) -> Option<String> {
    if state.client_taints.is_empty() {
        return None;
    }
    if narrow {
        return Some(format!(" · {} tainted", state.client_taints.len()));
    }
    let each: Vec<String> = state
        .client_taints
        .iter()
        .map(|(client, taint)| {
            format!(
                "{}: {}",
                crate::ui::sanitize::line(client, 24),
                taint.label().unwrap_or_default()
            )
        })
        .collect();
    Some(format!(" · flow {}", each.join(", ")))
}

/// What waits put aside (behind a window, or by F3), and the key that brings
/// it back: "1 approval waiting: F3".
fn waiting_badge(state: &AppState) -> Option<String> {
    if !state.aside || !state.waiting() {
        return None;
    }
    let count = |n: usize, what: &str| match n {
        0 => None,
        1 => Some(format!("1 {what}")),
        n => Some(format!("{n} {what}s")),
    };
    let parts: Vec<String> = [
        count(state.approvals.len(), "approval"),
        count(state.elicitations.len(), "form"),
    ]
    .into_iter()
    .flatten()
    .collect();
    Some(format!("{} waiting: F3", parts.join(", ")))
}

/// The hints of what has the keys now — only keys that apply to the
/// selection — and how to get help from there.
fn hint_items(state: &AppState) -> Vec<String> {
    let scope = state.scope();
    let mut items: Vec<String> = hints(scope)
        .into_iter()
        .filter(|b| !(b.action == Action::InterruptOrQuit && state.interruptible()))
        // The prompt and the form say F3 in their own key lines; here the
        // badge's item says it, once something is put aside.
        .filter(|b| b.action != Action::Waiting)
        .filter(|b| scope.is_modal() || state.offers(b.action))
        .map(|b| format!("{} {}", b.keys, b.hint))
        .collect();
    if let Some(badge) = waiting_badge(state) {
        // First, in a window's footer too: the window keeps its keys, and
        // this is how what waits behind it comes back.
        let what = badge.trim_end_matches(": F3");
        items.insert(0, format!("F3 {what}"));
    }
    if !scope.is_modal() {
        if state.interruptible() {
            // Ctrl-C quits only when nothing runs; while something does, that it
            // interrupts is the first thing to know.
            items.insert(0, "Ctrl-C interrupt".into());
        }
        if !state.resumed.is_empty() {
            items.insert(0, "Ctrl-R reconnect the resumed servers".into());
        }
        if state.paused.is_some() && state.focus == Focus::Input && state.input.is_empty() {
            // Enter on an empty box goes on; it sends nothing.
            items.retain(|i| !i.starts_with("Enter "));
            items.insert(0, "Enter go on with the replay".into());
        }
        // In the input box `?` is text unless the box is empty; F1 always works.
        let typing_text = state.focus == Focus::Input && !state.input.is_empty();
        items.push(if typing_text { "F1 help" } else { "? help" }.into());
    }
    items
}

/// As many items as fit in `width`, in order; the last item (how to get help)
/// always stays.
pub fn fit(items: &[String], width: usize) -> String {
    const SEP: &str = " · ";
    let Some((last, first)) = items.split_last() else {
        return String::new();
    };
    let room = width.saturating_sub(last.chars().count() + SEP.chars().count());
    let mut out = String::new();
    for item in first {
        let extra = item.chars().count() + if out.is_empty() { 0 } else { 3 };
        if out.chars().count() + extra <= room {
            if !out.is_empty() {
                out.push_str(SEP);
            }
            out.push_str(item);
        }
    }
    if !out.is_empty() {
        out.push_str(SEP);
    }
    out.push_str(last);
    out
}
