//! The conversation as typed cells, each rendering its own lines for a width.
//! Heights are cached per cell and width (a cell's height never depends on the
//! clock), so scrolling a long session measures each cell once; any mutable
//! access to a cell forgets its height.

use std::cell::Cell as Memo;
use std::ops::Deref;
use std::time::Instant;

use ratatui::style::Style;
use ratatui::text::{Line, Span};
use serde_json::Value;

use super::sanitize::{line, wrapped};
use super::theme;
use crate::protocol::{Decided, Origin, PolicyEffect, Target, TaskStatus};

/// Result lines shown for a collapsed call.
const COLLAPSED_RESULT_LINES: usize = 2;
/// Result lines shown for an expanded call (the model got all of it).
const EXPANDED_RESULT_LINES: usize = 200;

/// How a tool call is doing.
#[derive(Debug, Clone, PartialEq)]
pub enum CallStatus {
    AwaitingApproval,
    Running { since: Instant },
    Ok { elapsed_ms: u64 },
    Failed { code: String, elapsed_ms: u64 },
}

/// One entry of the conversation.
#[derive(Debug, Clone, PartialEq)]
pub enum Cell {
    User(String),
    Assistant {
        agent: Origin,
        text: String,
        streaming: bool,
    },
    ToolCall(Box<ToolCallCell>),
    Notice(String),
    Error(String),
}

/// A tool call with its result, collapsed or expanded.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolCallCell {
    pub id: String,
    pub by: Origin,
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
}

impl Cell {
    /// The lines of this cell at this width (`now` moves a running call's clock).
    pub fn lines(&self, width: usize, now: Instant) -> Vec<Line<'static>> {
        match self {
            Cell::User(text) => block_of("you", theme::accent(), text, width),
            Cell::Assistant {
                agent,
                text,
                streaming,
            } => {
                let label = if *streaming {
                    format!("{agent} …")
                } else {
                    agent.to_string()
                };
                block_of(&label, theme::strong(), text, width)
            }
            Cell::ToolCall(call) => tool_call(call, width, now),
            Cell::Notice(text) => marked("· ", text, width, theme::dim()),
            Cell::Error(text) => marked("✗ ", text, width, theme::error()),
        }
    }
}

/// The conversation's cells with their measured heights.
#[derive(Debug, Default)]
pub struct Transcript {
    cells: Vec<Cell>,
    /// Per cell: the width it was last measured at and its height there.
    heights: Vec<Memo<Option<(usize, usize)>>>,
}

impl Transcript {
    pub fn push(&mut self, cell: Cell) {
        self.cells.push(cell);
        self.heights.push(Memo::new(None));
    }

    /// A cell to change (its height is measured again).
    pub fn get_mut(&mut self, i: usize) -> Option<&mut Cell> {
        self.heights.get(i)?.set(None);
        self.cells.get_mut(i)
    }

    pub fn last_mut(&mut self) -> Option<&mut Cell> {
        let last = self.cells.len().checked_sub(1)?;
        self.get_mut(last)
    }

    /// The tool call cell with this id (the newest, if ids repeat).
    pub fn call_mut(&mut self, id: &str) -> Option<&mut ToolCallCell> {
        let i = self
            .cells
            .iter()
            .rposition(|c| matches!(c, Cell::ToolCall(call) if call.id == id))?;
        match self.get_mut(i)? {
            Cell::ToolCall(call) => Some(call.as_mut()),
            _ => None,
        }
    }

    /// The lines cell `i` takes at this width, with the blank line after it.
    pub fn height(&self, i: usize, width: usize) -> usize {
        let (Some(cell), Some(memo)) = (self.cells.get(i), self.heights.get(i)) else {
            return 0;
        };
        if let Some((w, h)) = memo.get()
            && w == width
        {
            return h;
        }
        // The clock only changes text on one line; any instant measures alike.
        let h = cell.lines(width, Instant::now()).len() + 1;
        memo.set(Some((width, h)));
        h
    }
}

impl Deref for Transcript {
    type Target = [Cell];

    fn deref(&self) -> &[Cell] {
        &self.cells
    }
}

impl PartialEq<Vec<Cell>> for Transcript {
    fn eq(&self, other: &Vec<Cell>) -> bool {
        self.cells == *other
    }
}

/// The lines of the first-run banner.
pub fn banner(width: usize) -> Vec<Line<'static>> {
    let text = "Welcome to mcp-harness. No config file and no model API key were found, so this runs the embedded demo: \
        two demo MCP servers (demo_alpha, demo_beta) and a scripted model that replays a script. Type anything and \
        press Enter to watch connect, approval, denial, an \"always\" grant and revocation; the story pauses between \
        its parts (Enter goes on). To watch the watchdog, kill a server: Tab to Servers (or Alt-2), select it, K, \
        then y; its tools are struck out in the registry (Alt-3). Tab moves between panes, ? shows every key. \
        For real servers, write ~/.config/mcp-harness/config.toml (start from config.example.toml); for a real \
        model, set ANTHROPIC_API_KEY or OPENAI_API_KEY.";
    let mut lines: Vec<Line<'static>> = wrapped(text, width)
        .into_iter()
        .map(|l| Line::styled(l, theme::accent()))
        .collect();
    lines.push(Line::raw(""));
    lines
}

/// Text with a mark on its first line and continuation lines indented under it.
fn marked(mark: &str, text: &str, width: usize, style: Style) -> Vec<Line<'static>> {
    wrapped(text, width.saturating_sub(2))
        .into_iter()
        .enumerate()
        .map(|(i, l)| Line::styled(format!("{}{l}", if i == 0 { mark } else { "  " }), style))
        .collect()
}

fn block_of(label: &str, style: Style, text: &str, width: usize) -> Vec<Line<'static>> {
    let mut lines = vec![Line::styled(label.to_string(), style)];
    lines.extend(wrapped(text, width).into_iter().map(Line::raw));
    lines
}

fn tool_call(call: &ToolCallCell, width: usize, now: Instant) -> Vec<Line<'static>> {
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
        Origin::Lead => String::new(),
        other => format!("{other} → "),
    };
    // The status never gets cut: the name gives way first.
    let name_room = width
        .saturating_sub(status.chars().count() + agent.chars().count() + 4)
        .max(8);
    let header = Line::from(vec![
        Span::styled(format!("{icon} "), style),
        Span::raw(agent),
        Span::styled(line(&call.name, name_room), theme::strong()),
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
        lines.push(Line::styled(
            "  server output (untrusted, not shown to the model):",
            theme::untrusted(),
        ));
        let all = wrapped(server, width.saturating_sub(4));
        let max = if call.expanded {
            EXPANDED_RESULT_LINES
        } else {
            3
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
    }
    lines
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

fn more_lines(n: usize) -> String {
    if n == 1 {
        "1 more line".into()
    } else {
        format!("{n} more lines")
    }
}
