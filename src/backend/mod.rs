//! The backend task: owns the session (the Lead, the hub, the store), serves the
//! UI's `Command`s, and turns agent and MCP events into `BackendEvent`s. It talks
//! to the UI only over the two channels.

mod approvals;
mod approver;
mod commands;
mod convert;
mod elicitor;
mod events;
mod explain;
mod history;
mod operator;
mod pins;
mod records;
mod rules;
mod server_content;
mod signin;
mod views;

use std::collections::HashMap;
use std::sync::Arc;

use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender, unbounded_channel};
use tokio::sync::watch;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::agent::events::TurnEnd;
use crate::agent::lead::Lead;
use crate::agent::model::ModelProvider;
use crate::agent::toolbox::ToolRun;
use crate::config::{Config, ConfigSource};
use crate::mcp::Hub;
use crate::protocol::{ApprovalId, BackendEvent, Command, SessionInfo, Views};
use crate::session::{self, SessionEvent, SessionOptions, SetupError};
use crate::store::Store;
use approvals::Approvals;
use approver::{Asked, TuiApprover};
use records::Records;
use views::{Stats, ViewBuilder};

/// The UI's ends of the channels: commands up, events down, and the views
/// that replace each other (the newest is all that matters).
pub struct BackendHandle {
    pub commands: UnboundedSender<Command>,
    pub events: UnboundedReceiver<BackendEvent>,
    pub views: watch::Receiver<Views>,
    pub task: JoinHandle<()>,
}

/// Starts the session and the backend task.
pub fn spawn(config: Config, options: SessionOptions) -> Result<BackendHandle, SetupError> {
    let (events, events_rx) = unbounded_channel();
    let (commands, commands_rx) = unbounded_channel();
    let (internal, internal_rx) = unbounded_channel();
    let (views, views_rx) = watch::channel(Views::default());
    let approver = Arc::new(TuiApprover::new(internal.clone()));
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
    // A server asking for a sign-in gets the sign-in window (when the operator asks).
    let sign_in: signin::SignInAgent = Arc::new(signin::TuiSignIn::new(events.clone()));
    session.hub.set_sign_in_agent(Some(
        Arc::clone(&sign_in) as Arc<dyn crate::mcp::auth::UserAgent>
    ));
    let first_run = config.source == ConfigSource::Embedded && session.lead.model.is_replay();
    let model = Arc::clone(&session.lead.model);
    // A person is watching: the replay waits for them between acts.
    if let Some(pacing) = model.pacing() {
        pacing.enable();
    }
    let resumed = session.resumed.map(|connected| {
        let history = session
            .store
            .as_ref()
            .map(|s| history::read(s.dir()))
            .unwrap_or_default();
        (history, connected)
    });
    let info = SessionInfo {
        provider: session.lead.model.name().to_string(),
        model: session.lead.model.model().to_string(),
        replay: session.lead.model.is_replay(),
        config: config.source.to_string(),
        config_file: match &config.source {
            ConfigSource::File(path) => Some(path.display().to_string()),
            ConfigSource::Embedded => None,
        },
        config_default_path: crate::config::default_path().map(|p| p.display().to_string()),
        session_id: session.store.as_ref().map(|s| s.id().to_string()),
        first_run,
    };
    let backend = Backend {
        hub: session.hub,
        lead: Some(session.lead),
        store: session.store,
        approvals: Approvals::new(events.clone()),
        events,
        views,
        builder: ViewBuilder::default(),
        internal,
        approver,
        elicitor,
        sign_in,
        config,
        stats: HashMap::new(),
        calls: HashMap::new(),
        records: Records::default(),
        model,
        tasks: HashMap::new(),
        cancel: CancellationToken::new(),
        hand_cancel: CancellationToken::new(),
    };
    let channels = Channels {
        commands: commands_rx,
        session: session.events,
        internal: internal_rx,
    };
    let task = tokio::spawn(backend.run(info, resumed, channels));
    Ok(BackendHandle {
        commands,
        events: events_rx,
        views: views_rx,
        task,
    })
}

/// What the backend's own tasks and approvers tell its loop.
pub enum Internal {
    /// A call needs the operator's approval.
    Asked(Asked),
    /// The asker of prompt `id` stopped waiting (answered, timed out, cancelled).
    Settled(ApprovalId),
    /// A hand-made call ended.
    HandCallDone { id: String, run: ToolRun },
}

struct Channels {
    commands: UnboundedReceiver<Command>,
    /// MCP and agent events, in the order they happened.
    session: UnboundedReceiver<SessionEvent>,
    internal: UnboundedReceiver<Internal>,
}

struct Backend {
    hub: Hub,
    /// `None` while a turn runs (the turn's task owns it).
    lead: Option<Lead>,
    store: Option<Arc<Store>>,
    events: UnboundedSender<BackendEvent>,
    views: watch::Sender<Views>,
    /// Builds `views` incrementally; keeps each alias's last connection.
    builder: ViewBuilder,
    internal: UnboundedSender<Internal>,
    approver: Arc<TuiApprover>,
    approvals: Approvals,
    elicitor: Arc<elicitor::TuiElicitor>,
    sign_in: signin::SignInAgent,
    config: Config,
    /// Call statistics of each alias's current (or last) connection.
    stats: HashMap<String, Stats>,
    /// Call id → alias and exposed name, for the statistics of MCP calls.
    calls: HashMap<String, (String, String)>,
    /// Calls that run as tasks (by call id).
    tasks: HashMap<String, ()>,
    /// What is remembered of each call (how it was decided, for "explain").
    records: Records,
    /// The model provider (a replay's pace is ended from here).
    model: Arc<dyn ModelProvider>,
    /// The running turn's.
    cancel: CancellationToken,
    /// The operator's hand-made calls' (Ctrl-C cancels them as it does a turn).
    hand_cancel: CancellationToken,
}

type Turn = JoinHandle<(Lead, TurnEnd)>;

/// A resumed session's earlier conversation and the servers it had connected.
type Resumed = (Vec<crate::protocol::HistoryItem>, Vec<String>);

impl Backend {
    async fn run(mut self, info: SessionInfo, resumed: Option<Resumed>, mut ch: Channels) {
        self.send(BackendEvent::Started(info));
        if let Some((history, connected)) = resumed {
            self.send(BackendEvent::Resumed { history, connected });
        }
        self.servers();
        let mut turn: Option<Turn> = None;
        let mut pace = self.model.pacing().map(|p| p.subscribe());
        loop {
            tokio::select! {
                paused = async {
                    match pace.as_mut() {
                        Some(pace) => match pace.changed().await {
                            Ok(()) => Some(*pace.borrow_and_update()),
                            Err(_) => None,
                        },
                        None => std::future::pending().await,
                    }
                }, if pace.is_some() => {
                    match paused {
                        Some(Some(seconds)) => self.send(BackendEvent::ReplayPaused { seconds }),
                        Some(None) => self.send(BackendEvent::ReplayResumed),
                        // The provider is gone: nothing paces any more.
                        None => pace = None,
                    }
                }
                command = ch.commands.recv() => {
                    let command = command.unwrap_or(Command::Quit);
                    if command == Command::Quit {
                        break;
                    }
                    self.command(command, &mut turn);
                }
                Some(event) = ch.session.recv() => self.session_event(event),
                Some(message) = ch.internal.recv() => {
                    if matches!(message, Internal::Asked(_)) {
                        // The asking call's own event was sent before it asked:
                        // take it in first, so the prompt can name the call.
                        self.drain_session(&mut ch.session);
                    }
                    self.internal(message);
                }
                // (Without a turn this branch is disabled; `pending` is never reached.)
                finished = async {
                    match turn.as_mut() {
                        Some(turn) => turn.await,
                        None => std::future::pending().await,
                    }
                }, if turn.is_some() => {
                    turn = None;
                    // The turn's last notices come before the word that it ended.
                    self.drain_session(&mut ch.session);
                    self.turn_done(finished);
                }
            }
            // A grant given, used or ended shows in the Rules view.
            if self.approvals.take_dirty() {
                self.servers();
            }
        }
        self.shutdown(turn).await;
    }

    fn drain_session(&mut self, session: &mut UnboundedReceiver<SessionEvent>) {
        while let Ok(event) = session.try_recv() {
            self.session_event(event);
        }
    }

    fn session_event(&mut self, event: SessionEvent) {
        match event {
            SessionEvent::Agent(event) => self.agent(event),
            SessionEvent::Mcp(event) => self.mcp(event),
        }
    }

    fn internal(&mut self, message: Internal) {
        match message {
            Internal::Asked(asked) => self.approvals.ask(asked, &self.hub.snapshot()),
            Internal::Settled(id) => self.approvals.settled(id),
            Internal::HandCallDone { id, run } => {
                self.tasks.remove(&id);
                if let Some((alias, _)) = self.calls.remove(&id) {
                    self.count(&alias, &run);
                }
                let decided = self.decided(&id, &run);
                self.send(BackendEvent::ToolCallFinished(events::outcome_view(
                    id, &run, decided,
                )));
            }
        }
    }

    /// Sends fresh views (incrementally built: unchanged tool lists are shared).
    fn servers(&mut self) {
        let views = self
            .builder
            .views(&self.hub, &self.stats, self.approvals.grants());
        self.views.send_replace(views);
    }

    fn send(&self, event: BackendEvent) {
        let _ = self.events.send(event);
    }

    /// Interrupts the turn, denies open prompts, closes every server.
    async fn shutdown(mut self, turn: Option<Turn>) {
        self.sign_in.cancel();
        self.cancel.cancel();
        self.hand_cancel.cancel();
        self.approvals.withdraw_all();
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
