//! The backend task: owns the session (the Lead, the hub, the store), serves the
//! UI's `Command`s, and turns agent and MCP events into `BackendEvent`s. It talks
//! to the UI only over the two channels.

mod approvals;
mod approver;
mod commands;
mod config_watch;
mod convert;
mod elicitor;
mod events;
mod explain;
mod history;
mod operator;
mod pins;
mod records;
mod reload;
mod rules;
mod serve;
mod server_content;
mod signin;
mod views;

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender, unbounded_channel};
use tokio::sync::watch;
use tokio::task::{JoinHandle, JoinSet};
use tokio_util::sync::CancellationToken;

use crate::agent::events::TurnEnd;
use crate::agent::lead::Lead;
use crate::agent::model::ModelProvider;
use crate::agent::toolbox::ToolRun;
use crate::config::{Config, ConfigSource};
use crate::mcp::Hub;
use crate::mcp::{Approver, CallId};
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
    spawn_with(config, options, None)
}

/// Starts the session and the backend task, serving MCP at `serve` too (the
/// control room: `mcp-harness --serve ADDR`).
pub fn spawn_with(
    config: Config,
    options: SessionOptions,
    serve: Option<std::net::SocketAddr>,
) -> Result<BackendHandle, SetupError> {
    let (events, events_rx) = unbounded_channel();
    let (commands, commands_rx) = unbounded_channel();
    let (inbound, inbound_rx) = unbounded_channel();
    let (views, views_rx) = watch::channel(Views::default());
    let approver = Arc::new(TuiApprover::new(inbound.clone()));
    let elicitor = Arc::new(elicitor::TuiElicitor::new(events.clone()));
    // The session's events and its approval prompts share one channel: a
    // prompt is read after the event of the call that asks.
    let changes = crate::mcp::gateway::Changes::default();
    let sink = {
        let (inbound, changes) = (inbound.clone(), changes.clone());
        move |event| {
            // The gateway re-lists for its clients once the registry moved.
            if let SessionEvent::Mcp(event) = &event {
                changes.event(event);
            }
            drop(inbound.send(Inbound::Session(event)))
        }
    };
    // A server asking for input gets a form; one asking for a sign-in gets the
    // sign-in window (when the operator asks).
    let sign_in: signin::SignInAgent = Arc::new(signin::TuiSignIn::new(events.clone()));
    let people = {
        let (elicitor, sign_in) = (Arc::clone(&elicitor), Arc::clone(&sign_in));
        move |hub: crate::mcp::HubBuilder| {
            hub.elicitor(elicitor as Arc<dyn crate::mcp::elicit::Elicitor>)
                .sign_in_agent(sign_in as Arc<dyn crate::mcp::auth::UserAgent>)
        }
    };
    let session = session::start_with(
        &config,
        approver as Arc<dyn Approver>,
        options,
        sink,
        people,
    )?;
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
        no_model: (!session.lead.model.is_configured())
            .then(|| crate::agent::model::unconfigured::NO_MODEL.to_string()),
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
        file: reload::ConfigFile::new(&config),
        pending: HashMap::new(),
        hub: session.hub,
        lead: Some(session.lead),
        store: session.store,
        approvals: Approvals::new(events.clone()),
        events,
        views,
        builder: ViewBuilder::default(),
        serving: None,
        inbound,
        approver: session.approver,
        elicitor,
        sign_in,
        config,
        stats: HashMap::new(),
        calls: HashMap::new(),
        records: Records::default(),
        model,
        task_calls: HashSet::new(),
        jobs: JoinSet::new(),
        cancel: CancellationToken::new(),
        hand_cancel: CancellationToken::new(),
    };
    let channels = Channels {
        commands: commands_rx,
        inbound: inbound_rx,
    };
    let serve = serve.map(|addr| (addr, changes));
    let task = tokio::spawn(backend.run(info, resumed, channels, serve));
    Ok(BackendHandle {
        commands,
        events: events_rx,
        views: views_rx,
        task,
    })
}

/// What the session, the backend's own tasks and its approvers tell its loop,
/// on one channel, in the order it happened.
pub enum Inbound {
    /// An MCP or agent event.
    Session(SessionEvent),
    /// A call needs the operator's approval.
    Asked(Asked),
    /// The asker of prompt `id` stopped waiting (answered, timed out, cancelled).
    Settled(ApprovalId),
    /// An outside client's call started (the control room's gateway).
    ClientCall(serve::ClientCall),
    /// A call the backend made or watched (by hand, an outside client's) ended.
    HandCallDone { id: CallId, run: ToolRun },
    /// The turn is over: the Lead is back (after every event of the turn).
    TurnOver(Box<Lead>, TurnEnd),
    /// The config file may have changed on disk.
    ConfigTouched,
    /// A backend job's notice, read after the session events it caused.
    Notice(String),
    /// The control room's gateway: where it serves, how many client
    /// sessions are live (`None`: it stopped).
    Serving(Option<crate::protocol::ServingView>),
}

struct Channels {
    commands: UnboundedReceiver<Command>,
    inbound: UnboundedReceiver<Inbound>,
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
    /// The control room's gateway, while it serves (carried into `views`).
    serving: Option<crate::protocol::ServingView>,
    inbound: UnboundedSender<Inbound>,
    /// The approver the Lead uses, for the operator's own calls.
    approver: Arc<dyn Approver>,
    approvals: Approvals,
    elicitor: Arc<elicitor::TuiElicitor>,
    sign_in: signin::SignInAgent,
    /// The config in force (re-read from its file when that changes).
    config: Config,
    /// The config file, when there is one: what was last read of it.
    file: Option<reload::ConfigFile>,
    /// Aliases whose config changed while they were connecting: what to apply
    /// to the connection once it registers.
    pending: HashMap<String, crate::mcp::SpecChange>,
    /// Call statistics of each alias's current (or last) connection.
    stats: HashMap<String, Stats>,
    /// Call id → alias, for the statistics of MCP calls.
    calls: HashMap<CallId, String>,
    /// Calls that run as tasks.
    task_calls: HashSet<CallId>,
    /// The backend's own tasks (connects, listings, hand-made calls,
    /// sign-ins): aborted on shutdown.
    jobs: JoinSet<()>,
    /// What is remembered of each call (how it was decided, for "explain").
    records: Records,
    /// The model provider (a replay's pace is ended from here).
    model: Arc<dyn ModelProvider>,
    /// The running turn's.
    cancel: CancellationToken,
    /// The operator's hand-made calls' (Ctrl-C cancels them as it does a turn).
    hand_cancel: CancellationToken,
}

/// The running turn's task (it hands the Lead back in `Inbound::TurnOver`;
/// the handle says whether it panicked).
type Turn = JoinHandle<()>;

/// A resumed session's earlier conversation and the servers it had connected.
type Resumed = (Vec<crate::protocol::HistoryItem>, Vec<String>);

impl Backend {
    async fn run(
        mut self,
        info: SessionInfo,
        resumed: Option<Resumed>,
        mut ch: Channels,
        serve: Option<(std::net::SocketAddr, crate::mcp::gateway::Changes)>,
    ) {
        self.send(BackendEvent::Started(info));
        if let Some((addr, changes)) = serve {
            self.serve(addr, changes).await;
        }
        if let Some((history, connected)) = resumed {
            self.send(BackendEvent::Resumed { history, connected });
        }
        self.servers();
        if let Some(file) = &self.file {
            config_watch::spawn(file.path(), &mut self.jobs, self.inbound.clone());
        }
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
                Some(message) = ch.inbound.recv() => self.inbound(message),
                // (Without a turn this branch is disabled; `pending` is never reached.)
                finished = async {
                    match turn.as_mut() {
                        Some(turn) => turn.await,
                        None => std::future::pending().await,
                    }
                }, if turn.is_some() => {
                    turn = None;
                    // A turn that ended handed the Lead back on the channel;
                    // one that panicked did not.
                    if let Err(e) = finished {
                        self.turn_crashed(e);
                    }
                }
                // Reaps the backend's own finished tasks (disabled while none run).
                Some(done) = self.jobs.join_next() => {
                    if let Err(e) = done && e.is_panic() {
                        tracing::error!("a backend task panicked: {e}");
                    }
                }
            }
            // A grant given, used or ended shows in the Rules view.
            if self.approvals.take_dirty() {
                self.servers();
            }
        }
        self.shutdown(turn).await;
    }

    fn session_event(&mut self, event: SessionEvent) {
        if let Some(store) = &self.store {
            event.audit(store);
        }
        match event {
            SessionEvent::Agent(event) => self.agent(event),
            SessionEvent::Mcp(event) => self.mcp(event),
            SessionEvent::Approval { .. } => {}
        }
    }

    fn inbound(&mut self, message: Inbound) {
        match message {
            Inbound::Session(event) => self.session_event(event),
            Inbound::Asked(asked) => self.approvals.ask(asked, &self.hub.snapshot()),
            Inbound::Settled(id) => self.approvals.settled(id),
            Inbound::ClientCall(call) => self.client_call(call),
            Inbound::HandCallDone { id, run } => self.call_finished(id, &run),
            Inbound::TurnOver(lead, end) => self.turn_done(*lead, end),
            Inbound::ConfigTouched => self.reread_config(reload::Moment::Touched),
            Inbound::Notice(text) => self.send(BackendEvent::Notice(text)),
            Inbound::Serving(serving) => {
                self.serving = serving;
                self.servers();
            }
        }
    }

    /// Sends fresh views (incrementally built: unchanged tool lists are shared).
    fn servers(&mut self) {
        let mut views = self
            .builder
            .views(&self.hub, &self.stats, self.approvals.grants());
        views.serving = self.serving;
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
        if let Some(turn) = turn {
            let _ = tokio::time::timeout(std::time::Duration::from_secs(5), turn).await;
        }
        // Connects, listings, sign-ins and hand-made calls still running end here.
        self.jobs.abort_all();
        while self.jobs.join_next().await.is_some() {}
        self.hub.shutdown().await;
        if let Some(store) = &self.store {
            store.flush();
        }
        self.send(BackendEvent::Stopped);
    }
}
