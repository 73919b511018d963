//! Subagents (fresh context, one task) and teammates (named, long-lived context).
//! Both get the read-only built-ins only — never MCP management or MCP tools,
//! whatever they ask for.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};

use tokio_util::sync::CancellationToken;

use super::conversation::{Message, ToolCall, ToolDef};
use super::events::{AgentEvents, AgentId, CallTarget, TurnEnd};
use super::model::{BoxFuture, ModelProvider};
use super::prompts;
use super::runner::{Journal, Runner};
use super::toolbox::{ToolBox, ToolRun};
use super::tools::readonly::Workspace;
use super::tools::{Builtins, READ_ONLY};
use crate::config::TeammateConfig;
use crate::mcp::{Approver, CallIdentity, Effect, Snapshot, ToolError, ToolErrorCode};

/// Limits every agent's loop shares.
#[derive(Debug, Clone, Copy)]
pub struct AgentSettings {
    pub max_tokens: u32,
    pub context_tokens: u64,
    pub max_steps: u32,
}

/// The read-only pool, on behalf of one agent.
pub struct ReadOnlyTools {
    pub builtins: Arc<Builtins>,
    pub workspace: Workspace,
    pub approver: Arc<dyn Approver>,
    pub agent: AgentId,
    /// Where a successful read taints its session (rule 20; `None`: no hub).
    pub flows: Option<crate::mcp::Hub>,
}

impl ReadOnlyTools {
    /// Runs `call` if it is one of the read-only built-ins in `builtins`.
    pub async fn run_builtin(&self, call: &ToolCall, identity: &CallIdentity) -> Option<ToolRun> {
        let tool = self
            .builtins
            .get(&call.name)
            .filter(|t| READ_ONLY.contains(&t.name))?;
        let started = std::time::Instant::now();
        let admission = tool.admit(call, identity, self.approver.as_ref()).await;
        let decision = admission.decision;
        let arguments = match admission.arguments {
            Ok(a) => a,
            Err(e) => return Some(ToolRun::decided(Err(e), decision)),
        };
        let (workspace, name) = (self.workspace.clone(), tool.name);
        let result = tokio::task::spawn_blocking(move || match name {
            "read_file" => workspace.read_file(&arguments),
            "list_dir" => workspace.list_dir(&arguments),
            _ => workspace.search_text(&arguments),
        })
        .await
        .unwrap_or_else(|e| {
            Err(ToolError::new(
                ToolErrorCode::ToolFailed,
                format!("the tool crashed: {e}"),
            ))
        });
        if result.is_ok()
            && let Some(hub) = &self.flows
        {
            // The built-ins read the workspace: the user's private data.
            let labels = crate::mcp::flows::builtin_labels(name);
            hub.tainted(&identity.requester, &identity.id, name, labels);
        }
        let mut run = ToolRun::decided(
            result.map(|text| vec![super::conversation::ResultPart::Text { text }]),
            decision,
        );
        run.elapsed = started.elapsed();
        Some(run)
    }
}

impl ToolBox for ReadOnlyTools {
    fn definitions(&self, _snapshot: &Snapshot) -> Vec<ToolDef> {
        self.builtins
            .definitions()
            .filter(|d| READ_ONLY.contains(&d.name.as_str()))
            .collect()
    }

    fn describe(&self, name: &str, _snapshot: &Snapshot) -> (CallTarget, Option<Effect>) {
        match self
            .builtins
            .get(name)
            .filter(|t| READ_ONLY.contains(&t.name))
        {
            Some(tool) => (CallTarget::Builtin, Some(tool.effect)),
            None => (CallTarget::Unknown, None),
        }
    }

    fn run<'a>(
        &'a self,
        call: &'a ToolCall,
        identity: &'a CallIdentity,
        _: &'a Snapshot,
        _: &'a CancellationToken,
    ) -> BoxFuture<'a, ToolRun> {
        Box::pin(async move {
            match self.run_builtin(call, identity).await {
                Some(run) => run,
                None => ToolRun::local(Err(ToolError::new(
                    ToolErrorCode::McpUnknownTool,
                    format!(
                        "`{}` is not available to {}: only read_file, list_dir and search_text are",
                        call.name, self.agent
                    ),
                ))),
            }
        })
    }
}

/// Everything needed to run subagents and teammates.
pub struct Crew {
    pub model: Arc<dyn ModelProvider>,
    pub approver: Arc<dyn Approver>,
    pub events: AgentEvents,
    pub journal: Arc<dyn Journal>,
    pub builtins: Arc<Builtins>,
    pub workspace: Workspace,
    pub settings: AgentSettings,
    pub teammates: Vec<TeammateConfig>,
    /// The hub whose flow book the crew's reads taint (see [`Crew::with_flows`]).
    flows: Option<crate::mcp::Hub>,
    memories: Mutex<HashMap<String, Arc<tokio::sync::Mutex<Vec<Message>>>>>,
    next_subagent: AtomicU32,
}

impl Crew {
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        model: Arc<dyn ModelProvider>,
        approver: Arc<dyn Approver>,
        events: AgentEvents,
        journal: Arc<dyn Journal>,
        builtin_effects: &std::collections::BTreeMap<String, Effect>,
        workspace: Workspace,
        settings: AgentSettings,
        teammates: Vec<TeammateConfig>,
    ) -> Self {
        Self {
            model,
            approver,
            events,
            journal,
            builtins: Arc::new(Builtins::new(READ_ONLY, builtin_effects)),
            workspace,
            settings,
            teammates,
            flows: None,
            memories: Mutex::new(HashMap::new()),
            next_subagent: AtomicU32::new(1),
        }
    }

    /// The crew's reads (and the Lead's built-in reads) taint the Lead's
    /// session in `hub`'s flow book: what a subagent read reaches the Lead.
    pub fn with_flows(mut self, hub: crate::mcp::Hub) -> Self {
        self.flows = Some(hub);
        self
    }

    pub fn flows(&self) -> Option<&crate::mcp::Hub> {
        self.flows.as_ref()
    }

    /// Runs a subagent on `task` with a fresh context; returns its final text.
    pub async fn spawn(&self, task: &str, cancel: &CancellationToken) -> Result<String, ToolError> {
        let agent = AgentId::Subagent(self.next_subagent.fetch_add(1, Ordering::Relaxed));
        let mut conversation = vec![Message::user_text(task)];
        self.journal.message(&agent, &conversation[0]);
        let end = self
            .run(agent.clone(), prompts::SUBAGENT, &mut conversation, cancel)
            .await;
        finish(&agent, end, &conversation)
    }

    /// Sends `message` to teammate `name`, who keeps its context between messages.
    pub async fn ask(
        &self,
        name: &str,
        message: &str,
        cancel: &CancellationToken,
    ) -> Result<String, ToolError> {
        let Some(config) = self.teammates.iter().find(|t| t.name == name) else {
            let known: Vec<&str> = self.teammates.iter().map(|t| t.name.as_str()).collect();
            let known = if known.is_empty() {
                "none are configured ([[teammates]])".into()
            } else {
                known.join(", ")
            };
            return Err(ToolError::new(
                ToolErrorCode::ToolFailed,
                format!("no teammate named `{name}`; teammates: {known}"),
            ));
        };
        let memory = {
            let mut memories = self.memories.lock().unwrap_or_else(|e| e.into_inner());
            Arc::clone(memories.entry(name.to_string()).or_default())
        };
        // One conversation at a time per teammate.
        let mut conversation = memory.lock().await;
        let agent = AgentId::Teammate(name.to_string());
        let turn = Message::user_text(message);
        self.journal.message(&agent, &turn);
        conversation.push(turn);
        let system = format!("{}\n\n{}", prompts::TEAMMATE_PREAMBLE, config.system_prompt);
        let end = self
            .run(agent.clone(), &system, &mut conversation, cancel)
            .await;
        finish(&agent, end, &conversation)
    }

    async fn run(
        &self,
        agent: AgentId,
        system: &str,
        conversation: &mut Vec<Message>,
        cancel: &CancellationToken,
    ) -> TurnEnd {
        let tools = ReadOnlyTools {
            builtins: Arc::clone(&self.builtins),
            workspace: self.workspace.clone(),
            approver: Arc::clone(&self.approver),
            agent: agent.clone(),
            flows: self.flows.clone(),
        };
        let no_mcp = || -> futures::future::BoxFuture<'static, Snapshot> {
            Box::pin(std::future::ready(Snapshot::default()))
        };
        let runner = Runner {
            agent,
            model: self.model.as_ref(),
            tools: &tools,
            snapshot: &no_mcp,
            system,
            max_tokens: self.settings.max_tokens,
            context_tokens: self.settings.context_tokens,
            max_steps: self.settings.max_steps,
            events: &self.events,
            journal: self.journal.as_ref(),
            cancel,
        };
        runner.run(conversation).await
    }
}

/// The agent's last text, or why there is none. A turn that completed with an
/// empty reply (which is not stored) has no answer, even if the agent spoke
/// before its last tool calls.
fn finish(agent: &AgentId, end: TurnEnd, conversation: &[Message]) -> Result<String, ToolError> {
    let assistant = |m: &&Message| m.role == super::conversation::Role::Assistant;
    let last = match end {
        TurnEnd::Completed => conversation.last().filter(assistant),
        _ => conversation.iter().rev().find(assistant),
    }
    .map(Message::text);
    match end {
        TurnEnd::Completed | TurnEnd::StepLimit { .. } => Ok(last
            .filter(|t| !t.is_empty())
            .unwrap_or_else(|| format!("({agent} gave no text answer)"))),
        TurnEnd::Interrupted => Err(ToolError::new(
            ToolErrorCode::Interrupted,
            format!("{agent} was interrupted by the operator"),
        )),
        TurnEnd::Failed { message } => Err(ToolError::new(
            ToolErrorCode::ToolFailed,
            format!("{agent} failed: {message}"),
        )),
    }
}
