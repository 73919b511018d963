//! Backend events and views → state.

use std::time::Instant;

use crate::protocol::{BackendEvent, Origin, ToolCallView, ToolOutcomeView, TurnEnd, Views};
use crate::ui::msg::Effect;
use crate::ui::state::{
    AppState, CallStatus, Cell, Overlay, Prompt, REVOKED_VISIBLE, Revoked, SignInWindow,
    ToolCallCell,
};

pub fn event(state: &mut AppState, event: BackendEvent) -> Vec<Effect> {
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
            if view.by == Origin::Operator {
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
        BackendEvent::CallTask {
            id,
            status,
            message,
        } => {
            if let Some(call) = state.call_mut(&id)
                && matches!(call.status, CallStatus::Running { .. })
            {
                // The server's words: inert, one line.
                let message = message.map(|m| crate::sanitize::inert_line(&m, 80));
                call.task = Some((status, message));
            }
        }
        BackendEvent::Notice(text) => state.cells.push(Cell::Notice(text)),
        BackendEvent::Error(text) => {
            finish_streaming(state);
            state.cells.push(Cell::Error(text));
        }
        BackendEvent::TurnEnded(end) => {
            finish_streaming(state);
            state.busy = false;
            state.can_retry = end == TurnEnd::Failed;
            settle_interruption(state);
            // An interruption or the step limit was already told by the agent,
            // in its own notice, just before; a failure by its error.
            if matches!(end, TurnEnd::Crashed) {
                state.cells.push(Cell::Notice(format!("turn ended: {end}")));
            }
        }
        BackendEvent::ToolsRevoked {
            alias,
            tools,
            cause,
        } => {
            let until = state.now + REVOKED_VISIBLE;
            let count = tools.len();
            state.cells.push(Cell::Notice(format!(
                "revoked {count} tools of `{alias}` ({cause})"
            )));
            state.revoked.extend(tools.into_iter().map(|tool| Revoked {
                alias: alias.clone(),
                tool,
                cause: cause.clone(),
                until,
            }));
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
        BackendEvent::Status(text) => state.say(text),
        BackendEvent::SignInStarted(view) => {
            state.overlay = Some(Overlay::SignIn(Box::new(SignInWindow {
                view,
                paste: String::new(),
                problem: None,
            })));
        }
        BackendEvent::SignInPasteRefused(why) => {
            if let Some(Overlay::SignIn(window)) = &mut state.overlay {
                window.problem = Some(why);
            }
        }
        BackendEvent::SignInEnded { alias, text, .. } => {
            if matches!(&state.overlay, Some(Overlay::SignIn(w)) if w.view.alias == alias) {
                state.overlay = None;
            }
            state.say(text);
        }
        BackendEvent::Stopped => return vec![Effect::Exit],
    }
    Vec::new()
}

/// Fresh views: the servers and the registry's version.
pub fn views(state: &mut AppState, views: Views) {
    state.servers = views.servers;
    state.snapshot_version = views.snapshot;
    state.selected_server = state
        .selected_server
        .min(state.servers.len().saturating_sub(1));
    super::actions::clamp_tool(state);
}

/// "interrupting…" goes once nothing is left running.
fn settle_interruption(state: &mut AppState) {
    if state.interrupting && !state.interruptible() {
        state.interrupting = false;
        if state
            .status
            .as_ref()
            .is_some_and(|(text, _)| text == super::keys::INTERRUPTING)
        {
            state.status = None;
        }
    }
}

fn delta(state: &mut AppState, agent: Origin, text: &str) {
    let streaming_here = matches!(
        state.cells.last(),
        Some(Cell::Assistant { agent: a, streaming: true, .. }) if *a == agent
    );
    if streaming_here && let Some(Cell::Assistant { text: t, .. }) = state.cells.last_mut() {
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
    let len = state.cells.len();
    for i in (len.saturating_sub(4)..len).rev() {
        if matches!(
            state.cells[i],
            Cell::Assistant {
                streaming: true,
                ..
            }
        ) && let Some(Cell::Assistant { streaming, .. }) = state.cells.get_mut(i)
        {
            *streaming = false;
        }
    }
}

fn call_cell(view: ToolCallView, now: Instant) -> ToolCallCell {
    ToolCallCell {
        id: view.id,
        by: view.by,
        name: view.name,
        target: view.target,
        effect: view.effect,
        arguments: view.arguments,
        status: CallStatus::Running { since: now },
        result: None,
        server_output: None,
        progress: None,
        task: None,
        dropped_nulls: Vec::new(),
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
    call.dropped_nulls = outcome.dropped_nulls;
    call.result = Some(outcome.text);
    call.server_output = outcome.server_output;
}
