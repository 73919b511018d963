//! The reducer: every state change goes through `update`. It does no I/O; what
//! must happen outside (a command to the backend, quitting) comes back as
//! effects. It never imports the renderer: geometry comes from `layout`, line
//! counts from `cells` and `content`.

mod actions;
mod approval;
mod backend;
mod complete;
mod elicit;
mod keys;
mod mouse;
mod offered;
mod overlay;
mod scroll;
mod sign_in;

use super::msg::{Effect, Msg};
use super::state::AppState;

pub use keys::INTERRUPTING;
pub use overlay::prefill;

/// Applies one message. `state.now` must be set by the caller first.
pub fn update(state: &mut AppState, msg: Msg) -> Vec<Effect> {
    let effects = match msg {
        Msg::Key(key) => keys::key(state, key),
        Msg::Paste(text) => keys::paste(state, &text),
        Msg::Mouse(mouse) => mouse::mouse(state, mouse),
        Msg::Backend(event) => backend::event(state, event),
        Msg::Views(views) => {
            backend::views(state, views);
            Vec::new()
        }
        Msg::Tick => Vec::new(),
        // Lines rewrap at the new width: keep the scroll within the content.
        Msg::Resize { width, height } => {
            state.area = ratatui::layout::Rect::new(0, 0, width, height);
            scroll::clamp(state);
            Vec::new()
        }
    };
    expire(state);
    effects
}

/// Drops what has run its time (status messages).
fn expire(state: &mut AppState) {
    let now = state.now;
    if state
        .status
        .as_ref()
        .is_some_and(|(_, until)| *until <= now)
    {
        state.status = None;
    }
}
