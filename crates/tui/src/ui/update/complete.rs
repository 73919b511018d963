//! The completion popup's keys (Tab/Enter insert, ↑/↓ select, Esc closes),
//! and what follows an edit of the input box: a new word starts at the top of
//! its list, and the listings it needs are asked for once.

use crossterm::event::{KeyCode, KeyEvent};
use ratatui_textarea::CursorMove;

use crate::protocol::Command;
use crate::ui::keymap::{self, Action, Scope};
use crate::ui::mentions::{Kind, Listed, Token};
use crate::ui::msg::Effect;
use crate::ui::state::AppState;

/// Takes `key` when the popup is open and the key is one of its own (`None`:
/// the key goes on to the input box).
pub fn key(state: &mut AppState, key: &KeyEvent) -> Option<Vec<Effect>> {
    // The list's own keys first: a typed character never computes it here.
    let action = keymap::lookup(Scope::Complete, key)?;
    let completion = state.completion()?;
    let n = completion.candidates.len();
    let selected = state.picker.selected.min(n.saturating_sub(1));
    match action {
        Action::Close => state.picker.dismissed = Some(completion.token),
        _ if n == 0 => return None,
        Action::Up => state.picker.selected = (selected + n - 1) % n,
        Action::Down => state.picker.selected = (selected + 1) % n,
        Action::Insert => {
            let chosen = &completion.candidates[selected];
            // No word, or one already complete: Enter sends the message.
            let word = &completion.token.text;
            if key.code == KeyCode::Enter && (word.is_empty() || chosen.insert.trim_end() == word) {
                return None;
            }
            replace(state, &completion.token, &chosen.insert);
            return Some(edited(state));
        }
        _ => return None,
    }
    Some(Vec::new())
}

/// Replaces the token before the cursor with `text`.
fn replace(state: &mut AppState, token: &Token, text: &str) {
    let (row, start) = (token.row as u16, token.start as u16);
    state.input.move_cursor(CursorMove::Jump(row, start));
    state.input.delete_str(token.text.chars().count());
    state.input.insert_str(text);
}

/// After the input box changed: a new word selects its first candidate, and
/// the listings completion needs are asked for (once per connection).
pub fn edited(state: &mut AppState) -> Vec<Effect> {
    let Some(completion) = state.completion() else {
        state.picker.on = None;
        return Vec::new();
    };
    if state.picker.on.as_ref() != Some(&completion.token) {
        state.picker.selected = 0;
        state.picker.on = Some(completion.token.clone());
    }
    let mut effects = Vec::new();
    for alias in completion.unasked {
        let opened = super::offered::opened(state, &alias);
        match completion.kind {
            Kind::Resources => {
                let asked = Listed { opened, view: None };
                state.catalog.set_resources(alias.clone(), asked);
                effects.push(Effect::Send(Command::ListResources(alias)));
            }
            Kind::Prompts | Kind::Arguments { .. } => {
                let asked = Listed { opened, view: None };
                state.catalog.set_prompts(alias.clone(), asked);
                effects.push(Effect::Send(Command::ListPrompts(alias)));
            }
        }
    }
    effects
}
