//! The Lead: the one agent whose pool holds MCP management and exposed MCP tools.
//! Each model request is built from a fresh registry snapshot, and the calls in
//! its reply resolve against that same snapshot (a tool connected in a reply is
//! offered from the next request).

use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use super::conversation::{Block, Message, ResultPart, Role, ToolCall, ToolDef};
use super::events::{AgentEvents, AgentId, CallTarget, TurnEnd};
use super::model::{BoxFuture, ModelProvider};
use super::prompts;
use super::runner::{Journal, Runner};
use super::subagent::{AgentSettings, Crew, ReadOnlyTools};
use super::toolbox::{self, Concurrency, ToolBox, ToolRun};
use super::tools::{Builtins, LEAD_ONLY, READ_ONLY, lead_only, str_arg};
use crate::mcp::names::EXPOSED_PREFIX;
use crate::mcp::{Approver, CallIdentity, Effect, Hub, Snapshot, ToolError, ToolErrorCode};

/// The Lead's pool: built-ins + MCP management + the snapshot's exposed tools.
pub struct LeadTools {
    builtins: Arc<Builtins>,
    readonly: ReadOnlyTools,
    hub: Hub,
    approver: Arc<dyn Approver>,
    crew: Arc<Crew>,
    /// Which MCP tools each request carries when there are too many for one.
    search: super::search::ToolSearch,
}

impl LeadTools {
    pub fn new(
        hub: Hub,
        crew: Arc<Crew>,
        effects: &std::collections::BTreeMap<String, Effect>,
    ) -> Self {
        let names: Vec<&str> = READ_ONLY.iter().chain(LEAD_ONLY).copied().collect();
        let builtins = Arc::new(Builtins::new(&names, effects));
        let readonly = ReadOnlyTools {
            builtins: Arc::clone(&builtins),
            workspace: crew.workspace.clone(),
            approver: Arc::clone(&crew.approver),
            agent: AgentId::Lead,
            flows: Some(hub.clone()),
        };
        Self {
            builtins,
            readonly,
            hub,
            approver: Arc::clone(&crew.approver),
            crew,
            search: super::search::ToolSearch::default(),
        }
    }

    async fn run_lead_only(
        &self,
        call: &ToolCall,
        identity: &CallIdentity,
        snapshot: &Snapshot,
        cancel: &CancellationToken,
    ) -> Option<ToolRun> {
        let tool = self
            .builtins
            .get(&call.name)
            .filter(|t| LEAD_ONLY.contains(&t.name))?;
        let started = std::time::Instant::now();
        let admission = tool.admit(call, identity, self.approver.as_ref()).await;
        let decision = admission.decision;
        let arguments = match admission.arguments {
            Ok(a) => a,
            Err(e) => return Some(ToolRun::decided(Err(e), decision)),
        };
        if tool.name == "read_mcp_resource" {
            let outcome = self
                .hub
                .read_resource(
                    str_arg(&arguments, "alias"),
                    str_arg(&arguments, "uri"),
                    self.approver.as_ref(),
                    identity,
                )
                .await;
            let mut run = toolbox::from_mcp(outcome);
            run.elapsed = started.elapsed();
            return Some(run);
        }
        let mut server_output = None;
        let mut redacted = Vec::new();
        let text = match tool.name {
            "connect_mcp" => {
                let (text, said) =
                    lead_only::connect_mcp(&self.hub, str_arg(&arguments, "alias")).await;
                server_output = said;
                text
            }
            "disconnect_mcp" => lead_only::disconnect_mcp(&self.hub, str_arg(&arguments, "alias")),
            "list_mcp_servers" => Ok(lead_only::list_mcp_servers(&self.hub)),
            "list_mcp_resources" => {
                let listed = self.hub.list_resources(str_arg(&arguments, "alias")).await;
                server_output = listed.server_output;
                listed
                    .result
                    .map(|list| lead_only::resources_text(str_arg(&arguments, "alias"), &list))
            }
            "read_result" => {
                let (text, withheld) = lead_only::read_result(&self.hub, &arguments, identity);
                server_output = withheld.for_operator();
                redacted = withheld.kinds();
                text
            }
            "search_tools" => Ok(self.search.search(snapshot, str_arg(&arguments, "query"))),
            "spawn_subagent" => self.crew.spawn(str_arg(&arguments, "task"), cancel).await,
            _ => {
                self.crew
                    .ask(
                        str_arg(&arguments, "name"),
                        str_arg(&arguments, "message"),
                        cancel,
                    )
                    .await
            }
        };
        let mut run = ToolRun::decided(text.map(|text| vec![ResultPart::Text { text }]), decision);
        run.server_output = server_output;
        run.redacted = redacted;
        run.elapsed = started.elapsed();
        Some(run)
    }
}

impl LeadTools {
    /// Counts `name` as used now: requests that cannot carry every tool carry
    /// the ones used last (what a call does; for benchmarks of a steady state).
    pub fn remember(&self, name: &str) {
        self.search.touch(name);
    }
}

impl ToolBox for LeadTools {
    fn definitions(&self, snapshot: &Snapshot) -> Vec<ToolDef> {
        let limits = self.hub.limits();
        let offer = self.search.offer(
            snapshot,
            limits.max_tools_in_request,
            limits.max_tool_tokens_in_request,
        );
        let mcp = offer.tools.iter().map(|t| ToolDef {
            name: t.name.clone(),
            description: t.description.clone().unwrap_or_default(),
            input_schema: std::sync::Arc::clone(&t.model_schema),
        });
        let builtins = self.builtins.definitions().filter_map(|mut def| {
            if def.name != super::search::SEARCH_TOOL {
                return Some(def);
            }
            // Only when some tools are left out, and saying how many.
            offer.search.then(|| {
                def.description = format!(
                    "{} This request carries {} of the {} MCP tools connected.",
                    def.description,
                    offer.tools.len(),
                    offer.exposed
                );
                def
            })
        });
        builtins.chain(mcp).collect()
    }

    fn describe(&self, name: &str, snapshot: &Snapshot) -> (CallTarget, Option<Effect>) {
        if let Some(tool) = self.builtins.get(name) {
            return (CallTarget::Builtin, Some(tool.effect));
        }
        match snapshot.resolve(name) {
            Some(t) => (
                CallTarget::Mcp {
                    alias: t.alias.to_string(),
                    remote_name: t.remote_name.clone(),
                },
                Some(t.effect),
            ),
            None => (CallTarget::Unknown, None),
        }
    }

    /// A reply's calls to MCP servers run together; a built-in runs alone,
    /// in the reply's order: connect_mcp and disconnect_mcp change which
    /// servers the later calls reach (a reply that disconnects a server, then
    /// calls it, gets what a sequential run gives), list_mcp_servers and
    /// read_result report what the calls before them left, spawn_subagent and
    /// ask_teammate run agents whose model requests must not interleave, and
    /// the rest are local and quick (nothing to gain). An unknown name runs
    /// alone too (it fails at once).
    fn concurrency(&self, name: &str, snapshot: &Snapshot) -> Concurrency {
        match snapshot.resolve(name) {
            Some(tool) if self.builtins.get(name).is_none() => Concurrency::Server {
                alias: tool.alias.to_string(),
                limit: self.hub.max_concurrent_calls(tool.alias.as_str()),
            },
            _ => Concurrency::Alone,
        }
    }

    fn run<'a>(
        &'a self,
        call: &'a ToolCall,
        identity: &'a CallIdentity,
        snapshot: &'a Snapshot,
        cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, ToolRun> {
        Box::pin(async move {
            if let Some(run) = self.readonly.run_builtin(call, identity).await {
                return run;
            }
            if let Some(run) = self.run_lead_only(call, identity, snapshot, cancel).await {
                return run;
            }
            if call.name.starts_with(EXPOSED_PREFIX) {
                if snapshot.resolve(&call.name).is_some() && !self.search.offered(&call.name) {
                    // Rule 6: a reply calls only what its own request offered.
                    self.search.touch(&call.name);
                    return ToolRun::local(Err(ToolError::new(
                        ToolErrorCode::McpUnknownTool,
                        format!(
                            "`{}` is not in this request's tool set (there are too many tools for one \
                             request); it is offered from your next request",
                            call.name
                        ),
                    )));
                }
                self.search.touch(&call.name);
                let outcome = self
                    .hub
                    .call_as(
                        snapshot,
                        &call.name,
                        call.input.clone(),
                        self.approver.as_ref(),
                        identity,
                    )
                    .await;
                return toolbox::from_mcp(outcome);
            }
            ToolRun::local(Err(ToolError::new(
                ToolErrorCode::McpUnknownTool,
                format!(
                    "there is no tool named `{}` in this request's tool set",
                    call.name
                ),
            )))
        })
    }
}

/// The Lead agent and its conversation.
pub struct Lead {
    pub conversation: Vec<Message>,
    pub model: Arc<dyn ModelProvider>,
    pub tools: LeadTools,
    pub hub: Hub,
    pub events: AgentEvents,
    pub journal: Arc<dyn Journal>,
    pub settings: AgentSettings,
}

impl Lead {
    /// Adds the operator's text and runs the turn.
    pub async fn send(&mut self, text: &str, cancel: &CancellationToken) -> TurnEnd {
        let text = text.to_string();
        self.send_blocks(vec![Block::Text { text }], cancel).await
    }

    /// Adds the operator's message (their text, and server content they brought
    /// in) and runs the turn. A previous turn that failed or was interrupted
    /// before the model answered left a user message last; these join it, so
    /// roles keep alternating.
    pub async fn send_blocks(&mut self, blocks: Vec<Block>, cancel: &CancellationToken) -> TurnEnd {
        self.journal.message(
            &AgentId::Lead,
            &Message {
                role: Role::User,
                content: blocks.clone(),
            },
        );
        match self.conversation.last_mut() {
            Some(last) if last.role == Role::User => last.content.extend(blocks),
            _ => self.conversation.push(Message {
                role: Role::User,
                content: blocks,
            }),
        }
        self.run(cancel).await
    }

    /// Runs the conversation again as it stands (after a failed turn).
    pub async fn retry(&mut self, cancel: &CancellationToken) -> TurnEnd {
        if self
            .conversation
            .last()
            .is_none_or(|m| m.role != Role::User)
        {
            return TurnEnd::Completed;
        }
        self.run(cancel).await
    }

    async fn run(&mut self, cancel: &CancellationToken) -> TurnEnd {
        let hub = self.hub.clone();
        // Lists that expired (`ttlMs`) are re-listed before a request uses them.
        let snapshot = move || -> futures::future::BoxFuture<'static, Snapshot> {
            let hub = hub.clone();
            Box::pin(async move { hub.fresh_snapshot().await })
        };
        let runner = Runner {
            agent: AgentId::Lead,
            model: self.model.as_ref(),
            tools: &self.tools,
            snapshot: &snapshot,
            system: prompts::LEAD,
            max_tokens: self.settings.max_tokens,
            context_tokens: self.settings.context_tokens,
            max_steps: self.settings.max_steps,
            events: &self.events,
            journal: self.journal.as_ref(),
            cancel,
        };
        runner.run(&mut self.conversation).await
    }
}
