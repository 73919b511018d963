//! Layout only: which pane goes where, at which size. Each pane renders itself
//! from the state (read-only). Wide terminals show everything side by side; at
//! 80 columns the side panes become tabs.

mod approval;
pub mod conversation;
mod elicitation;
mod health;
pub mod help;
pub mod overlays;
pub mod registry;
mod servers;
pub mod status_bar;

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Position, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders};

use super::state::{AppState, Focus, Overlay};
use super::theme;

/// Columns from which the side panes sit beside the conversation.
const WIDE: u16 = 110;
/// The width of the servers and health column in the wide layout.
const SIDE: u16 = 30;

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

const TABS: [(&str, Focus); 4] = [
    ("Chat", Focus::Input),
    ("Servers", Focus::Servers),
    ("Registry", Focus::Registry),
    ("Health", Focus::Health),
];

pub fn layout(area: Rect, state: &AppState) -> Areas {
    let status_rows = status_bar::height(state, area.width);
    let [body, status] =
        Layout::vertical([Constraint::Min(3), Constraint::Length(status_rows)]).areas(area);
    let input_rows = (state.input.lines().len().clamp(1, 6) + 2) as u16;
    let mut areas = Areas {
        status,
        ..Areas::default()
    };
    if area.width >= WIDE {
        // The conversation gets the most room; the registry enough for the
        // demo's full exposed names at 120 columns (longer ones go compact).
        let side = ((area.width - SIDE) * 4 / 9).clamp(36, 64);
        let [left, center, right] = Layout::horizontal([
            Constraint::Length(SIDE),
            Constraint::Min(40),
            Constraint::Length(side),
        ])
        .areas(body);
        // The servers pane grows to show a rejected alias's whole reason.
        let wanted = servers::height(state, SIDE.saturating_sub(2)) + 2;
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

/// The tab a focus belongs to (the conversation and the input share one).
fn tab(focus: Focus) -> Focus {
    if focus == Focus::Conversation {
        Focus::Input
    } else {
        focus
    }
}

/// Draws the whole screen.
pub fn draw(frame: &mut Frame, state: &AppState) {
    let areas = layout(frame.area(), state);
    if let Some(r) = areas.tabs {
        let mut spans = Vec::new();
        for (label, focus) in TABS {
            let style = if tab(state.focus) == focus {
                theme::selected()
            } else {
                theme::dim()
            };
            spans.push(Span::styled(format!(" {label} "), style));
            spans.push(Span::raw("  "));
        }
        frame.render_widget(Line::from(spans), r);
    }
    if let Some(r) = areas.conversation {
        conversation::draw(frame, r, state);
    }
    if let Some(r) = areas.input {
        let mut input = state.input.clone();
        input.set_block(pane_block("Message", state.focus == Focus::Input));
        frame.render_widget(&input, r);
    }
    if let Some(r) = areas.servers {
        servers::draw(frame, r, state);
    }
    if let Some(r) = areas.registry {
        registry::draw(frame, r, state);
    }
    if let Some(r) = areas.health {
        health::draw(frame, r, state);
    }
    status_bar::draw(frame, areas.status, state);
    match &state.overlay {
        Some(Overlay::Help { scroll }) => help::draw(frame, *scroll),
        Some(overlay) => overlays::draw(frame, state, overlay),
        None => {}
    }
    if !state.approvals.is_empty() {
        approval::draw(frame, state);
    } else if !state.elicitations.is_empty() {
        elicitation::draw(frame, state);
    }
}

/// A bordered pane with its title; the focused one stands out.
pub fn pane_block(title: &str, focused: bool) -> Block<'static> {
    Block::default()
        .borders(Borders::ALL)
        .border_style(theme::border(focused))
        .title(Span::styled(
            format!(" {title} "),
            if focused {
                theme::strong()
            } else {
                theme::dim()
            },
        ))
}

/// The keys of a modal window, from the keymap table (so they cannot drift).
pub fn keys_of(scope: crate::ui::keymap::Scope) -> String {
    crate::ui::keymap::hints(scope)
        .iter()
        .map(|(k, d)| format!("{k} {d}"))
        .collect::<Vec<_>>()
        .join(" · ")
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
