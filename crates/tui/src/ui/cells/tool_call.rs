//! A tool call's lines: its status, origin, decision, arguments, result and
//! what its server said that the model did not see.

use std::time::Instant;

use ratatui::style::Style;
use ratatui::text::{Line, Span};

use super::fold::{EXPANDED_LINES as EXPANDED_RESULT_LINES, more_lines, server_output};
use serde_json::Value;

use crate::protocol::{CallId, Decided, PolicyEffect, Requester, Target, TaskStatus};
use crate::ui::sanitize::{line, name, wrapped};
use crate::ui::theme;

/// How a tool call is doing.
#[derive(Debug, Clone, PartialEq)]
pub enum CallStatus {
    AwaitingApproval,
    Running { since: Instant },
    Ok { elapsed_ms: u64 },
    Failed { code: String, elapsed_ms: u64 },
}

/// A tool call with its result, collapsed or expanded.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolCallCell {
    pub id: CallId,
    pub by: Requester,
    pub name: String,
    pub target: Target,
    pub effect: Option<PolicyEffect>,
    pub arguments: Value,
    pub status: CallStatus,
    /// The text the model got, or the envelope's message.
    pub result: Option<String>,
    /// What the server said that the model did not see.
    pub server_output: Option<String>,
    /// The server's last progress report while it runs (`3/5 · its message`).
    pub progress: Option<String>,
    /// When the call runs as a task: its status and the server's message.
    pub task: Option<(TaskStatus, Option<String>)>,
    /// Arguments the harness left out (`null`s the schema refuses at optional
    /// properties), as JSON pointers.
    pub dropped_nulls: Vec<String>,
    pub expanded: bool,
    /// Which local rule decided it (once it ended).
    pub decided: Option<Decided>,
    /// Flow control's part in it (escalated or refused), naming the calls
    /// that tainted the session: the harness's words.
    pub flow: Option<String>,
}

/// Result lines shown for a collapsed call.
const COLLAPSED_RESULT_LINES: usize = 2;

pub(super) fn tool_call(call: &ToolCallCell, width: usize, now: Instant) -> Vec<Line<'static>> {
    let (icon, status, style) = match &call.status {
        CallStatus::AwaitingApproval => ("?", "awaiting approval".to_string(), theme::warn()),
        CallStatus::Running { since } => (
            "◌",
            format!(
                "running {:.1}s",
                now.saturating_duration_since(*since).as_secs_f32()
            ),
            theme::warn(),
        ),
        CallStatus::Ok { elapsed_ms } => ("✓", format!("ok {elapsed_ms} ms"), theme::ok()),
        CallStatus::Failed { code, .. } => ("✗", code.clone(), theme::error()),
    };

    let agent = match &call.by {
        Requester::Lead => String::new(),
        other => format!("{other} → "),
    };
    // The status never gets cut: the name gives way first.
    let name_room = width
        .saturating_sub(status.chars().count() + agent.chars().count() + 4)
        .max(8);
    let header = Line::from(vec![
        Span::styled(format!("{icon} "), style),
        Span::raw(agent),
        // Cut in the middle: two tools of one server share their start.
        Span::styled(name(&call.name, name_room), theme::strong()),
        Span::styled(format!("  {status}"), style),
    ]);
    let origin = match &call.target {
        Target::Mcp { alias, .. } => alias.clone(),
        Target::Builtin => "built-in".into(),
        Target::Unknown => "not in this request's tools".into(),
    };
    let mut about = vec![Span::styled(format!("  {origin}"), theme::dim())];
    if let Some(effect) = call.effect {
        about.push(Span::styled(" · ", theme::dim()));
        about.push(Span::styled(effect.label(), theme::effect(effect)));
    }
    // How it was decided, on every finished call's row.
    if let Some(decided) = call.decided {
        about.push(Span::styled(" · ", theme::dim()));
        about.push(Span::styled(decided.phrase(), decision_style(decided)));
    }
    let mut lines = vec![header];
    // Why flow control stepped in, on every row it did, collapsed or not:
    // "denied by policy" would hide that the policy allowed it.
    if let Some(flow) = &call.flow {
        lines.extend(
            wrapped(flow, width.saturating_sub(4))
                .into_iter()
                .map(|l| Line::styled(format!("  {l}"), theme::warn())),
        );
    }
    if let Some((status, message)) = call
        .task
        .as_ref()
        .filter(|_| matches!(call.status, CallStatus::Running { .. }))
    {
        let text = match message {
            Some(message) => format!("{} · {}", status.label(), message),
            None => status.label().to_string(),
        };
        lines.push(Line::styled(
            format!("  task {}", line(&text, width.saturating_sub(7))),
            theme::untrusted(),
        ));
    }
    if let Some(progress) = call
        .progress
        .as_ref()
        .filter(|_| matches!(call.status, CallStatus::Running { .. }))
    {
        lines.push(Line::styled(
            format!("  progress {}", line(progress, width.saturating_sub(11))),
            theme::untrusted(),
        ));
    }
    let args = if call.expanded {
        serde_json::to_string_pretty(&call.arguments).unwrap_or_default()
    } else {
        call.arguments.to_string()
    };
    if call.expanded {
        lines.push(Line::from(about));
        lines.push(Line::styled("  arguments:", theme::dim()));
        lines.extend(
            wrapped(&args, width.saturating_sub(4))
                .into_iter()
                .map(|l| Line::raw(format!("    {l}"))),
        );
        if !call.dropped_nulls.is_empty() {
            let dropped = format!(
                "  left out before validation (null where the schema admits none, optional): {}",
                call.dropped_nulls.join(", ")
            );
            lines.extend(
                wrapped(&dropped, width.saturating_sub(2))
                    .into_iter()
                    .map(|l| Line::styled(l, theme::warn())),
            );
        }
    } else {
        let used: usize = about.iter().map(|s| s.content.chars().count()).sum();
        about.push(Span::styled(
            format!(" · {}", line(&args, width.saturating_sub(used + 3).max(8))),
            theme::dim(),
        ));
        lines.push(Line::from(about));
    }
    if let Some(result) = &call.result {
        let max = if call.expanded {
            EXPANDED_RESULT_LINES
        } else {
            COLLAPSED_RESULT_LINES
        };
        let (note, result) = harness_note(result);
        // The harness's note on a cut result (where the whole of it is saved)
        // comes first: a collapsed row shows only a result's first lines.
        if let Some(note) = note {
            lines.extend(
                wrapped(note, width.saturating_sub(4))
                    .into_iter()
                    .map(|l| Line::styled(format!("  │ {l}"), theme::warn())),
            );
        }
        let all = wrapped(result, width.saturating_sub(4));
        let result_style = if matches!(call.status, CallStatus::Failed { .. }) {
            theme::error()
        } else {
            Style::new()
        };
        lines.extend(
            all.iter()
                .take(max)
                .map(|l| Line::styled(format!("  │ {l}"), result_style)),
        );
        if all.len() > max {
            lines.push(Line::styled(
                format!("  │ … {} (Enter expands)", more_lines(all.len() - max)),
                theme::dim(),
            ));
        }
    }
    if let Some(server) = &call.server_output {
        lines.extend(server_output(server, width, call.expanded));
    }
    lines
}

/// A result's last line when the harness wrote it (`[mcp-harness: …]`: the
/// result was cut, and where all of it is), apart from the server's text.
fn harness_note(result: &str) -> (Option<&str>, &str) {
    match result.rsplit_once('\n') {
        Some((body, last)) if last.starts_with("[mcp-harness: ") => (Some(last), body),
        _ => (None, result),
    }
}

fn decision_style(decided: Decided) -> Style {
    match decided {
        Decided::AllowedByPolicy
        | Decided::ApprovedOnce
        | Decided::ApprovedAlways(_)
        | Decided::SessionGrant(_) => theme::ok(),
        Decided::NotRun => theme::dim(),
        _ => theme::error(),
    }
}
