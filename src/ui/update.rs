//! The reducer: every state change goes through `update`. It does no I/O; what
//! must happen outside (a command to the backend, quitting) comes back as effects.

use std::time::{Duration, Instant};

use crossterm::event::{KeyEvent, MouseEvent};

use super::state::{AppState, CallStatus, Cell, Prompt, REVOKED_VISIBLE, Revoked, ToolCallCell};
use crate::protocol::{BackendEvent, Command, ToolCallView, ToolOutcomeView};

/// How long a status-bar message stays.
const STATUS_VISIBLE: Duration = Duration::from_secs(6);

/// Everything that can change the state.
#[derive(Debug, Clone)]
pub enum Msg {
    Key(KeyEvent),
    Paste(String),
    Mouse(MouseEvent),
    Backend(BackendEvent),
    /// Time passed (only sent while something animates).
    Tick,
    /// The terminal was resized (the loop has stored the new size).
    Resize,
}

/// What the loop must do after an update.
#[derive(Debug, Clone, PartialEq)]
pub enum Effect {
    Send(Command),
    /// Leave the UI (the backend has stopped).
    Exit,
}

/// Applies one message. `state.now` must be set by the caller first.
pub fn update(state: &mut AppState, msg: Msg) -> Vec<Effect> {
    let effects = match msg {
        Msg::Key(key) => super::input::key(state, key),
        Msg::Paste(text) => super::input::paste(state, &text),
        Msg::Mouse(mouse) => super::mouse::mouse(state, mouse),
        Msg::Backend(event) => backend(state, event),
        Msg::Tick => Vec::new(),
        // Lines rewrap at the new width: keep the scroll within the content.
        Msg::Resize => {
            super::scroll::clamp(state);
            Vec::new()
        }
    };
    expire(state);
    effects
}

/// Drops what has run its time (struck-out tools, status messages).
fn expire(state: &mut AppState) {
    let now = state.now;
    state.revoked.retain(|r| r.until > now);
    if state
        .status
        .as_ref()
        .is_some_and(|(_, until)| *until <= now)
    {
        state.status = None;
    }
}

/// Shows a short message in the status bar.
pub fn status(state: &mut AppState, text: impl Into<String>) {
    state.status = Some((text.into(), state.now + STATUS_VISIBLE));
}

fn backend(state: &mut AppState, event: BackendEvent) -> Vec<Effect> {
    match event {
        BackendEvent::Started(info) => {
            state.banner = info.first_run;
            state.session = info;
        }
        BackendEvent::TurnStarted => {
            state.busy = true;
            state.can_retry = false;
        }
        BackendEvent::AssistantDelta { agent, text } => delta(state, agent, &text),
        BackendEvent::ToolCallStarted(view) => {
            finish_streaming(state);
            if view.agent == HAND {
                state.hand_calls.push(view.id.clone());
            }
            let mut cell = call_cell(view, state.now);
            // The prompt can arrive before the call it belongs to.
            if super::approval::awaited(state, &cell.id) {
                cell.status = CallStatus::AwaitingApproval;
            }
            state.cells.push(Cell::ToolCall(Box::new(cell)));
        }
        BackendEvent::ToolCallFinished(outcome) => {
            state.hand_calls.retain(|id| *id != outcome.id);
            finish_call(state, outcome);
            settle_interruption(state);
        }
        BackendEvent::CallProgress {
            id,
            progress,
            total,
            message,
        } => {
            if let Some(call) = state.call_mut(&id)
                && matches!(call.status, CallStatus::Running { .. })
            {
                let done = match total {
                    Some(total) => format!("{progress}/{total}"),
                    None => format!("{progress}"),
                };
                call.progress = Some(match message {
                    Some(m) => format!("{done} · {}", crate::sanitize::inert_line(&m, 80)),
                    None => done,
                });
            }
        }
        BackendEvent::Notice(text) => state.cells.push(Cell::Notice(text)),
        BackendEvent::Error(text) => {
            finish_streaming(state);
            state.cells.push(Cell::Error(text));
        }
        BackendEvent::TurnEnded { end, failed } => {
            finish_streaming(state);
            state.busy = false;
            state.can_retry = failed;
            settle_interruption(state);
            // An interruption or the step limit was already told by the agent,
            // in its own notice, just before.
            let told = end == "interrupted" || end.starts_with("stopped at the step limit");
            if end != "completed" && !failed && !told {
                state.cells.push(Cell::Notice(format!("turn ended: {end}")));
            }
        }
        BackendEvent::Servers(servers) => {
            state.servers = servers;
            state.selected_server = state
                .selected_server
                .min(state.servers.len().saturating_sub(1));
            super::input::clamp_tool(state);
        }
        BackendEvent::Snapshot(version) => state.snapshot_version = version,
        BackendEvent::ToolsRevoked {
            alias,
            tools,
            cause,
        } => {
            let until = state.now + REVOKED_VISIBLE;
            let count = tools.len();
            state.revoked.extend(tools.into_iter().map(|tool| Revoked {
                alias: alias.clone(),
                tool,
                cause: cause.clone(),
                until,
            }));
            state.cells.push(Cell::Notice(format!(
                "revoked {count} tools of `{alias}` ({cause})"
            )));
        }
        BackendEvent::ApprovalRequested(view) => {
            super::approval::opened(state, view.call_id.as_deref());
            state.approvals.push_back(Prompt {
                view,
                opened: state.now,
                scroll: 0,
            });
        }
        BackendEvent::ApprovalWithdrawn(id) => state.approvals.retain(|p| p.view.id != id),
        BackendEvent::ElicitationRequested(view) => state
            .elicitations
            .push_back(super::elicit::form(view, state.now)),
        BackendEvent::ElicitationWithdrawn(id) => state.elicitations.retain(|f| f.view.id != id),
        BackendEvent::Status(text) => status(state, text),
        BackendEvent::Stopped => return vec![Effect::Exit],
    }
    Vec::new()
}

/// The agent label of the operator's own hand-made calls.
const HAND: &str = "operator";

/// "interrupting…" goes once nothing is left running.
fn settle_interruption(state: &mut AppState) {
    if !state.interruptible()
        && state
            .status
            .as_ref()
            .is_some_and(|(text, _)| text == super::input::INTERRUPTING)
    {
        state.status = None;
    }
}

fn delta(state: &mut AppState, agent: String, text: &str) {
    if let Some(Cell::Assistant {
        agent: a,
        text: t,
        streaming: true,
    }) = state.cells.last_mut()
        && *a == agent
    {
        t.push_str(text);
        return;
    }
    finish_streaming(state);
    state.cells.push(Cell::Assistant {
        agent,
        text: text.to_string(),
        streaming: true,
    });
}

fn finish_streaming(state: &mut AppState) {
    for cell in state.cells.iter_mut().rev().take(4) {
        if let Cell::Assistant { streaming, .. } = cell {
            *streaming = false;
        }
    }
}

fn call_cell(view: ToolCallView, now: Instant) -> ToolCallCell {
    ToolCallCell {
        id: view.id,
        agent: view.agent,
        name: view.name,
        origin: view.origin,
        effect: view.effect,
        arguments: view.arguments,
        status: CallStatus::Running { since: now },
        result: None,
        server_output: None,
        progress: None,
        expanded: false,
    }
}

fn finish_call(state: &mut AppState, outcome: ToolOutcomeView) {
    let Some(call) = state.call_mut(&outcome.id) else {
        return;
    };
    call.status = match (outcome.ok, outcome.code) {
        (true, _) => CallStatus::Ok {
            elapsed_ms: outcome.elapsed_ms,
        },
        (false, code) => CallStatus::Failed {
            code: code.unwrap_or_else(|| "error".into()),
            elapsed_ms: outcome.elapsed_ms,
        },
    };
    call.progress = None;
    call.result = Some(outcome.text);
    call.server_output = outcome.server_output;
}
