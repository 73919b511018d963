//! Assembles one working session from the config: the MCP hub, the model
//! provider, the Lead (with its crew of subagents and teammates) and the session
//! store. Used by the headless `run` and by the TUI's backend.

use std::path::PathBuf;
use std::sync::Arc;

use futures::future::BoxFuture;
use tokio::sync::mpsc::UnboundedReceiver;

use crate::agent::conversation::Message;
use crate::agent::events::{AgentEvent, AgentEvents};
use crate::agent::lead::{Lead, LeadTools};
use crate::agent::model::select::{Fallback, kind, select};
use crate::agent::runner::{Journal, NoJournal};
use crate::agent::subagent::{AgentSettings, Crew};
use crate::agent::tools::readonly::Workspace;
use crate::config::Config;
use crate::mcp::{
    ApprovalDecision, ApprovalRequest, Approver, CallId, EventSink, Hub, HubBuilder, McpEvent,
    Requester, Vars,
};
use crate::store::Store;

/// How many model requests one turn may make before it stops.
const MAX_STEPS: u32 = 40;

/// How the session should start.
#[derive(Debug, Clone, Default)]
pub struct SessionOptions {
    /// `Some(None)`: resume the newest session; `Some(Some(id))`: that one.
    pub resume: Option<Option<String>>,
    /// Write the transcript and audit log (off in some tests; then, with the
    /// embedded default config, the pins stay in memory too).
    pub persist: bool,
    /// The directory the read-only tools may see (default: the current directory).
    pub workspace: Option<PathBuf>,
    /// Where sessions are stored (default: the platform data dir).
    pub data_dir: Option<PathBuf>,
}

/// A running session's parts.
pub struct Session {
    pub hub: Hub,
    pub lead: Lead,
    pub store: Option<Arc<Store>>,
    /// What the hub and the agents report, on one channel in the order it happened
    /// (a connect's `registered` comes before the tool result that announces it).
    pub events: UnboundedReceiver<SessionEvent>,
    /// For a resumed session: the aliases that were connected when it ended
    /// (not reconnected; the operator decides).
    pub resumed: Option<Vec<String>>,
}

/// One event of a session: from the MCP layer or from an agent.
#[derive(Debug, Clone)]
pub enum SessionEvent {
    Mcp(McpEvent),
    Agent(AgentEvent),
    /// A `confirm` call was decided (by the operator, a flag).
    Approval {
        call: CallId,
        tool: String,
        requester: Requester,
        approved: bool,
        decider: &'static str,
        /// What the answer was bound to: the tool's pin, when pinned, and
        /// the arguments' SHA-256.
        definition: Option<String>,
        arguments_sha256: String,
    },
}

impl SessionEvent {
    /// The one writer of the audit records of calls and connections: what of
    /// this event belongs in the audit log (each call's start, approval, task
    /// states and result name the call by its id).
    pub fn audit(&self, store: &Store) {
        match self {
            SessionEvent::Mcp(event) => store.audit_mcp(event),
            SessionEvent::Agent(event) => store.audit_agent(event),
            SessionEvent::Approval {
                call,
                tool,
                requester,
                approved,
                decider,
                definition,
                arguments_sha256,
            } => store.audit_approval(
                call,
                tool,
                requester,
                (*approved, decider),
                (definition.as_deref(), arguments_sha256),
            ),
        }
    }
}

/// Why a session cannot start (the CLI exits with status 2).
#[derive(Debug, thiserror::Error)]
pub enum SetupError {
    #[error("{0}")]
    Model(#[from] crate::agent::model::select::SelectError),
    #[error("the working directory: {0}")]
    Workspace(std::io::Error),
    #[error("the session store: {0}")]
    Store(std::io::Error),
}

/// A session's parts when its events go to a sink of the caller's.
pub struct Started {
    pub hub: Hub,
    pub lead: Lead,
    pub store: Option<Arc<Store>>,
    pub resumed: Option<Vec<String>>,
    /// The approver the Lead uses (its decisions reported on the stream), for
    /// the operator's own calls.
    pub approver: Arc<dyn Approver>,
}

/// Builds a session. `approver` decides `confirm` calls; it is wrapped so every
/// decision lands in the audit log.
pub fn start(
    config: &Config,
    approver: Arc<dyn Approver>,
    options: SessionOptions,
) -> Result<Session, SetupError> {
    let (events_tx, events) = tokio::sync::mpsc::unbounded_channel();
    let started = start_with(
        config,
        approver,
        options,
        move |event| drop(events_tx.send(event)),
        |hub| hub,
    )?;
    Ok(Session {
        hub: started.hub,
        lead: started.lead,
        store: started.store,
        events,
        resumed: started.resumed,
    })
}

/// [`start`], handing every event to `sink` (which must not block): a caller
/// that has other events of the same causal stream (the TUI's approval
/// prompts) puts them all on one channel, read in the order they happened.
/// `people` gives the hub who answers what a server asks of a person (forms,
/// sign-ins), fixed before anything connects.
pub fn start_with(
    config: &Config,
    approver: Arc<dyn Approver>,
    options: SessionOptions,
    sink: impl Fn(SessionEvent) + Send + Sync + 'static,
    people: impl FnOnce(HubBuilder) -> HubBuilder,
) -> Result<Started, SetupError> {
    let selection = select(config.agent.model.as_ref(), fallback(config), &env_var)?;
    let sink = Arc::new(sink);
    let mcp_sink = EventSink::forward({
        let sink = Arc::clone(&sink);
        move |event| sink(SessionEvent::Mcp(event))
    })
    .observed_by(crate::telemetry::observer());
    let reserved = crate::config::BUILTIN_TOOLS
        .iter()
        .map(|s| s.to_string())
        .collect();
    let mut hub = Hub::builder(
        config.servers.clone(),
        config.limits.clone(),
        Vars::from_process(),
        mcp_sink,
    )
    .reserved(reserved)
    .flows(config.flows);
    if !options.persist {
        // Nothing of this session is kept: its sign-ins neither.
        hub = hub.token_store(Arc::new(crate::mcp::auth::Store::memory()));
    }
    // Pins live in the lock file beside the config. A session that keeps no
    // files and has no config file of its own (tests) keeps them in memory,
    // never in the operator's data dir.
    if options.persist || matches!(config.source, crate::config::ConfigSource::File(_)) {
        hub = hub.pin_book(config.pin_book());
    }
    let agent_sink = AgentEvents::forward({
        let sink = Arc::clone(&sink);
        move |event| sink(SessionEvent::Agent(event))
    });
    let (store, conversation, connected, taint) = open_store(&options)?;
    if let Some(store) = &store {
        hub = hub.results_dir(store.dir().join("results"));
    }
    let hub = people(hub).build();
    // What the resumed conversation had read is still in it: its taint too
    // (only the operator clears it).
    hub.restore_taint(crate::mcp::flows::FlowScope::Lead, taint);
    let journal: Arc<dyn Journal> = match &store {
        Some(store) => Arc::clone(store) as Arc<dyn Journal>,
        None => Arc::new(NoJournal),
    };
    // Every decision goes on the session's stream (the audit log is written
    // from there, in one place).
    let approver: Arc<dyn Approver> = Arc::new(AuditedApprover {
        inner: approver,
        sink: Arc::clone(&sink) as Arc<dyn Fn(SessionEvent) + Send + Sync>,
    });
    let root = match &options.workspace {
        Some(dir) => dir.clone(),
        None => std::env::current_dir().map_err(SetupError::Workspace)?,
    };
    let workspace = Workspace::new(&root).map_err(SetupError::Workspace)?;
    let settings = AgentSettings {
        max_tokens: selection.max_tokens,
        context_tokens: selection.context_tokens,
        max_steps: MAX_STEPS,
    };
    let crew = Arc::new(
        Crew::new(
            Arc::clone(&selection.provider),
            Arc::clone(&approver),
            agent_sink.clone(),
            Arc::clone(&journal),
            &config.agent.builtin_tools,
            workspace,
            settings,
            config.agent.teammates.clone(),
        )
        .with_flows(hub.clone()),
    );
    let audited = approver;
    let tools = LeadTools::new(hub.clone(), crew, &config.agent.builtin_tools);
    let mut lead = Lead {
        conversation,
        model: selection.provider,
        tools,
        hub: hub.clone(),
        events: agent_sink,
        journal,
        settings,
    };
    if !connected.is_empty() {
        // Connections are never restored silently: the model is told, and decides.
        let note = format!(
            "[mcp-harness] This session was resumed. MCP servers that were connected before are not connected \
             now: {}. Call connect_mcp to reconnect the ones you need.",
            connected.join(", ")
        );
        lead.conversation.push(Message::user_text(note));
    }
    Ok(Started {
        hub,
        lead,
        approver: audited,
        store,
        resumed: options.resume.is_some().then_some(connected),
    })
}

/// The scripted demo replays only with the embedded default: its script names
/// the demo's servers, not the operator's.
fn fallback(config: &Config) -> Fallback {
    match config.source {
        crate::config::ConfigSource::Embedded => Fallback::Demo,
        crate::config::ConfigSource::File(_) => Fallback::Nothing,
    }
}

fn env_var(name: &str) -> Option<String> {
    std::env::var(name).ok()
}

/// Whether this config gives the Lead a model: false for a config file of the
/// operator's own with no `[model]` and no API key in the environment (then
/// the session has servers and calls by hand, and turns are refused). A
/// `[model]` that cannot be built counts as one: starting says why it fails.
pub fn has_model(config: &Config) -> bool {
    !matches!(
        kind(config.agent.model.as_ref(), fallback(config), &env_var),
        Ok(None)
    )
}

type Opened = (
    Option<Arc<Store>>,
    Vec<Message>,
    Vec<String>,
    crate::mcp::flows::Taint,
);

fn open_store(options: &SessionOptions) -> Result<Opened, SetupError> {
    if !options.persist && options.resume.is_none() {
        return Ok((None, Vec::new(), Vec::new(), Default::default()));
    }
    let data = options
        .data_dir
        .clone()
        .or_else(crate::logging::data_dir)
        .ok_or_else(|| {
            SetupError::Store(std::io::Error::other("no data directory for this platform"))
        })?;
    match &options.resume {
        Some(id) => {
            let resumed = Store::resume(&data, id.as_deref()).map_err(SetupError::Store)?;
            Ok((
                Some(Arc::new(resumed.store)),
                resumed.conversation,
                resumed.connected,
                resumed.taint,
            ))
        }
        None => Ok((
            Some(Arc::new(Store::create(&data).map_err(SetupError::Store)?)),
            Vec::new(),
            Vec::new(),
            Default::default(),
        )),
    }
}

/// Reports every approval decision on the session's stream.
struct AuditedApprover {
    inner: Arc<dyn Approver>,
    sink: Arc<dyn Fn(SessionEvent) + Send + Sync>,
}

impl Approver for AuditedApprover {
    fn approve(&self, request: ApprovalRequest) -> BoxFuture<'_, ApprovalDecision> {
        Box::pin(async move {
            let (call, tool, requester) = (
                request.call.clone(),
                request.tool.clone(),
                request.requester.clone(),
            );
            let definition = request.definition.as_ref().map(ToString::to_string);
            let arguments_sha256 = request.arguments_sha256();
            let decision = self.inner.approve(request).await;
            (self.sink)(SessionEvent::Approval {
                call,
                tool,
                requester,
                approved: decision == ApprovalDecision::Approved,
                decider: self.inner.decider(),
                definition,
                arguments_sha256,
            });
            decision
        })
    }

    fn decider(&self) -> &'static str {
        self.inner.decider()
    }
}
