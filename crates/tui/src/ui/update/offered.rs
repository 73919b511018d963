//! What servers offer besides tools, as it comes back: listings (for the
//! Resources window and for completion), notices that they changed, and the
//! server content the operator brought into the conversation.

use crate::protocol::{Command, PromptsView, ResourcesView, ServerContentView};
use crate::ui::mentions::Listed;
use crate::ui::msg::Effect;
use crate::ui::state::{AppState, Cell, Overlay};

pub fn resources(state: &mut AppState, view: ResourcesView) {
    if let Some(Overlay::Resources {
        alias,
        view: shown,
        selected,
        ..
    }) = &mut state.overlay
        && *alias == view.alias
    {
        // A new listing may be shorter: the selection stays on a row.
        *selected = (*selected).min(view.resources.len().saturating_sub(1));
        *shown = Some(view.clone());
    }
    let opened = opened(state, &view.alias);
    state.catalog.set_resources(
        view.alias.clone(),
        Listed {
            opened,
            view: Some(view),
        },
    );
}

/// The server's resources changed: what completion knew is forgotten (asked
/// again when needed), an open listing asks at once.
pub fn resources_changed(state: &mut AppState, alias: String) -> Vec<Effect> {
    state.catalog.forget_resources(&alias);
    if let Some(Overlay::Resources { alias: open, .. }) = &state.overlay
        && *open == alias
    {
        return vec![Effect::Send(Command::ListResources(alias))];
    }
    Vec::new()
}

pub fn prompts(state: &mut AppState, view: PromptsView) {
    let opened = opened(state, &view.alias);
    state.catalog.set_prompts(
        view.alias.clone(),
        Listed {
            opened,
            view: Some(view),
        },
    );
}

pub fn prompts_changed(state: &mut AppState, alias: &str) {
    state.catalog.forget_prompts(alias);
}

pub fn content(state: &mut AppState, view: ServerContentView) {
    state.cells.push(Cell::ServerContent(Box::new(view.into())));
}

/// When `alias`'s connection opened (listings are kept per connection).
pub fn opened(state: &AppState, alias: &str) -> Option<std::time::Instant> {
    state
        .servers
        .iter()
        .find(|s| s.alias == alias)
        .and_then(|s| s.health.as_ref())
        .map(|h| h.opened)
}
