//! What each of the UI's commands does, and how a turn starts and ends.

use tokio_util::sync::CancellationToken;

use super::reload::Moment;
use super::server_content::{self, Sinks};
use super::{Backend, Inbound, Turn, convert};
use crate::agent::events::TurnEnd;
use crate::agent::lead::Lead;
use crate::protocol::{BackendEvent, Command, PromptUse, TurnEnd as EndView, UserMessage};

/// What a turn starts from.
enum Start {
    Message(UserMessage),
    Prompt(PromptUse),
    /// The last turn again (after a provider error).
    Retry,
}

impl Backend {
    pub(super) fn command(&mut self, command: Command, turn: &mut Option<Turn>) {
        // What the operator saved is what these use.
        match &command {
            Command::Reconnect(alias) => self.reread_config(Moment::Reconnect(alias)),
            Command::Connect(_)
            | Command::Refresh
            | Command::Prompt(_)
            | Command::UsePrompt(_)
            | Command::Retry => self.reread_config(Moment::Command),
            _ => {}
        }
        match command {
            Command::Prompt(message) => self.start_turn(turn, Start::Message(message)),
            Command::UsePrompt(used) => self.start_turn(turn, Start::Prompt(used)),
            Command::Retry => self.start_turn(turn, Start::Retry),
            Command::Interrupt => {
                self.cancel.cancel();
                self.hand_cancel.cancel();
                self.hand_cancel = CancellationToken::new();
                self.approvals.withdraw_all();
                self.elicitor.withdraw_all();
            }
            Command::Connect(alias) => self.spawn_connect(alias, false),
            Command::Reconnect(alias) => self.spawn_connect(alias, true),
            Command::Disconnect(alias) => {
                let text = match self.hub.disconnect(&alias) {
                    Ok(()) => format!("disconnected `{alias}`"),
                    Err(e) => e.to_string(),
                };
                self.tell(text);
            }
            Command::KillServer(alias) => {
                let text = match self.hub.kill_process(&alias) {
                    Ok(()) => format!(
                        "sent SIGKILL to `{alias}`'s processes; watch the watchdog revoke its tools"
                    ),
                    Err(e) => e.to_string(),
                };
                self.tell(text);
            }
            Command::Approval { id, decision } => self.approvals.answer(id, decision),
            Command::Explain(id) => self.explain(&id),
            Command::ClearTaint => {
                // Logged by the hub's `taint_cleared` event (the audit log).
                let held = self.hub.flows().taint(&crate::mcp::flows::FlowScope::Lead);
                self.hub.clear_taint(&crate::mcp::flows::FlowScope::Lead);
                self.send(BackendEvent::CommandResult(if held.is_clean() {
                    "the session holds no flow taint".into()
                } else {
                    "flow taint cleared: sink calls no longer ask because of what the session read before".into()
                }));
            }
            Command::ClearClientTaint(client) => {
                // Logged by the hub's `taint_cleared` event, naming the client.
                let scope = crate::mcp::flows::FlowScope::Client(client.clone());
                let held = self.hub.flows().taint(&scope);
                self.hub.clear_taint(&scope);
                self.send(BackendEvent::CommandResult(if held.is_clean() {
                    format!("client `{client}`'s session holds no flow taint")
                } else {
                    format!(
                        "flow taint of client `{client}` cleared: its sink calls no longer ask because \
                         of what its session read before"
                    )
                }));
            }
            Command::ListResources(alias) => self.spawn_list_resources(alias),
            Command::ReadResource(resource) => {
                let (hub, sinks) = (
                    self.hub.clone(),
                    Sinks {
                        events: self.events.clone(),
                        store: self.store.clone(),
                    },
                );
                self.jobs
                    .spawn(async move { server_content::read(&hub, &sinks, resource).await });
            }
            Command::ListPrompts(alias) => self.spawn_list_prompts(alias),
            Command::RevokeGrant(id) => self.revoke_grant(id),
            Command::SaveGrant(id) => self.save_grant(id),
            Command::Continue => {
                if let Some(pacing) = self.model.pacing() {
                    pacing.go();
                }
            }
            Command::Elicitation { id, answer } => self.elicitor.answer(id, answer),
            Command::WritePolicy(alias) => self.write_policy(&alias),
            Command::AcceptPins { alias, seen } => self.accept_pins(alias, seen),
            Command::CallTool { name, arguments } => self.manual_call(name, arguments),
            Command::SignIn(alias) => self.sign_in(alias),
            Command::SignInPaste(text) => self.sign_in.paste(text),
            Command::SignInCancel => self.sign_in.cancel(),
            Command::SignOut(alias) => self.sign_out(alias),
            Command::Refresh => {
                // A hidden test hook: the exit-path tests need a panic in a task.
                if std::env::var("MCP_HARNESS_TEST_PANIC").is_ok_and(|v| v == "backend") {
                    panic!(
                        "MCP_HARNESS_TEST_PANIC=backend: a panic in the backend task, on purpose"
                    );
                }
                self.servers();
            }
            Command::Quit => {}
        }
    }

    fn start_turn(&mut self, turn: &mut Option<Turn>, start: Start) {
        if !self.model.is_configured() {
            self.send(BackendEvent::Status(
                crate::agent::model::unconfigured::NO_MODEL.into(),
            ));
            return;
        }
        let Some(mut lead) = self.lead.take() else {
            self.send(BackendEvent::Status(
                "a turn is running: wait for it, or press Ctrl-C to interrupt it".into(),
            ));
            return;
        };
        self.cancel = CancellationToken::new();
        let cancel = self.cancel.clone();
        let (hub, inbound) = (self.hub.clone(), self.inbound.clone());
        let sinks = Sinks {
            events: self.events.clone(),
            store: self.store.clone(),
        };
        self.send(BackendEvent::TurnStarted);
        *turn = Some(tokio::spawn(async move {
            // A hidden test hook: the TUI must survive a panic in a turn.
            if std::env::var("MCP_HARNESS_TEST_PANIC").is_ok_and(|v| v == "turn") {
                panic!("MCP_HARNESS_TEST_PANIC=turn: a panic in the turn, on purpose");
            }
            // Server content is had first, inside the turn: Ctrl-C stops it too.
            let blocks = match start {
                Start::Retry => {
                    let end = lead.retry(&cancel).await;
                    let _ = inbound.send(Inbound::TurnOver(Box::new(lead), end));
                    return;
                }
                Start::Message(message) => {
                    server_content::message(&hub, &sinks, message, &cancel).await
                }
                Start::Prompt(used) => server_content::prompt(&hub, &sinks, used, &cancel).await,
            };
            let end = match blocks {
                Some(blocks) => lead.send_blocks(blocks, &cancel).await,
                None if cancel.is_cancelled() => TurnEnd::Interrupted,
                // Nothing to send (the prompt could not be had; the operator was told).
                None => TurnEnd::Completed,
            };
            // After every event of the turn, on the same channel.
            let _ = inbound.send(Inbound::TurnOver(Box::new(lead), end));
        }));
    }

    pub(super) fn turn_done(&mut self, lead: Lead, end: TurnEnd) {
        self.lead = Some(lead);
        self.send(BackendEvent::TurnEnded(convert::turn_end(&end)));
    }

    /// A panic in the turn: the conversation is gone with it; say so.
    pub(super) fn turn_crashed(&mut self, e: tokio::task::JoinError) {
        self.send(BackendEvent::Error(format!(
            "the agent crashed ({e}); start a new session to continue"
        )));
        self.send(BackendEvent::TurnEnded(EndView::Crashed));
    }
}
