//! Keys of the approval prompt. The prompt arms itself only after a quiet
//! moment (see [`crate::ui::state::APPROVAL_ARM`]); until then every key goes where
//! it was going, so keys typed for something else never decide a call.

use crossterm::event::KeyEvent;

use crate::protocol::{Command, Decision};
use crate::ui::keymap::{self, Action, Scope};
use crate::ui::msg::Effect;
use crate::ui::state::{AppState, CallStatus};

/// What the armed prompt made of a key.
pub enum Answer {
    /// The prompt took it (a decision, or scrolling the arguments).
    Taken(Vec<Effect>),
    /// Not a prompt key: it goes where it was going.
    NotForThePrompt,
}

/// A key while the front prompt is armed.
pub fn key(state: &mut AppState, key: &KeyEvent) -> Answer {
    let Some(prompt) = state.approvals.front_mut() else {
        return Answer::NotForThePrompt;
    };
    let id = prompt.view.id;
    let decision = match keymap::lookup(Scope::Approval, key) {
        Some(Action::ApproveOnce) => Decision::Once,
        Some(Action::ApproveAlways) => Decision::Always,
        Some(Action::Deny) => Decision::Deny,
        Some(Action::Up) => {
            prompt.scroll = prompt.scroll.saturating_sub(1);
            return Answer::Taken(Vec::new());
        }
        Some(Action::Down) => {
            prompt.scroll = prompt.scroll.saturating_add(1);
            return Answer::Taken(Vec::new());
        }
        // It goes where it was going; the prompt (and the footer) say what
        // the prompt wants, and that it arms again after a pause.
        _ => return Answer::NotForThePrompt,
    };
    decided(state);
    Answer::Taken(vec![Effect::Send(Command::Approval { id, decision })])
}

/// The front prompt was answered: it leaves, its call runs (or is refused
/// by the backend), and the next prompt gets its own quiet moment.
pub fn decided(state: &mut AppState) {
    let now = state.now;
    if let Some(prompt) = state.approvals.pop_front()
        && let Some(call) = state.call_mut(&prompt.view.call_id)
        && call.status == CallStatus::AwaitingApproval
    {
        call.status = CallStatus::Running { since: now };
    }
    next_in_front(state);
}

/// Whatever comes to the front gets its own quiet moment: a double `y`
/// decides one call.
pub fn next_in_front(state: &mut AppState) {
    let now = state.now;
    if let Some(next) = state.approvals.front_mut() {
        next.opened = now;
    } else if let Some(form) = state.elicitations.front_mut() {
        // A form that waited behind the prompt comes to the front now.
        form.opened = now;
    }
}

/// Marks the call a new prompt belongs to as waiting (the prompt may also come
/// before the call's own event; `ToolCallStarted` checks the queue then).
pub fn opened(state: &mut AppState, call_id: &crate::protocol::CallId) {
    if let Some(call) = state.call_mut(call_id)
        && matches!(call.status, CallStatus::Running { .. })
    {
        call.status = CallStatus::AwaitingApproval;
    }
}

/// Whether a call is waiting for one of the queued prompts.
pub fn awaited(state: &AppState, call_id: &crate::protocol::CallId) -> bool {
    state.approvals.iter().any(|p| p.view.call_id == *call_id)
}
