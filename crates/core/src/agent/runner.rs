//! The loop every agent runs (seed 000 §9): take a registry snapshot, send the
//! conversation and that snapshot's tools, append the reply, run the tool calls
//! of the reply against the same snapshot (together, started in the reply's
//! order; all results in one user turn, in that order), and repeat until the
//! model stops.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use futures::future::BoxFuture;
use serde_json::json;
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;

use super::compaction;
use super::conversation::{Block, Message, ResultPart, Role, ToolCall, ToolResult};
use super::events::{AgentEvent, AgentEvents, AgentId, TurnEnd};
use super::model::{ModelProvider, ModelRequest, StreamEvent};
use super::toolbox::{Concurrency, ToolBox, ToolRun};
use crate::mcp::{CallIdentity, Requester, Snapshot, ToolError, ToolErrorCode};

/// Where messages are recorded as they happen (the session transcript).
pub trait Journal: Send + Sync {
    fn message(&self, agent: &AgentId, message: &Message);
    fn notice(&self, agent: &AgentId, text: &str);
}

/// A journal that records nothing.
pub struct NoJournal;

impl Journal for NoJournal {
    fn message(&self, _: &AgentId, _: &Message) {}
    fn notice(&self, _: &AgentId, _: &str) {}
}

/// One agent's loop and everything it needs.
pub struct Runner<'a> {
    pub agent: AgentId,
    pub model: &'a dyn ModelProvider,
    pub tools: &'a dyn ToolBox,
    /// The current registry snapshot (taken once per model request).
    /// (A future: lists that expired, `ttlMs`, are re-listed first.)
    pub snapshot: &'a (dyn Fn() -> BoxFuture<'static, Snapshot> + Send + Sync),
    pub system: &'a str,
    pub max_tokens: u32,
    /// Rough context window in tokens; the conversation is compacted to fit.
    pub context_tokens: u64,
    pub max_steps: u32,
    pub events: &'a AgentEvents,
    pub journal: &'a dyn Journal,
    pub cancel: &'a CancellationToken,
}

impl Runner<'_> {
    /// Runs until the model ends its turn, the operator interrupts, the provider
    /// fails or the step limit is reached. The conversation stays well-formed in
    /// every case: each tool call in it has a result.
    pub async fn run(&self, conversation: &mut Vec<Message>) -> TurnEnd {
        let end = self.steps(conversation).await;
        self.events.emit(AgentEvent::TurnDone {
            agent: self.agent.clone(),
            end: end.clone(),
        });
        end
    }

    async fn steps(&self, conversation: &mut Vec<Message>) -> TurnEnd {
        for _ in 0..self.max_steps {
            let snapshot = (self.snapshot)().await;
            let tools = self.tools.definitions(&snapshot);
            if let Some(notice) =
                compaction::fit(conversation, self.system, &tools, self.context_tokens)
            {
                self.notice(&notice);
            }
            let searched = tools.iter().any(|t| t.name == super::search::SEARCH_TOOL);
            self.events.emit(AgentEvent::Request {
                agent: self.agent.clone(),
                snapshot_version: snapshot.version(),
                tools: tools.len(),
                offered: tools.iter().map(|t| t.name.clone()).collect(),
                searched_from: searched.then(|| snapshot.tools().len()),
            });
            let request = ModelRequest {
                system: self.system,
                messages: conversation,
                tools: &tools,
                max_tokens: self.max_tokens,
            };
            let (events, agent) = (self.events, self.agent.clone());
            let mut on_event = move |event: StreamEvent| {
                if let StreamEvent::TextDelta(text) = event {
                    events.emit(AgentEvent::TextDelta {
                        agent: agent.clone(),
                        text,
                    });
                }
            };
            // Cancellation first: an interrupt that raced the last tool result must
            // not let one more request reach the model.
            if self.cancel.is_cancelled() {
                self.notice("interrupted by the operator before the next model request");
                return TurnEnd::Interrupted;
            }
            let reply = tokio::select! {
                biased;
                _ = self.cancel.cancelled() => {
                    self.notice("interrupted by the operator while the model was answering");
                    return TurnEnd::Interrupted;
                }
                reply = self.model.complete(request, &mut on_event) => reply,
            };
            let reply = match reply {
                Ok(reply) => reply,
                Err(error) => {
                    let message = error.to_string();
                    self.events.emit(AgentEvent::Error {
                        agent: self.agent.clone(),
                        message: message.clone(),
                    });
                    self.journal
                        .notice(&self.agent, &format!("model error: {message}"));
                    return TurnEnd::Failed { message };
                }
            };
            if reply.content.is_empty() {
                // Not stored: the Messages API rejects an assistant turn with no
                // content, so keeping it would make every later request fail.
                self.notice("the model ended its turn without any text or tool call");
                return TurnEnd::Completed;
            }
            let message = Message::assistant(reply.content);
            let text = message.text();
            if !text.is_empty() {
                self.events.emit(AgentEvent::AssistantText {
                    agent: self.agent.clone(),
                    text,
                });
            }
            let calls: Vec<ToolCall> = message.tool_calls().cloned().collect();
            let identities = identities(&calls, conversation, Requester::from(&self.agent));
            self.push(conversation, message);
            if calls.is_empty() {
                return TurnEnd::Completed;
            }
            let (results, interrupted) = self.run_calls(&calls, &identities, &snapshot).await;
            self.push(
                conversation,
                Message {
                    role: Role::User,
                    content: results,
                },
            );
            if interrupted {
                self.notice("interrupted by the operator; in-flight tool calls were cancelled");
                return TurnEnd::Interrupted;
            }
        }
        self.notice(&format!(
            "stopped after {} model requests in one turn (step limit)",
            self.max_steps
        ));
        TurnEnd::StepLimit {
            steps: self.max_steps,
        }
    }

    /// Runs the calls of one reply: its calls to servers together, each started
    /// in the reply's order (so `confirm` prompts queue in that order), at most
    /// `max_concurrent_calls` at once per server; a built-in alone, between
    /// them (see `ToolBox::concurrency`). The results go back in the reply's
    /// order. After an
    /// interruption the calls not yet started are not started; each still
    /// gets a result saying so.
    async fn run_calls(
        &self,
        calls: &[ToolCall],
        identities: &[CallIdentity],
        snapshot: &Snapshot,
    ) -> (Vec<Block>, bool) {
        let mut runs: Vec<Option<ToolRun>> = vec![None; calls.len()];
        let mut gates: HashMap<String, Arc<Semaphore>> = HashMap::new();
        let mut next = 0;
        while next < calls.len() && !self.cancel.is_cancelled() {
            // One batch: a call that runs alone, or the calls up to the next one.
            let alone =
                |i: usize| self.tools.concurrency(&calls[i].name, snapshot) == Concurrency::Alone;
            let end = if alone(next) {
                next + 1
            } else {
                (next..calls.len())
                    .find(|&i| alone(i))
                    .unwrap_or(calls.len())
            };
            let batch = (next..end).map(|i| {
                let gate = match self.tools.concurrency(&calls[i].name, snapshot) {
                    Concurrency::Server { alias, limit } => Some(Arc::clone(
                        gates
                            .entry(alias)
                            .or_insert_with(|| Arc::new(Semaphore::new(limit))),
                    )),
                    Concurrency::Alone => None,
                };
                self.run_one(&calls[i], &identities[i], snapshot, gate)
            });
            let done = futures::future::join_all(batch).await;
            for (slot, run) in runs[next..end].iter_mut().zip(done) {
                *slot = run;
            }
            next = end;
        }
        let mut results = Vec::with_capacity(calls.len());
        for ((call, identity), run) in calls.iter().zip(identities).zip(runs) {
            let run = match run {
                Some(run) => run,
                None => {
                    // Never started: the turn was interrupted first.
                    self.announce(call, identity, snapshot);
                    let run = ToolRun::local(Err(interruption(
                        call,
                        "the turn was interrupted before this call started",
                    )));
                    self.finished(call, identity, &run);
                    run
                }
            };
            results.push(Block::ToolResult(result_block(call, run)));
        }
        (results, self.cancel.is_cancelled())
    }

    /// One call of a reply: waits for its server's turn (`gate`), then runs
    /// until it ends or the turn is interrupted. `None`: interrupted before it
    /// started.
    async fn run_one(
        &self,
        call: &ToolCall,
        identity: &CallIdentity,
        snapshot: &Snapshot,
        gate: Option<Arc<Semaphore>>,
    ) -> Option<ToolRun> {
        let _permit = match gate {
            Some(gate) => tokio::select! {
                biased;
                _ = self.cancel.cancelled() => return None,
                permit = gate.acquire_owned() => permit.ok(),
            },
            None => None,
        };
        if self.cancel.is_cancelled() {
            return None;
        }
        self.announce(call, identity, snapshot);
        let started = std::time::Instant::now();
        let run = tokio::select! {
            biased;
            _ = self.cancel.cancelled() => {
                let mut run = ToolRun::local(Err(interruption(call, "interrupted by the operator; the call was cancelled")));
                // How long it ran before the operator stopped it.
                run.elapsed = started.elapsed();
                run
            }
            run = self.tools.run(call, identity, snapshot, self.cancel) => run,
        };
        self.finished(call, identity, &run);
        Some(run)
    }

    /// The call is about to run (approval, if needed, comes next).
    fn announce(&self, call: &ToolCall, identity: &CallIdentity, snapshot: &Snapshot) {
        let (origin, effect) = self.tools.describe(&call.name, snapshot);
        self.events.emit(AgentEvent::ToolCall {
            agent: self.agent.clone(),
            id: identity.id.clone(),
            name: call.name.clone(),
            arguments: call.input.clone(),
            origin,
            effect,
        });
    }

    fn finished(&self, call: &ToolCall, identity: &CallIdentity, run: &ToolRun) {
        self.events.emit(AgentEvent::ToolResult {
            agent: self.agent.clone(),
            id: identity.id.clone(),
            name: call.name.clone(),
            outcome: run
                .outcome
                .as_ref()
                .map(|parts| summary(parts))
                .map_err(Clone::clone),
            decision: run.decision,
            server_output: run.server_output.clone(),
            elapsed: run.elapsed,
            dropped_nulls: run.dropped_nulls.clone(),
            redacted: run.redacted.clone(),
        });
    }

    fn push(&self, conversation: &mut Vec<Message>, message: Message) {
        self.journal.message(&self.agent, &message);
        conversation.push(message);
    }

    fn notice(&self, text: &str) {
        self.events.emit(AgentEvent::Notice {
            agent: self.agent.clone(),
            text: text.to_string(),
        });
        self.journal.notice(&self.agent, text);
    }
}

fn interruption(call: &ToolCall, message: &str) -> ToolError {
    let mut error = ToolError::new(ToolErrorCode::Interrupted, message);
    error.tool = Some(call.name.clone());
    error
}

/// The block the model gets: the parts, or the envelope as JSON text.
fn result_block(call: &ToolCall, run: ToolRun) -> ToolResult {
    match run.outcome {
        Ok(content) => ToolResult {
            tool_use_id: call.id.clone(),
            content,
            is_error: false,
        },
        Err(error) => ToolResult {
            tool_use_id: call.id.clone(),
            content: vec![ResultPart::Text {
                text: json!({ "error": error }).to_string(),
            }],
            is_error: true,
        },
    }
}

/// A short text of what the model got, for the operator's view.
fn summary(parts: &[ResultPart]) -> String {
    parts
        .iter()
        .map(|p| match p {
            ResultPart::Text { text } => text.clone(),
            ResultPart::Image { media_type, data } => {
                format!("[image: {media_type}, {} bytes of base64]", data.len())
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The identity of each call of a reply: the model's tool-use id, unless this
/// conversation or this reply already used it (a model may repeat ids, a
/// scripted one does across acts). A repeated id becomes `ID#N`, so two calls
/// never share a `CallId` (approvals, tasks, progress and `results/ID.txt` are
/// keyed by it); the model still gets its own id back on the result.
fn identities(calls: &[ToolCall], earlier: &[Message], requester: Requester) -> Vec<CallIdentity> {
    let mut taken: HashSet<String> = earlier
        .iter()
        .flat_map(|m| m.tool_calls().map(|c| c.id.clone()))
        .collect();
    calls
        .iter()
        .map(|call| {
            let id = if taken.contains(&call.id) {
                (2u64..)
                    .map(|n| format!("{}#{n}", call.id))
                    .find(|id| !taken.contains(id))
                    .unwrap_or_default()
            } else {
                call.id.clone()
            };
            taken.insert(id.clone());
            CallIdentity::new(id.as_str(), requester.clone())
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(id: &str) -> ToolCall {
        ToolCall {
            id: id.into(),
            name: "t".into(),
            input: json!({}),
        }
    }

    #[test]
    fn a_repeated_tool_use_id_gets_an_identity_of_its_own() {
        let earlier = vec![Message::assistant(vec![Block::ToolUse(call("c1"))])];
        let ids: Vec<String> = identities(
            &[call("c1"), call("c2"), call("c2"), call("c3")],
            &earlier,
            Requester::Lead,
        )
        .into_iter()
        .map(|i| i.id.to_string())
        .collect();
        assert_eq!(ids, ["c1#2", "c2", "c2#2", "c3"]);
    }
}
