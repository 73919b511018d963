//! What waits for the operator — approval prompts, then forms — and the
//! windows the operator opens. A window opened by the operator keeps its keys
//! until it closes: a prompt that waits meanwhile is put aside (a badge in the
//! status bar), and comes back, arming anew, when the window closes or on F3.
//! While a prompt or form is shown, keys for the panes under it do nothing;
//! typing in the input box goes on (until it arms, it decides nothing).

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use crate::ui::keymap::{self, Action, Scope};
use crate::ui::state::{AppState, Focus};

/// What `follow` compares: a window open, something waiting.
#[derive(Clone, Copy)]
pub struct Before {
    window: bool,
    waiting: bool,
}

pub fn before(state: &AppState) -> Before {
    Before {
        window: state.overlay.is_some(),
        waiting: state.waiting(),
    }
}

/// After a message: a prompt arriving behind an open window waits aside; a
/// window opening puts what waits aside; the window closing brings it back.
pub fn follow(state: &mut AppState, before: Before) {
    let window = state.overlay.is_some();
    if !before.waiting && state.waiting() {
        state.aside = window;
    } else if !before.window && window {
        state.aside = true;
    } else if before.window && !window && state.aside && state.waiting() {
        state.aside = false;
        super::approval::next_in_front(state);
    }
}

/// F3: what waits to the front (it arms anew), or aside again.
pub fn toggle(state: &mut AppState) {
    if !state.waiting() {
        state.say("nothing waits for you (F3 brings back a prompt or form put aside)");
        return;
    }
    state.aside = !state.aside;
    if !state.aside {
        super::approval::next_in_front(state);
    }
}

/// Whether a key that is not the shown prompt's (or form's) own may go on
/// under it: help and the rules (windows: they put the prompt aside), quitting,
/// and typing in the input box. Everything else — a list pane's actions, focus
/// changes, the keys of a window under it — does nothing.
pub fn passes_under(state: &AppState, key: &KeyEvent) -> bool {
    if state.overlay.is_some() {
        return false;
    }
    let typing_text = state.focus == Focus::Input && !state.input.is_empty();
    if keymap::is_help(key, typing_text) {
        return true;
    }
    match keymap::lookup(Scope::Global, key) {
        Some(Action::Quit | Action::Help | Action::Rules) => true,
        Some(_) => false,
        None => state.focus == Focus::Input,
    }
}

/// A key that did nothing under the prompt or form: say what it wants.
pub fn swallowed(state: &mut AppState, key: &KeyEvent) {
    let (what, scope, armed) = if state.prompt_shown() {
        ("the approval prompt", Scope::Approval, state.prompt_armed())
    } else {
        ("the form", Scope::Elicitation, state.form_armed())
    };
    let typed = match key.code {
        KeyCode::Char(c) if key.modifiers.difference(KeyModifiers::SHIFT).is_empty() => {
            format!("`{c}` does nothing here: ")
        }
        _ => String::new(),
    };
    let when = if armed {
        "has the keys"
    } else {
        "takes its keys after a second with no keys"
    };
    state.say(format!(
        "{typed}{what} {when} — {}",
        keymap::keys_of(scope)
    ));
}
