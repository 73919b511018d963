//! The conversation as typed cells, each rendering its own lines for a width.
//! Heights are cached per cell and width (a cell's height never depends on the
//! clock), so scrolling a long session measures each cell once; any mutable
//! access to a cell forgets its height.

use std::cell::Cell as Memo;
use std::ops::Deref;
use std::time::Instant;

use ratatui::style::Style;
use ratatui::text::Line;

use super::sanitize::wrapped;
use super::theme;
use crate::protocol::{CallId, Requester};

mod fold;
mod server_content;
mod tool_call;

pub use server_content::ServerContentCell;
use tool_call::tool_call;
pub use tool_call::{CallStatus, ToolCallCell};

/// One entry of the conversation.
#[derive(Debug, Clone, PartialEq)]
pub enum Cell {
    User(String),
    Assistant {
        agent: Requester,
        text: String,
        streaming: bool,
    },
    ToolCall(Box<ToolCallCell>),
    /// Server content the operator brought in (`@alias:uri`, `/alias:prompt`).
    ServerContent(Box<ServerContentCell>),
    Notice(String),
    Error(String),
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
            Cell::ServerContent(content) => content.lines(width),
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
    pub fn call_mut(&mut self, id: &CallId) -> Option<&mut ToolCallCell> {
        let i = self
            .cells
            .iter()
            .rposition(|c| matches!(c, Cell::ToolCall(call) if call.id == *id))?;
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
