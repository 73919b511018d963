//! The call path: snapshot lookup → argument validation (nothing is sent when
//! invalid) → policy and approval → the call with its timeout → result or a
//! locally built error envelope.

mod errors;
mod exchange;
pub mod tasks;

use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use serde_json::{Map, Value};

use self::exchange::CallFailure;
use super::approver::{ApprovalDecision, ApprovalRequest, Approver};
use super::connection::RequestError;
use super::envelope::{ToolError, ToolErrorCode as Code};
use super::events::{McpEvent, RevokeCause};
use super::flows::{FlowVerdict, Label, Labels};
use super::hub::Hub;
use super::names::exposed_name;
use super::nulls;
use super::observe::{CallRecord, Decision};
use super::policy::Effect;
use super::registry::{ExposedTool, Snapshot};
pub use super::result::ToolOutput;
use super::result::{finish_result, parse_value, text_of};
use super::schema;
use super::spill::Spilled;
use crate::protocol::{CallId, Requester};

/// Which call this is and who asked for it: made where the call is proposed
/// (the agent's loop, the operator's hand, a headless command) and carried,
/// as values, to its approval, its task and progress events, its outcome and
/// its audit record. Nothing downstream works it out again from names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallIdentity {
    pub id: CallId,
    pub requester: Requester,
}

impl CallIdentity {
    pub fn new(id: impl Into<CallId>, requester: Requester) -> Self {
        Self {
            id: id.into(),
            requester,
        }
    }

    /// A call of the Lead's with this id.
    pub fn lead(id: impl Into<CallId>) -> Self {
        Self::new(id, Requester::Lead)
    }
}

/// The whole outcome of one call.
#[derive(Debug, Clone)]
pub struct CallOutcome {
    /// The call it is the outcome of.
    pub id: CallId,
    pub result: Result<ToolOutput, ToolError>,
    /// How the policy and the operator decided it (made by the hub, on the way).
    pub decision: Decision,
    /// What the server said that the model must not see (an `isError` text, a
    /// JSON-RPC error message). For the operator, shown as server output.
    pub server_output: Option<String>,
    /// Time spent on the wire (zero when nothing was sent).
    pub elapsed: Duration,
    /// Arguments the harness left out before validation: `null`s the schema
    /// does not admit at optional properties (JSON pointers).
    pub dropped_nulls: Vec<String>,
}

/// What the pipeline found, before it is tied to its call.
struct Settled {
    result: Result<ToolOutput, ToolError>,
    decision: Decision,
    server_output: Option<String>,
    elapsed: Duration,
    dropped_nulls: Vec<String>,
}

impl Settled {
    fn local(error: ToolError, decision: Decision) -> Self {
        Self {
            result: Err(error),
            decision,
            server_output: None,
            elapsed: Duration::ZERO,
            dropped_nulls: Vec::new(),
        }
    }
}

impl Hub {
    /// Runs one call of `name` (an exposed name) against `snapshot`, the tool set
    /// of the model request this call belongs to: a call of a headless command
    /// (recorded as the Lead's, the harness's one agent), under a fresh id.
    pub async fn call(
        &self,
        snapshot: &Snapshot,
        name: &str,
        arguments: Value,
        approver: &dyn Approver,
    ) -> CallOutcome {
        let call = CallIdentity::new(CallId::mint("call"), Requester::Lead);
        self.call_as(snapshot, name, arguments, approver, &call)
            .await
    }

    /// [`Hub::call`] for `call` (an agent's call: the model's tool-use id): a
    /// result over `max_result_bytes` is saved as `results/CALL_ID.txt`, and its
    /// approval request, task and progress events name this call.
    pub async fn call_as(
        &self,
        snapshot: &Snapshot,
        name: &str,
        arguments: Value,
        approver: &dyn Approver,
        call: &CallIdentity,
    ) -> CallOutcome {
        let observer = self.inner.events.observer().cloned();
        let kept = observer
            .as_ref()
            .filter(|o| o.wants_arguments())
            .map(|_| arguments.clone());
        let (started, clock) = (SystemTime::now(), Instant::now());
        let settled = self
            .decide_and_send(snapshot, name, arguments, approver, call)
            .await;
        if let Some(observer) = observer {
            let latency = clock.elapsed();
            let tool = snapshot.resolve(name);
            let error = settled.result.as_ref().err();
            observer.call(&CallRecord {
                id: &call.id,
                tool: name,
                alias: tool
                    .map(|t| t.alias.as_str())
                    .or_else(|| error.and_then(|e| e.alias.as_deref())),
                remote_name: tool.map(|t| t.remote_name.as_str()),
                effect: tool
                    .map(|t| t.effect)
                    .or((settled.decision == Decision::DeniedByPolicy).then_some(Effect::Deny)),
                decision: settled.decision,
                requester: &call.requester,
                outcome: error.map_or(Ok(()), |e| Err(e.code)),
                started,
                latency,
                arguments: kept.as_ref(),
            });
        }
        CallOutcome {
            id: call.id.clone(),
            result: settled.result,
            decision: settled.decision,
            server_output: settled.server_output,
            elapsed: settled.elapsed,
            dropped_nulls: settled.dropped_nulls,
        }
    }

    /// The pipeline; its `decision` says how far the policy and the operator got.
    async fn decide_and_send(
        &self,
        snapshot: &Snapshot,
        name: &str,
        arguments: Value,
        approver: &dyn Approver,
        call: &CallIdentity,
    ) -> Settled {
        let Some(tool) = snapshot.resolve(name) else {
            let error = self.unresolved(snapshot, name, &call.requester);
            let decision = if error.code == Code::McpPermissionDenied {
                Decision::DeniedByPolicy
            } else {
                Decision::NotRun
            };
            return Settled::local(error, decision);
        };
        let tool = Arc::clone(tool);
        let envelope = |code, message: String| {
            ToolError::new(code, message).for_tool(tool.alias.as_str(), &tool.name)
        };
        let mut arguments = if arguments.is_null() {
            Value::Object(Map::new())
        } else {
            arguments
        };
        let dropped = nulls::drop_refused_nulls(&tool.validator, &mut arguments);
        let mut errors = schema::validate(&tool.validator, &arguments);
        // Keys the schema does not declare (and would admit): refused too.
        let undeclared: Vec<String> = match (&tool.declared, arguments.as_object()) {
            (Some(declared), Some(given)) => {
                let keys = declared.undeclared(given);
                errors.extend(declared.errors(&keys));
                keys.into_iter()
                    .map(|k| crate::sanitize::for_model_line(k, 80))
                    .collect()
            }
            _ => Vec::new(),
        };
        if !errors.is_empty() {
            let message = if errors.len() == undeclared.len() {
                format!(
                    "the arguments include parameters the input schema of `{}` does not declare; \
                     nothing was sent",
                    tool.name
                )
            } else {
                format!(
                    "the arguments do not match the input schema of `{}`; nothing was sent",
                    tool.name
                )
            };
            let mut error = envelope(Code::McpInvalidArguments, message);
            error.errors = errors;
            error.undeclared = undeclared.into_boxed_slice();
            let mut outcome = Settled::local(error, Decision::RefusedBySchema);
            outcome.dropped_nulls = dropped;
            return outcome;
        }
        // Never ask the operator about a call that cannot happen.
        if let Some(error) = self.gone(&tool) {
            return Settled::local(error, Decision::NotRun);
        }
        // Flow control (rule 20): a sink in a tainted session is asked about
        // (or refused) whatever its policy says. No labels: one bit test.
        let labels = if super::flows::checks_off() {
            Labels::NONE
        } else {
            self.labels(&tool.alias, &tool.remote_name)
        };
        let flow = match self.inner.flows.check(&call.requester, labels) {
            None => None,
            Some(FlowVerdict::Deny(reason)) => {
                self.inner.events.emit(McpEvent::FlowDenied {
                    call: call.id.clone(),
                    tool: tool.name.clone(),
                    alias: tool.alias.clone(),
                    rule: reason.rule,
                    tainted_by: reason.tainted_by.clone(),
                });
                let denied = envelope(
                    Code::McpFlowDenied,
                    format!(
                        "`{}` was refused by local flow control ({reason}; [flows] on_trifecta = \
                         \"deny\"); nothing was sent",
                        tool.name
                    ),
                );
                return Settled::local(denied, Decision::DeniedByFlow);
            }
            Some(FlowVerdict::Escalate(reason)) => {
                self.inner.events.emit(McpEvent::FlowEscalated {
                    call: call.id.clone(),
                    tool: tool.name.clone(),
                    alias: tool.alias.clone(),
                    rule: reason.rule,
                    tainted_by: reason.tainted_by.clone(),
                });
                Some(reason)
            }
        };
        let decision = if tool.effect == Effect::Confirm || flow.is_some() {
            let request = ApprovalRequest {
                call: call.id.clone(),
                requester: call.requester.clone(),
                tool: tool.name.clone(),
                alias: Some(tool.alias.clone()),
                remote_name: Some(tool.remote_name.clone()),
                arguments: arguments.clone(),
                effect: tool.effect,
                definition: tool.definition.clone(),
                flow,
            };
            let decider = approver.decider();
            if let ApprovalDecision::Denied { reason } = approver.approve(request).await {
                // A prompt withdrawn because its tool was revoked meanwhile:
                // the truth is that the server is gone, not that anyone denied
                // (no decision was made).
                if let Some(error) = self.gone(&tool) {
                    return Settled::local(error, Decision::NotRun);
                }
                let denied = envelope(Code::McpPermissionDenied, reason);
                return Settled::local(denied, Decision::Denied { decider });
            }
            Decision::Approved { decider }
        } else {
            Decision::Allow
        };
        // The connection may have ended while the operator was deciding: the
        // call never ran.
        if let Some(error) = self.gone(&tool) {
            return Settled::local(error, Decision::NotRun);
        }
        let Value::Object(arguments) = arguments else {
            // Unreachable: the schema requires an object.
            return Settled::local(
                envelope(
                    Code::McpInvalidArguments,
                    "arguments must be an object".into(),
                ),
                Decision::RefusedBySchema,
            );
        };
        let mut outcome = self.send(&tool, arguments, call).await;
        outcome.decision = decision;
        outcome.dropped_nulls = dropped;
        if let Ok(output) = &outcome.result {
            // What the session has now read; a withheld credential is private data.
            let labels = if output.redacted.is_empty() {
                labels
            } else {
                Labels::of(&[Label::PrivateData]).with(labels)
            };
            self.tainted(&call.requester, &call.id, &tool.name, labels);
        }
        outcome
    }

    async fn send(
        &self,
        tool: &ExposedTool,
        arguments: Map<String, Value>,
        call: &CallIdentity,
    ) -> Settled {
        let call_id = &call.id;
        let envelope = |code, message: String| {
            ToolError::new(code, message).for_tool(tool.alias.as_str(), &tool.name)
        };
        let conn = &tool.connection;
        let started = Instant::now();
        let settled = exchange::call(conn, tool, arguments, self.limits(), call).await;
        let elapsed = started.elapsed();
        let (result, server_output) = match settled {
            Ok((raw, spilled)) => self.finish(tool, raw, spilled, call_id).await,
            Err(CallFailure::Request(error)) => self.request_failed(tool, error),
            Err(CallFailure::Protocol(problem)) => (
                Err(envelope(
                    Code::McpRemoteError,
                    format!(
                        "the call to `{}` broke the protocol: {problem}; the connection is kept",
                        tool.name
                    ),
                )),
                None,
            ),
            Err(CallFailure::TaskTimeout(after)) => (
                Err(envelope(
                    Code::McpTaskTimeout,
                    format!(
                        "`{}` ran as a task and did not finish within {} ms (task_timeout_ms); the task \
                         was cancelled, the connection is kept",
                        tool.name,
                        after.as_millis()
                    ),
                )),
                None,
            ),
            Err(CallFailure::TaskFailed { code, message }) => (
                Err(envelope(
                    Code::McpRemoteError,
                    format!(
                        "`{}` ran as a task and the task failed (JSON-RPC error {code}); the connection \
                         is kept",
                        tool.name
                    ),
                )),
                (!message.is_empty()).then_some(message),
            ),
        };
        Settled {
            result,
            decision: Decision::NotRun,
            server_output,
            elapsed,
            dropped_nulls: Vec::new(),
        }
    }

    /// A result: the tool's error, a result that breaks its `outputSchema`, or
    /// what the model gets (capped at `max_result_bytes`; the whole text saved
    /// as `results/CALL_ID.txt` when it is longer).
    async fn finish(
        &self,
        tool: &ExposedTool,
        raw: Value,
        spilled: Option<Spilled>,
        call_id: &CallId,
    ) -> (Result<ToolOutput, ToolError>, Option<String>) {
        let envelope = |code, message: String| {
            ToolError::new(code, message).for_tool(tool.alias.as_str(), &tool.name)
        };
        let parsed = match parse_value(raw) {
            Ok(parsed) => parsed,
            Err(problem) => {
                return (
                    Err(envelope(
                        Code::McpRemoteError,
                        format!("`{}` returned a malformed result", tool.name),
                    )),
                    Some(problem.to_string()),
                );
            }
        };
        if parsed.is_error {
            return (
                Err(envelope(
                    Code::McpRemoteError,
                    format!(
                        "`{}` reported an error. Its error text is withheld from the model; \
                         the operator can see it. The connection is kept.",
                        tool.name
                    ),
                )),
                Some(text_of(&parsed.content)),
            );
        }
        if let Some(validator) = &tool.output_validator {
            let problems = match &parsed.structured {
                None => vec!["(no structuredContent at all)".to_string()],
                Some(structured) => schema::validate(validator, structured)
                    .into_iter()
                    .map(|e| {
                        format!(
                            "{}: {}",
                            if e.instance_path.is_empty() {
                                "/"
                            } else {
                                &e.instance_path
                            },
                            e.message
                        )
                    })
                    .collect(),
            };
            if !problems.is_empty() {
                return (
                    Err(envelope(
                        Code::McpRemoteError,
                        format!(
                            "the structured result of `{}` does not match the outputSchema it declares \
                             ({} problem{}); the result was withheld, the connection is kept",
                            tool.name,
                            problems.len(),
                            if problems.len() == 1 { "" } else { "s" }
                        ),
                    )),
                    Some(format!(
                        "structuredContent does not match the outputSchema:\n{}",
                        problems.join("\n")
                    )),
                );
            }
        }
        let finished = finish_result(
            parsed,
            spilled,
            self.limits().max_result_bytes,
            self.results_dir(),
            call_id.to_string(),
        )
        .await;
        match finished {
            Ok((output, withheld)) => {
                if !withheld.is_empty() {
                    self.inner.events.emit(McpEvent::Redacted {
                        alias: Some(tool.alias.clone()),
                        call: Some(call_id.clone()),
                        tool: tool.name.clone(),
                        kinds: output.redacted.clone(),
                    });
                }
                (Ok(output), withheld.for_operator())
            }
            Err(e) => (
                Err(envelope(
                    Code::McpRemoteError,
                    format!("the result of `{}` could not be read", tool.name),
                )),
                Some(format!("mcp-harness: {e}")),
            ),
        }
    }
}
