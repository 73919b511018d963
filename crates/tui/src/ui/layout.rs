//! Geometry, shared by the renderer (where to draw) and the reducer (what a
//! click hits, how far a view may scroll): which pane goes where at which
//! size, and which row sits on which screen line. Wide terminals show
//! everything side by side; below [`WIDE`] columns the side panes become tabs.

use ratatui::layout::{Constraint, Layout, Margin, Position, Rect};

use super::content;
use super::rows::EFFECT_WIDTH;
use super::sanitize::wrapped;
use super::state::{AppState, Focus};

/// Columns from which the side panes sit beside the conversation.
pub const WIDE: u16 = 110;
/// The width of the servers and health column in the wide layout, at least.
const SIDE: u16 = 30;
/// …and at most (it grows with the width).
const SIDE_MAX: u16 = 48;
/// The registry column's width, at most.
const REGISTRY_MAX: u16 = 84;
/// Rows a status message may take (more is cut; the conversation keeps the
/// whole text for the commands that matter).
pub const MESSAGE_ROWS: usize = 2;

/// Where each pane is drawn this frame (`None`: not visible).
#[derive(Debug, Clone, Default)]
pub struct Areas {
    pub tabs: Option<Rect>,
    pub conversation: Option<Rect>,
    pub input: Option<Rect>,
    pub servers: Option<Rect>,
    pub registry: Option<Rect>,
    pub health: Option<Rect>,
    pub status: Rect,
    tab_hits: Vec<(Rect, Focus)>,
}

impl Areas {
    /// The tab under a click (narrow layout).
    pub fn tab_at(&self, at: Position) -> Option<Focus> {
        self.tab_hits
            .iter()
            .find(|(r, _)| r.contains(at))
            .map(|(_, f)| *f)
    }
}

/// The tabs of the narrow layout, in order.
pub const TABS: [(&str, Focus); 4] = [
    ("Chat", Focus::Input),
    ("Servers", Focus::Servers),
    ("Registry", Focus::Registry),
    ("Health", Focus::Health),
];

/// The tab a focus belongs to (the conversation and the input share one).
pub fn tab(focus: Focus) -> Focus {
    if focus == Focus::Conversation {
        Focus::Input
    } else {
        focus
    }
}

/// How many rows the status bar takes at this width.
pub fn status_height(state: &AppState, width: u16) -> u16 {
    let message = state
        .status
        .as_ref()
        .map_or(1, |(text, _)| wrapped(text, width as usize).len());
    1 + message.clamp(1, MESSAGE_ROWS) as u16
}

pub fn layout(area: Rect, state: &AppState) -> Areas {
    let status_rows = status_height(state, area.width);
    let [body, status] =
        Layout::vertical([Constraint::Min(3), Constraint::Length(status_rows)]).areas(area);
    let input_rows = (state.input.lines().len().clamp(1, 6) + 2) as u16;
    let mut areas = Areas {
        status,
        ..Areas::default()
    };
    if area.width >= WIDE {
        // The side columns grow with the width; the conversation keeps the
        // most room; the registry has enough for the demo's full exposed names
        // at 120 columns (longer ones go compact).
        let left_width = (area.width / 5).clamp(SIDE, SIDE_MAX);
        let side = ((area.width - left_width) * 7 / 15).clamp(36, REGISTRY_MAX);
        let [left, center, right] = Layout::horizontal([
            Constraint::Length(left_width),
            Constraint::Min(40),
            Constraint::Length(side),
        ])
        .areas(body);
        // The servers pane grows to show a rejected alias's whole reason.
        let wanted = servers_height(state, left_width.saturating_sub(2)) + 2;
        let servers_rows = wanted.clamp(6, (left.height * 2 / 3).max(6));
        let [servers, health] =
            Layout::vertical([Constraint::Length(servers_rows), Constraint::Min(3)]).areas(left);
        let [conversation, input] =
            Layout::vertical([Constraint::Min(3), Constraint::Length(input_rows)]).areas(center);
        areas.servers = Some(servers);
        areas.health = Some(health);
        areas.conversation = Some(conversation);
        areas.input = Some(input);
        areas.registry = Some(right);
        return areas;
    }
    let [tabs, main] = Layout::vertical([Constraint::Length(1), Constraint::Min(3)]).areas(body);
    areas.tabs = Some(tabs);
    let mut x = tabs.x;
    for (label, focus) in TABS {
        let width = label.len() as u16 + 4;
        areas.tab_hits.push((
            Rect::new(x, tabs.y, width.min(tabs.right().saturating_sub(x)), 1),
            focus,
        ));
        x += width;
    }
    match tab(state.focus) {
        Focus::Servers => areas.servers = Some(main),
        Focus::Registry => areas.registry = Some(main),
        Focus::Health => areas.health = Some(main),
        _ => {
            let [conversation, input] =
                Layout::vertical([Constraint::Min(3), Constraint::Length(input_rows)]).areas(main);
            areas.conversation = Some(conversation);
            areas.input = Some(input);
        }
    }
    areas
}

/// The rows the servers pane's content takes at this inner width.
fn servers_height(state: &AppState, width: u16) -> u16 {
    u16::try_from(content::servers_lines(state, width as usize).len()).unwrap_or(u16::MAX)
}

/// The text width inside a conversation pane this wide inside its border (one
/// column stays for the selection mark).
pub fn conversation_text_width(inner_width: u16) -> usize {
    inner_width.saturating_sub(1) as usize
}

/// The conversation's text width and height as laid out now (`None`: hidden).
pub fn conversation_viewport(state: &AppState) -> Option<(usize, usize)> {
    let area = layout(state.area, state).conversation?;
    let inner = area.inner(Margin::new(1, 1));
    Some((conversation_text_width(inner.width), inner.height as usize))
}

/// The registry pane's geometry inside `inner` (its area within the border).
pub struct RegistryGeometry {
    /// Lines above the rows (the reason of a rejection, the column header).
    pub header_rows: usize,
    /// Rows that fit.
    pub height: usize,
    /// The first row shown (the selection is always in view).
    pub first: usize,
    /// Full exposed names do not fit: the exposed column shows what differs.
    pub compact: bool,
}

pub fn registry_geometry(inner: Rect, state: &AppState) -> RegistryGeometry {
    let width = inner.width as usize;
    let rows = state.rows();
    let compact = rows.name_width + 3 + rows.exposed_width + 1 + EFFECT_WIDTH > width;
    let header_rows = content::registry_header(state, width, compact).len();
    let height = (inner.height as usize).saturating_sub(header_rows).max(1);
    RegistryGeometry {
        header_rows,
        height,
        first: first_row(
            state.registry_offset,
            state.selected_tool,
            height,
            rows.refs.len(),
        ),
        compact,
    }
}

/// The first row of a window of `height` rows over `len` that starts near
/// `offset` and shows `selected`.
pub fn first_row(offset: usize, selected: usize, height: usize, len: usize) -> usize {
    let height = height.max(1);
    let mut first = offset.min(len.saturating_sub(height));
    if selected < first {
        first = selected;
    } else if selected >= first + height {
        first = selected + 1 - height;
    }
    first
}

/// The registry's rows per page as laid out now (`None`: not on screen).
pub fn registry_page(state: &AppState) -> Option<usize> {
    let area = layout(state.area, state).registry?;
    Some(registry_geometry(area.inner(Margin::new(1, 1)), state).height)
}

/// The registry row under screen line `y` of the pane drawn in `area` (for clicks).
pub fn registry_row_at(area: Rect, state: &AppState, y: u16) -> Option<usize> {
    let inner = area.inner(Margin::new(1, 1));
    let geometry = registry_geometry(inner, state);
    let offset = (y.checked_sub(inner.y)? as usize).checked_sub(geometry.header_rows)?;
    let row = geometry.first + offset;
    (offset < geometry.height && row < state.rows().refs.len()).then_some(row)
}

/// A centered rectangle for modals.
pub fn centered(area: Rect, width: u16, height: u16) -> Rect {
    let width = width.min(area.width);
    let height = height.min(area.height);
    Rect::new(
        area.x + (area.width - width) / 2,
        area.y + (area.height - height) / 2,
        width,
        height,
    )
}

/// Where help is drawn on a screen this big.
pub fn help_area(screen: Rect) -> Rect {
    centered(screen, 90, screen.height.saturating_sub(2))
}

/// Where the other overlays (detail, editor, write policy) are drawn.
pub fn overlay_area(screen: Rect) -> Rect {
    centered(screen, 100, screen.height.saturating_sub(4))
}

/// How far a window of `total` lines can scroll inside `area` (with border).
pub fn max_scroll(area: Rect, total: usize) -> u16 {
    let inner = area.inner(Margin::new(1, 1));
    u16::try_from(total.saturating_sub(inner.height as usize)).unwrap_or(u16::MAX)
}
