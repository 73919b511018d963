//! The backend task: owns the session (the Lead, the hub, the store), serves the
//! UI's `Command`s, and turns agent and MCP events into `BackendEvent`s. It talks
//! to the UI only over the two channels.

mod approver;
mod elicitor;
mod events;
mod views;

use std::collections::HashMap;
use std::sync::Arc;

use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender, unbounded_channel};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::agent::events::{AgentEvent, TurnEnd};
use crate::agent::lead::Lead;
use crate::config::{Config, ConfigSource};
use crate::mcp::{Hub, McpEvent};
use crate::protocol::{BackendEvent, Command, OriginView, SessionInfo, ToolCallView};
use crate::session::{self, SessionOptions, SetupError};
use crate::store::Store;
use approver::TuiApprover;
use views::Stats;

/// The UI's ends of the two channels.
pub struct BackendHandle {
    pub commands: UnboundedSender<Command>,
    pub events: UnboundedReceiver<BackendEvent>,
    pub task: JoinHandle<()>,
}

/// Starts the session and the backend task.
pub fn spawn(config: Config, options: SessionOptions) -> Result<BackendHandle, SetupError> {
    let (events, events_rx) = unbounded_channel();
    let (commands, commands_rx) = unbounded_channel();
    let approver = Arc::new(TuiApprover::new(events.clone()));
    let elicitor = Arc::new(elicitor::TuiElicitor::new(events.clone()));
    let session = session::start(
        &config,
        Arc::clone(&approver) as Arc<dyn crate::mcp::Approver>,
        options,
    )?;
    // A server asking for input gets a form (before anything connects).
    session
        .hub
        .set_elicitor(Arc::clone(&elicitor) as Arc<dyn crate::mcp::elicit::Elicitor>);
    let first_run = config.source == ConfigSource::Embedded && session.lead.model.is_replay();
    let info = SessionInfo {
        provider: session.lead.model.name().to_string(),
        model: session.lead.model.model().to_string(),
        replay: session.lead.model.is_replay(),
        config: config.source.to_string(),
        session_id: session.store.as_ref().map(|s| s.id().to_string()),
        first_run,
    };
    let backend = Backend {
        hub: session.hub,
        lead: Some(session.lead),
        store: session.store,
        events,
        approver,
        elicitor,
        config,
        stats: HashMap::new(),
        calls: HashMap::new(),
        cancel: CancellationToken::new(),
    };
    let task =
        tokio::spawn(backend.run(info, commands_rx, session.agent_events, session.mcp_events));
    Ok(BackendHandle {
        commands,
        events: events_rx,
        task,
    })
}

struct Backend {
    hub: Hub,
    /// `None` while a turn runs (the turn's task owns it).
    lead: Option<Lead>,
    store: Option<Arc<Store>>,
    events: UnboundedSender<BackendEvent>,
    approver: Arc<TuiApprover>,
    elicitor: Arc<elicitor::TuiElicitor>,
    config: Config,
    stats: HashMap<String, Stats>,
    /// Call id → alias, for the statistics of MCP calls.
    calls: HashMap<String, String>,
    cancel: CancellationToken,
}

type Turn = JoinHandle<(Lead, TurnEnd)>;

impl Backend {
    async fn run(
        mut self,
        info: SessionInfo,
        mut commands: UnboundedReceiver<Command>,
        mut agent_events: UnboundedReceiver<AgentEvent>,
        mut mcp_events: UnboundedReceiver<McpEvent>,
    ) {
        self.send(BackendEvent::Started(info));
        self.servers();
        let mut turn: Option<Turn> = None;
        loop {
            tokio::select! {
                command = commands.recv() => {
                    let command = command.unwrap_or(Command::Quit);
                    if command == Command::Quit {
                        break;
                    }
                    self.command(command, &mut turn);
                }
                Some(event) = agent_events.recv() => self.agent(event),
                Some(event) = mcp_events.recv() => self.mcp(event),
                finished = async { turn.as_mut().expect("guarded").await }, if turn.is_some() => {
                    turn = None;
                    self.turn_done(finished);
                }
            }
        }
        self.shutdown(turn).await;
    }

    fn command(&mut self, command: Command, turn: &mut Option<Turn>) {
        match command {
            Command::Prompt(text) => self.start_turn(turn, Some(text)),
            Command::Retry => self.start_turn(turn, None),
            Command::Interrupt => {
                self.cancel.cancel();
                self.approver.withdraw_all();
                self.elicitor.withdraw_all();
            }
            Command::Connect(alias) => self.spawn_connect(alias, false),
            Command::Reconnect(alias) => self.spawn_connect(alias, true),
            Command::Disconnect(alias) => {
                let text = match self.hub.disconnect(&alias) {
                    Ok(()) => format!("disconnected `{alias}`"),
                    Err(e) => e.to_string(),
                };
                self.send(BackendEvent::Status(text));
            }
            Command::KillServer(alias) => {
                let text = match self.hub.kill_process(&alias) {
                    Ok(()) => format!(
                        "sent SIGKILL to `{alias}`'s processes; watch the watchdog revoke its tools"
                    ),
                    Err(e) => e.to_string(),
                };
                self.send(BackendEvent::Status(text));
            }
            Command::Approval { id, decision } => self.approver.answer(id, decision),
            Command::Elicitation { id, answer } => self.elicitor.answer(id, answer),
            Command::WritePolicy(alias) => self.write_policy(&alias),
            Command::CallTool { name, arguments } => self.manual_call(name, arguments),
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

    fn start_turn(&mut self, turn: &mut Option<Turn>, text: Option<String>) {
        let Some(mut lead) = self.lead.take() else {
            self.send(BackendEvent::Status(
                "a turn is running: wait for it, or press Ctrl-C to interrupt it".into(),
            ));
            return;
        };
        self.cancel = CancellationToken::new();
        let cancel = self.cancel.clone();
        self.send(BackendEvent::TurnStarted);
        *turn = Some(tokio::spawn(async move {
            let end = match text {
                Some(text) => lead.send(&text, &cancel).await,
                None => lead.retry(&cancel).await,
            };
            (lead, end)
        }));
    }

    fn turn_done(&mut self, finished: Result<(Lead, TurnEnd), tokio::task::JoinError>) {
        match finished {
            Ok((lead, end)) => {
                self.lead = Some(lead);
                let (label, failed) = match &end {
                    TurnEnd::Completed => ("completed".to_string(), false),
                    TurnEnd::Interrupted => ("interrupted".to_string(), false),
                    TurnEnd::StepLimit { steps } => (
                        format!("stopped at the step limit ({steps} requests)"),
                        false,
                    ),
                    TurnEnd::Failed { .. } => ("failed".to_string(), true),
                };
                self.send(BackendEvent::TurnEnded { end: label, failed });
            }
            Err(e) => {
                // A panic in the turn: the conversation is gone with it; say so.
                self.send(BackendEvent::Error(format!(
                    "the agent crashed ({e}); start a new session to continue"
                )));
                self.send(BackendEvent::TurnEnded {
                    end: "crashed".into(),
                    failed: false,
                });
            }
        }
    }

    fn spawn_connect(&self, alias: String, reconnect: bool) {
        let (hub, events) = (self.hub.clone(), self.events.clone());
        tokio::spawn(async move {
            if reconnect {
                let _ = hub.disconnect(&alias);
            }
            let text = match hub.connect(&alias).await {
                Ok(report) => match report.outcome {
                    Ok(tools) => format!("connected `{alias}`: {} tools exposed", tools.len()),
                    Err(e) => format!(
                        "`{alias}` {}: {}",
                        e.code,
                        crate::sanitize::inert_line(&e.message, 200)
                    ),
                },
                Err(e) => e.to_string(),
            };
            let _ = events.send(BackendEvent::Status(text));
        });
    }

    fn write_policy(&mut self, alias: &str) {
        let text = match (
            &self.config.source,
            self.hub.last_report(alias),
            self.hub.spec(alias),
        ) {
            (ConfigSource::Embedded, ..) => format!(
                "the embedded default config cannot be edited: create {} (start from config.example.toml)",
                crate::config::default_path()
                    .map(|p| p.display().to_string())
                    .unwrap_or_else(|| "a config file".into())
            ),
            (ConfigSource::File(path), Some(report), Ok(spec)) => {
                let published: Vec<String> =
                    report.published.iter().map(|t| t.name.clone()).collect();
                match crate::config::edit::write_policy(path, alias, &published, &spec.policy) {
                    Ok(policy) => {
                        let _ = self.hub.set_policy(alias, policy);
                        self.spawn_connect(alias.to_string(), true);
                        format!(
                            "wrote [servers.{alias}.tools] to {}; reconnecting",
                            path.display()
                        )
                    }
                    Err(e) => e,
                }
            }
            _ => format!("connect `{alias}` first, so its published tools are known"),
        };
        self.send(BackendEvent::Status(text));
    }

    fn manual_call(&self, name: String, arguments: serde_json::Value) {
        let (hub, events, approver) = (
            self.hub.clone(),
            self.events.clone(),
            Arc::clone(&self.approver),
        );
        let id = format!("operator-{}", uuid_like());
        let origin = hub
            .snapshot()
            .resolve(&name)
            .map(|t| (t.alias.to_string(), t.remote_name.clone(), t.effect));
        let _ = events.send(BackendEvent::ToolCallStarted(ToolCallView {
            id: id.clone(),
            agent: "operator".into(),
            name: name.clone(),
            origin: origin
                .as_ref()
                .map_or(OriginView::Unknown, |(a, r, _)| OriginView::Mcp {
                    alias: a.clone(),
                    remote_name: r.clone(),
                }),
            effect: origin.as_ref().map(|(_, _, e)| e.to_string()),
            arguments: arguments.clone(),
        }));
        tokio::spawn(async move {
            let outcome = hub
                .call(&hub.snapshot(), &name, arguments, approver.as_ref())
                .await;
            let run = crate::agent::toolbox::from_mcp(outcome);
            let _ = events.send(BackendEvent::ToolCallFinished(events::outcome_view(
                id, &run,
            )));
        });
    }

    fn servers(&self) {
        self.send(BackendEvent::Servers(views::servers(
            &self.hub,
            &self.stats,
        )));
    }

    fn send(&self, event: BackendEvent) {
        let _ = self.events.send(event);
    }

    /// Interrupts the turn, denies open prompts, closes every server.
    async fn shutdown(mut self, turn: Option<Turn>) {
        self.cancel.cancel();
        self.approver.withdraw_all();
        self.elicitor.withdraw_all();
        if let Some(turn) = turn
            && let Ok(Ok((lead, _))) =
                tokio::time::timeout(std::time::Duration::from_secs(5), turn).await
        {
            self.lead = Some(lead);
        }
        self.hub.shutdown().await;
        self.send(BackendEvent::Stopped);
    }
}

/// A process-unique id for the operator's own calls.
fn uuid_like() -> u64 {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
    NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
}
