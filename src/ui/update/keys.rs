//! Keys and paste, in layers (helix-style): approval modal (once armed) →
//! elicitation form → overlay → focused pane → global keys. Every key lands
//! somewhere visible; none is swallowed silently.

use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
use ratatui_textarea::{CursorMove, Input};

use crate::protocol::Command;
use crate::ui::keymap::{self, Action, Scope};
use crate::ui::msg::Effect;
use crate::ui::state::{AppState, Cell, Focus, Overlay};

/// The status while an interruption is on its way (cleared once nothing runs).
pub const INTERRUPTING: &str = "interrupting…";

pub fn key(state: &mut AppState, key: KeyEvent) -> Vec<Effect> {
    if key.kind == KeyEventKind::Release {
        return Vec::new();
    }
    state.banner = false;
    if let Some(Action::InterruptOrQuit) = keymap::lookup(Scope::Global, &key) {
        // Ctrl-C means the same everywhere, modal or not.
        return global(state, Action::InterruptOrQuit);
    }
    if state.prompt_armed()
        && let super::approval::Answer::Taken(effects) = super::approval::key(state, &key)
    {
        return effects;
    }
    // An armed form takes every key (they are not "typing elsewhere"); one that
    // has not armed yet lets keys go where they were going.
    if state.form_armed() {
        return super::elicit::key(state, key);
    }
    // Every other key counts as typing: it pushes the prompt's arming back.
    let effects = dispatch(state, key);
    state.last_key = Some(state.now);
    effects
}

/// A key that is not for the approval prompt or a form: overlay → focused
/// pane → global keys.
fn dispatch(state: &mut AppState, key: KeyEvent) -> Vec<Effect> {
    if state.overlay.is_some() {
        return super::overlay::key(state, key);
    }
    let typing_text = state.focus == Focus::Input && !state.input.is_empty();
    if keymap::is_help(&key, typing_text) {
        state.overlay = Some(Overlay::Help { scroll: 0 });
        return Vec::new();
    }
    let scope = match state.focus {
        Focus::Input => Scope::Input,
        Focus::Conversation => Scope::Conversation,
        Focus::Servers => Scope::Servers,
        Focus::Registry => Scope::Registry,
        Focus::Health => Scope::Health,
    };
    if let Some(action) = keymap::lookup(Scope::Global, &key) {
        return global(state, action);
    }
    let action = keymap::lookup(scope, &key);
    match (state.focus, action) {
        (Focus::Input, action) => input_key(state, key, action),
        (_, Some(action)) => super::actions::pane(state, action),
        (_, None) if key.code == KeyCode::Esc => {
            state.focus = Focus::Input;
            Vec::new()
        }
        (_, None) => {
            if let KeyCode::Char(c) = key.code
                && key.modifiers.difference(KeyModifiers::SHIFT).is_empty()
            {
                // Typing in a list pane: the operator meant the input box.
                state.focus = Focus::Input;
                state.input.insert_char(c);
            }
            Vec::new()
        }
    }
}

fn global(state: &mut AppState, action: Action) -> Vec<Effect> {
    match action {
        Action::InterruptOrQuit if state.interruptible() => {
            state.interrupting = true;
            state.say(INTERRUPTING);
            vec![Effect::Send(Command::Interrupt)]
        }
        Action::InterruptOrQuit | Action::Quit => quit(state),
        Action::Help => {
            state.overlay = Some(Overlay::Help { scroll: 0 });
            Vec::new()
        }
        Action::NextFocus | Action::PrevFocus => {
            let order = Focus::ORDER;
            let i = order.iter().position(|f| *f == state.focus).unwrap_or(0);
            let step = if action == Action::NextFocus {
                1
            } else {
                order.len() - 1
            };
            state.focus = order[(i + step) % order.len()];
            Vec::new()
        }
        _ => Vec::new(),
    }
}

pub fn quit(state: &mut AppState) -> Vec<Effect> {
    state.quitting = true;
    state.say("closing every server…");
    vec![Effect::Send(Command::Quit)]
}

fn input_key(state: &mut AppState, key: KeyEvent, action: Option<Action>) -> Vec<Effect> {
    let row = state.input.cursor().0;
    let last_row = state.input.lines().len().saturating_sub(1);
    match action {
        Some(Action::Send) => return send(state),
        Some(Action::Newline) => state.input.insert_newline(),
        Some(Action::HistoryPrev) if row == 0 => history(state, -1),
        Some(Action::HistoryNext) if row == last_row => history(state, 1),
        Some(Action::PageUp) => super::scroll::by(state, super::actions::PAGE),
        Some(Action::PageDown) => super::scroll::by(state, -super::actions::PAGE),
        _ => {
            if key.code == KeyCode::Esc {
                return Vec::new();
            }
            state.input.input(Input::from(key));
        }
    }
    Vec::new()
}

fn send(state: &mut AppState) -> Vec<Effect> {
    let text = state.input_text();
    if text.trim().is_empty() {
        return Vec::new();
    }
    if state.busy {
        state.say("a turn is running: wait for it, or press Ctrl-C to interrupt it");
        return Vec::new();
    }
    state.input = AppState::new(state.now).input;
    state.history.push(text.clone());
    state.history_pos = None;
    state.scroll_back = 0;
    state.cells.push(Cell::User(text.clone()));
    state.busy = true;
    vec![Effect::Send(Command::Prompt(text))]
}

fn history(state: &mut AppState, step: isize) {
    if state.history.is_empty() {
        return;
    }
    let last = state.history.len() as isize - 1;
    let next = match state.history_pos {
        None if step < 0 => last,
        None => return,
        Some(pos) => pos as isize + step,
    };
    let text = if next > last {
        state.history_pos = None;
        String::new()
    } else {
        let next = next.clamp(0, last) as usize;
        state.history_pos = Some(next);
        state.history[next].clone()
    };
    let mut input = AppState::new(state.now).input;
    input.insert_str(&text);
    input.move_cursor(CursorMove::Bottom);
    input.move_cursor(CursorMove::End);
    state.input = input;
}

pub fn paste(state: &mut AppState, text: &str) -> Vec<Effect> {
    // Bracketed paste delivers line breaks as CR (what the Enter key sends);
    // the text areas split lines on LF only.
    let text = text.replace("\r\n", "\n").replace('\r', "\n");
    // An armed form is on top of everything but an approval prompt.
    if state.form_armed() {
        super::elicit::paste(state, &text);
        return Vec::new();
    }
    // Pasting is typing: a prompt waiting to arm waits on.
    state.last_key = Some(state.now);
    if let Some(Overlay::CallTool(editor)) = &mut state.overlay {
        editor.area.insert_str(&text);
        super::overlay::revalidate(state);
        return Vec::new();
    }
    if let Some(Overlay::SignIn(window)) = &mut state.overlay {
        // An address is one line: breaks a terminal put in are not part of it.
        window
            .paste
            .extend(text.chars().filter(|c| !c.is_control()));
        window.problem = None;
        return Vec::new();
    }
    if state.overlay.is_some() {
        // Not into the box hidden behind a window that takes no text.
        state.say("nothing here takes text: close this window to paste into the input box");
        return Vec::new();
    }
    // The textarea drops paste events; insert the text ourselves.
    state.focus = Focus::Input;
    state.input.insert_str(&text);
    Vec::new()
}
