//! Keys and paste, in layers (helix-style): Ctrl-C first (it closes the
//! topmost window, else interrupts, else quits), F3 (a prompt put aside) →
//! approval prompt (once armed) → elicitation form (once armed) → nothing else
//! under a prompt or form but typing in the input box → overlay → the
//! registry's filter → help → global keys → the focused pane. Letters in a
//! list pane are keys, never text for the input box; an unbound one says so.

use std::time::Duration;

use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
use ratatui_textarea::{CursorMove, Input};

use crate::protocol::{AliasStatus, Command, Decision};
use crate::ui::keymap::{self, Action, Scope};
use crate::ui::mentions::{self, Parsed};
use crate::ui::msg::Effect;
use crate::ui::state::{AppState, Cell, Focus, Overlay};

/// The status while an interruption is on its way (cleared once nothing runs).
pub const INTERRUPTING: &str = "interrupting…";
/// A second Ctrl-C within this long quits while servers are connected.
const DOUBLE_CTRL_C: Duration = Duration::from_secs(1);
/// Struck-out rows stay at least this long, whatever keys come meanwhile.
const STRUCK_AT_LEAST: Duration = Duration::from_secs(1);

pub fn key(state: &mut AppState, key: KeyEvent) -> Vec<Effect> {
    if key.kind == KeyEventKind::Release {
        return Vec::new();
    }
    state.banner = false;
    let now = state.now;
    // The next key after a revocation puts the struck-out rows away.
    let before = state.struck.len();
    state
        .struck
        .retain(|s| now.saturating_duration_since(s.at) < STRUCK_AT_LEAST);
    if state.struck.len() != before {
        state.struck_gen += 1;
    }
    match keymap::lookup(Scope::Global, &key) {
        Some(Action::InterruptOrQuit) => return ctrl_c(state),
        Some(Action::Waiting) => {
            super::waiting::toggle(state);
            return Vec::new();
        }
        _ => {}
    }
    if state.prompt_armed()
        && let super::approval::Answer::Taken(effects) = super::approval::key(state, &key)
    {
        return effects;
    }
    // An armed form takes every key (they are not "typing elsewhere").
    if state.form_armed() {
        return super::elicit::key(state, key);
    }
    // Under a prompt or a form still arming, the panes get nothing: only
    // typing in the input box goes on (and pushes the arming back).
    if (state.prompt_shown() || state.form_shown()) && !super::waiting::passes_under(state, &key) {
        super::waiting::swallowed(state, &key);
        state.last_key = Some(state.now);
        return Vec::new();
    }
    // Every other key counts as typing: it pushes the prompt's arming back.
    let effects = dispatch(state, key);
    state.last_key = Some(state.now);
    effects
}

/// Ctrl-C: closes the topmost window; else interrupts what runs; else quits —
/// at once with no server connected, on a second press within a second with.
fn ctrl_c(state: &mut AppState) -> Vec<Effect> {
    if let Some(prompt) = state.approvals.front().filter(|_| state.prompt_shown()) {
        let id = prompt.view.id;
        super::approval::decided(state);
        state.say("denied (Ctrl-C closes the prompt as a denial)");
        return vec![Effect::Send(Command::Approval {
            id,
            decision: Decision::Deny,
        })];
    }
    if let Some(form) = state.elicitations.front().filter(|_| state.form_shown()) {
        let id = form.view.id;
        super::elicit::close(state, id);
        return vec![Effect::Send(Command::Elicitation {
            id,
            answer: crate::protocol::ElicitAnswer::Cancel,
        })];
    }
    if let Some(Overlay::SignIn(_)) = state.overlay {
        return super::sign_in::cancel(state);
    }
    if state.overlay.take().is_some() {
        return Vec::new();
    }
    if state.filter.as_ref().is_some_and(|f| f.editing) {
        super::actions::clear_filter(state);
        return Vec::new();
    }
    if state.interruptible() {
        state.interrupting = true;
        state.say(INTERRUPTING);
        return vec![Effect::Send(Command::Interrupt)];
    }
    let connected = state
        .servers
        .iter()
        .filter(|s| matches!(s.state, AliasStatus::Ready | AliasStatus::Connecting))
        .count();
    let again = state
        .quit_armed
        .is_some_and(|at| state.now.saturating_duration_since(at) <= DOUBLE_CTRL_C);
    if connected == 0 || again {
        return quit(state);
    }
    state.quit_armed = Some(state.now);
    state.say(format!(
        "press Ctrl-C again within a second to quit and close {connected} connected server{} (Ctrl-Q quits at once)",
        if connected == 1 { "" } else { "s" }
    ));
    Vec::new()
}

/// A key that is not for the approval prompt or a form.
fn dispatch(state: &mut AppState, key: KeyEvent) -> Vec<Effect> {
    if state.overlay.is_some() {
        return super::overlay::key(state, key);
    }
    if state.focus == Focus::Registry && state.filter.as_ref().is_some_and(|f| f.editing) {
        return super::actions::filter_key(state, key);
    }
    if state.focus == Focus::Input
        && let Some(effects) = super::complete::key(state, &key)
    {
        return effects;
    }
    let typing_text = state.focus == Focus::Input && !state.input.is_empty();
    if keymap::is_help(&key, typing_text) {
        state.overlay = Some(Overlay::Help { scroll: 0 });
        return Vec::new();
    }
    if let Some(action) = keymap::lookup(Scope::Global, &key) {
        return global(state, action);
    }
    let scope = match state.focus {
        Focus::Input => return input_key(state, key),
        Focus::Conversation => Scope::Conversation,
        Focus::Servers => Scope::Servers,
        Focus::Registry => Scope::Registry,
        Focus::Health => Scope::Health,
    };
    let action = keymap::lookup(scope, &key).or_else(|| keymap::lookup(Scope::Lists, &key));
    match action {
        Some(Action::Pane(n)) => go_to(state, n),
        Some(Action::FocusInput) => state.focus = Focus::Input,
        Some(action) => return super::actions::pane(state, action),
        None => {
            if let KeyCode::Char(c) = key.code
                && key.modifiers.difference(KeyModifiers::SHIFT).is_empty()
            {
                // A letter in a list pane is never text for the input box.
                state.say(format!(
                    "`{c}` is not a key in {} — i or Esc goes to the input box, ? lists every key",
                    state.focus.label()
                ));
            }
        }
    }
    Vec::new()
}

/// `1`–`4`: Conversation, Servers, Registry, Health.
fn go_to(state: &mut AppState, n: u8) {
    state.focus = match n {
        1 => Focus::Conversation,
        2 => Focus::Servers,
        3 => Focus::Registry,
        _ => Focus::Health,
    };
}

fn global(state: &mut AppState, action: Action) -> Vec<Effect> {
    match action {
        Action::InterruptOrQuit => return ctrl_c(state),
        Action::Quit => return quit(state),
        Action::Help => state.overlay = Some(Overlay::Help { scroll: 0 }),
        Action::Pane(n) => go_to(state, n),
        Action::Rules => {
            state.overlay = Some(Overlay::Rules {
                selected: 0,
                saving: None,
            })
        }
        Action::ReconnectResumed => return reconnect_resumed(state),
        Action::NextFocus | Action::PrevFocus => {
            let order = Focus::ORDER;
            let i = order.iter().position(|f| *f == state.focus).unwrap_or(0);
            let step = if action == Action::NextFocus {
                1
            } else {
                order.len() - 1
            };
            state.focus = order[(i + step) % order.len()];
        }
        _ => {}
    }
    Vec::new()
}

/// Ctrl-R: connects the servers a resumed session had connected.
fn reconnect_resumed(state: &mut AppState) -> Vec<Effect> {
    if state.resumed.is_empty() {
        state.say("nothing to reconnect: Ctrl-R reconnects the servers of a resumed session");
        return Vec::new();
    }
    let aliases = std::mem::take(&mut state.resumed);
    state.say(format!("reconnecting {}…", aliases.join(", ")));
    aliases
        .into_iter()
        .map(|a| Effect::Send(Command::Connect(a)))
        .collect()
}

pub fn quit(state: &mut AppState) -> Vec<Effect> {
    state.quitting = true;
    state.say("closing every server…");
    vec![Effect::Send(Command::Quit)]
}

fn input_key(state: &mut AppState, key: KeyEvent) -> Vec<Effect> {
    let row = state.input.cursor().0;
    let last_row = state.input.lines().len().saturating_sub(1);
    match keymap::lookup(Scope::Input, &key) {
        Some(Action::Send) if state.input_text().trim().is_empty() && state.paused.is_some() => {
            return vec![Effect::Send(Command::Continue)];
        }
        Some(Action::Send) => return send(state),
        Some(Action::Newline) => state.input.insert_newline(),
        Some(Action::HistoryPrev) if row == 0 => history(state, -1),
        Some(Action::HistoryNext) if row == last_row => history(state, 1),
        Some(Action::PageUp) => super::scroll::by(state, super::actions::PAGE),
        Some(Action::PageDown) => super::scroll::by(state, -super::actions::PAGE),
        Some(Action::Undo) => {
            state.input.undo();
        }
        Some(Action::Redo) => {
            state.input.redo();
        }
        _ => {
            if key.code == KeyCode::Esc {
                return Vec::new();
            }
            state.input.input(Input::from(key));
        }
    }
    super::complete::edited(state)
}

fn send(state: &mut AppState) -> Vec<Effect> {
    let text = state.input_text();
    if text.trim().is_empty() {
        return Vec::new();
    }
    if state.paused.is_some() {
        // The replay waits for an empty Enter; text in the box would dead-end it.
        state.say("the replay is paused: clear the input box, then Enter goes on");
        return Vec::new();
    }
    if state.busy {
        state.say("a turn is running: wait for it, or press Ctrl-C to interrupt it");
        return Vec::new();
    }
    // No model: the text stays in the box, nothing is sent.
    if let Some(why) = &state.session.no_model {
        state.say(why.clone());
        return Vec::new();
    }
    // `/alias:prompt …` and `@alias:uri`: a refusal keeps the text in the box.
    let command = match mentions::parse(&text, &state.servers, &state.catalog) {
        Ok(Parsed::Message(message)) => Command::Prompt(message),
        Ok(Parsed::Prompt(used)) => Command::UsePrompt(used),
        Err(why) => {
            state.say(why);
            return Vec::new();
        }
    };
    state.input = AppState::new(state.now).input;
    state.history.push(text.clone());
    state.history_pos = None;
    state.scroll_back = 0;
    state.cells.push(Cell::User(text));
    state.busy = true;
    vec![Effect::Send(command)]
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
    // Under a prompt or form, only the input box takes text.
    if (state.prompt_shown() || state.form_shown())
        && (state.overlay.is_some() || state.focus != Focus::Input)
    {
        state.say("nothing under the prompt takes text now (F3 puts it aside)");
        return Vec::new();
    }
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
    if state.focus == Focus::Registry
        && let Some(filter) = state.filter.as_mut().filter(|f| f.editing)
    {
        filter.query.push_str(&text.replace('\n', " "));
        super::actions::filtered(state);
        return Vec::new();
    }
    // The textarea drops paste events; insert the text ourselves.
    state.focus = Focus::Input;
    state.input.insert_str(&text);
    super::complete::edited(state)
}
