//! Backend events and views → state.

use std::sync::Arc;
use std::time::Instant;

use crate::protocol::{
    AliasStatus, BackendEvent, HistoryItem, Requester, ToolCallView, ToolOutcomeView, TurnEnd,
    Views,
};
use crate::ui::msg::Effect;
use crate::ui::state::{
    AppState, CallStatus, Cell, ElicitForm, Focus, Overlay, Prompt, SignInWindow, Struck,
    ToolCallCell,
};

pub fn event(state: &mut AppState, event: BackendEvent) -> Vec<Effect> {
    match event {
        BackendEvent::Started(info) => {
            state.banner = info.first_run;
            // The first thing the conversation says: what works without a model.
            if let Some(why) = &info.no_model {
                state.cells.push(Cell::Notice(why.clone()));
            }
            state.session = info;
        }
        BackendEvent::TurnStarted => {
            state.busy = true;
            state.can_retry = false;
        }
        BackendEvent::AssistantDelta { agent, text } => delta(state, agent, &text),
        BackendEvent::ToolCallStarted(view) => {
            finish_streaming(state);
            if view.by == Requester::Operator {
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
            state.cells.push(Cell::Notice(format!(
                "revoked {} tools of `{alias}` ({cause})",
                tools.len()
            )));
            // The side panel shows what just happened, unless the operator is
            // choosing there: Health and the registry turn to this alias.
            if state.focus != Focus::Servers
                && !state.registry_all
                && let Some(i) = state.servers.iter().position(|s| s.alias == alias)
                && i != state.selected_server
            {
                state.selected_server = i;
                state.selected_tool = 0;
                state.registry_offset = 0;
            }
            // Its last listing stays in place, struck out, until the next key.
            if let Some(tools) = state.live.remove(&alias) {
                state.struck.retain(|s| s.alias != alias);
                state.struck.push(Struck {
                    alias,
                    tools,
                    cause,
                    at: state.now,
                });
                state.struck_gen += 1;
            }
        }
        BackendEvent::ApprovalRequested(view) => {
            super::approval::opened(state, &view.call_id);
            state.approvals.push_back(Prompt {
                view,
                opened: state.now,
                scroll: 0,
            });
        }
        BackendEvent::ApprovalWithdrawn { id, .. } => withdrawn(state, id),
        BackendEvent::ElicitationRequested(view) => state
            .elicitations
            .push_back(ElicitForm::new(view, state.now)),
        BackendEvent::ElicitationWithdrawn(id) => super::elicit::close(state, id),
        BackendEvent::ElicitationInvalid { id, problems } => {
            super::elicit::refused(state, id, problems)
        }
        BackendEvent::Resources(view) => super::offered::resources(state, view),
        BackendEvent::ResourcesChanged(alias) => {
            return super::offered::resources_changed(state, alias);
        }
        BackendEvent::Prompts(view) => super::offered::prompts(state, view),
        BackendEvent::PromptsChanged(alias) => super::offered::prompts_changed(state, &alias),
        BackendEvent::ServerContent(view) => super::offered::content(state, view),
        BackendEvent::Explained(view) => {
            if let Some(Overlay::Explain {
                call_id,
                view: shown,
                ..
            }) = &mut state.overlay
                && *call_id == view.call_id
            {
                *shown = Some(view);
            }
        }
        BackendEvent::Resumed { history, connected } => resumed(state, history, connected),
        BackendEvent::ReplayPaused { seconds } => state.paused = Some((state.now, seconds)),
        BackendEvent::ReplayResumed => state.paused = None,
        BackendEvent::Status(text) => state.say(text),
        BackendEvent::Taint(taint) => state.taint = taint,
        BackendEvent::ClientTaint { client, taint } => {
            if taint.is_clean() {
                state.client_taints.remove(&client);
            } else {
                state.client_taints.insert(client, taint);
            }
        }
        BackendEvent::CommandResult(text) => {
            state.cells.push(Cell::Notice(text.clone()));
            state.say(text);
        }
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
    state.grants = views.grants;
    state.serving = views.serving;
    for server in views.servers.iter() {
        if server.state == AliasStatus::Ready && !server.published.is_empty() {
            state
                .live
                .insert(server.alias.clone(), Arc::clone(&server.published));
            // Live tools again: they take the struck listing's place.
            if state.struck.iter().any(|s| s.alias == server.alias) {
                state.struck.retain(|s| s.alias != server.alias);
                state.struck_gen += 1;
            }
        }
    }
    state.servers = views.servers;
    state.catalog.keep_live(&state.servers);
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

fn delta(state: &mut AppState, agent: Requester, text: &str) {
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
        decided: None,
        flow: None,
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
    call.decided = outcome.decided;
    call.flow = outcome.flow;
}

/// A prompt left without the operator's answer: off the screen, and its call
/// says what became of it.
fn withdrawn(state: &mut AppState, id: u64) {
    let Some(at) = state.approvals.iter().position(|p| p.view.id == id) else {
        return;
    };
    let front = at == 0;
    let Some(prompt) = state.approvals.remove(at) else {
        return;
    };
    // Its call no longer waits for the operator: it runs (on a grant) or
    // ends at once with why (revoked, withdrawn); its result says which.
    let now = state.now;
    if let Some(call) = state.call_mut(&prompt.view.call_id)
        && call.status == CallStatus::AwaitingApproval
    {
        call.status = CallStatus::Running { since: now };
    }
    if front {
        super::approval::next_in_front(state);
    }
}

/// A resumed session: its earlier conversation on screen, and how to get its
/// servers back.
fn resumed(state: &mut AppState, history: Vec<HistoryItem>, connected: Vec<String>) {
    let id = state.session.session_id.clone().unwrap_or_default();
    state.cells.push(Cell::Notice(format!(
        "resumed session {id}: its conversation so far ({} entries) — the Lead has all of it",
        history.len()
    )));
    for item in history {
        state.cells.push(match item {
            HistoryItem::User(text) => Cell::User(text),
            HistoryItem::Assistant { agent, text } => Cell::Assistant {
                agent,
                text,
                streaming: false,
            },
            HistoryItem::Notice(text) => Cell::Notice(text),
            HistoryItem::Call(call) => {
                let (view, outcome) = *call;
                let mut cell = call_cell(view, state.now);
                cell.status = match &outcome {
                    Some(o) if o.ok => CallStatus::Ok {
                        elapsed_ms: o.elapsed_ms,
                    },
                    Some(o) => CallStatus::Failed {
                        code: o.code.clone().unwrap_or_else(|| "error".into()),
                        elapsed_ms: o.elapsed_ms,
                    },
                    None => CallStatus::Failed {
                        code: "no result: the session ended first".into(),
                        elapsed_ms: 0,
                    },
                };
                if let Some(o) = outcome {
                    cell.result = Some(o.text);
                    cell.server_output = o.server_output;
                    // The row's decision word, as the audit log kept it.
                    cell.decided = o.decided;
                }
                Cell::ToolCall(Box::new(cell))
            }
        });
    }
    if connected.is_empty() {
        state.cells.push(Cell::Notice(
            "no MCP server was connected when it ended; connect from Servers (2) with c".into(),
        ));
    } else {
        state.cells.push(Cell::Notice(format!(
            "connected when it ended, not reconnected: {} — press Ctrl-R to reconnect them (or c in Servers)",
            connected.join(", ")
        )));
    }
    state.resumed = connected;
}
