//! Signing in (OAuth) from the servers pane: `s` and `o` on the selected
//! alias, and the keys of the sign-in window (a field for the address the
//! browser was sent to, Enter to use it, Esc to give up).

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use crate::protocol::{Command, SignInStatus};
use crate::ui::keymap::{self, Action, Scope};
use crate::ui::msg::Effect;
use crate::ui::state::{AppState, Overlay};

/// `s` and `o` on the selected server.
pub fn action(state: &mut AppState, action: Action) -> Vec<Effect> {
    let Some(server) = state.selected_server() else {
        return Vec::new();
    };
    let alias = server.alias.clone();
    match (server.sign_in, action) {
        (SignInStatus::NotUsed, _) => {
            state.say(format!(
                "`{alias}` does not sign in (a stdio server, or `auth = \"none\"`)"
            ));
            Vec::new()
        }
        (SignInStatus::SignedIn, Action::SignIn) => {
            state.say(format!("`{alias}` is signed in; o signs out"));
            Vec::new()
        }
        (_, Action::SignIn) => {
            state.say(format!(
                "signing in to `{alias}`: waiting for its authorization page…"
            ));
            vec![Effect::Send(Command::SignIn(alias))]
        }
        (_, _) => vec![Effect::Send(Command::SignOut(alias))],
    }
}

/// The sign-in window's keys (the backend says when the sign-in is over).
pub fn key(state: &mut AppState, key: KeyEvent) -> Vec<Effect> {
    let Some(Overlay::SignIn(window)) = &mut state.overlay else {
        return Vec::new();
    };
    match keymap::lookup(Scope::SignIn, &key) {
        Some(Action::Close) => return cancel(state),
        Some(Action::Submit) if !window.paste.trim().is_empty() => {
            window.problem = None;
            return vec![Effect::Send(Command::SignInPaste(
                window.paste.trim().to_string(),
            ))];
        }
        Some(Action::Submit) => {
            window.problem = Some(
                "paste the address the browser was sent to first (or wait for the browser)".into(),
            );
        }
        Some(Action::Edit) => {
            window.paste.pop();
        }
        _ => {
            if let KeyCode::Char(c) = key.code
                && key.modifiers.difference(KeyModifiers::SHIFT).is_empty()
            {
                window.paste.push(c);
                window.problem = None;
            }
        }
    }
    Vec::new()
}

/// Esc or Ctrl-C in the window: the sign-in is given up, not just hidden.
pub fn cancel(state: &mut AppState) -> Vec<Effect> {
    state.overlay = None;
    state.say("cancelling the sign-in…");
    vec![Effect::Send(Command::SignInCancel)]
}
