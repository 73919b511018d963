//! What the backend remembers of each call (bounded): enough to say on its row
//! how it was decided, and to explain which local rule decided it.

use std::collections::{HashMap, HashSet, VecDeque};

use crate::agent::toolbox::ToolRun;
use crate::mcp::flows::FlowReason;
use crate::mcp::secrets::SecretKind;
use crate::mcp::{CallId, Decision, Effect, ToolErrorCode};
use crate::protocol::Decided;

/// Calls remembered for "explain" (the oldest are forgotten first).
const REMEMBERED: usize = 2_000;

/// One call as the backend saw it.
#[derive(Debug, Clone)]
pub struct CallRecord {
    /// The name the model (or the operator) called.
    pub name: String,
    pub alias: Option<String>,
    pub remote_name: Option<String>,
    /// A built-in tool (its effect comes from `[builtin_tools]`).
    pub builtin: bool,
    /// The local effect when it was called (`None`: not in the tool set).
    pub effect: Option<Effect>,
    /// When it started, `HH:MM:SS UTC`.
    pub at: String,
    pub decided: Option<Decided>,
    /// How it ended: the envelope's code, or `None` for a result.
    pub code: Option<ToolErrorCode>,
    pub message: Option<String>,
    /// The schema's complaints, when the arguments were refused.
    pub schema_errors: Vec<String>,
    pub elapsed_ms: Option<u64>,
    /// Kinds of credentials withheld from the model in its result.
    pub redacted: Vec<SecretKind>,
    /// Flow control escalated (`true`) or denied it, and why.
    pub flow: Option<(bool, FlowReason)>,
    /// The poisoning screen's hits on its tool's definition when it was
    /// called (a suspicious tool runs only once the operator accepted it).
    pub suspicious: std::sync::Arc<[crate::mcp::screen::Suspicion]>,
}

#[derive(Default)]
pub struct Records {
    calls: HashMap<CallId, CallRecord>,
    order: VecDeque<CallId>,
    /// Aliases whose connection was revoked because a tool's definition no
    /// longer matched its pin (until they connect again).
    pin_held: HashSet<String>,
}

impl Records {
    pub fn started(&mut self, id: &CallId, record: CallRecord) {
        if self.calls.insert(id.clone(), record).is_none() {
            self.order.push_back(id.clone());
        }
        while self.order.len() > REMEMBERED {
            if let Some(old) = self.order.pop_front() {
                self.calls.remove(&old);
            }
        }
    }

    /// Records how call `id` ended and returns how it was decided: the
    /// approval's word when there was a prompt (or a grant), otherwise the
    /// decision its run carries.
    pub fn finished(
        &mut self,
        id: &CallId,
        run: &ToolRun,
        approval: Option<Decided>,
    ) -> Option<Decided> {
        // A call that never ran because its server's tools were revoked for a
        // changed definition (its alias is the record's, or, for a tool no
        // longer in the registry, the one the envelope names).
        let held = |r: &CallRecord| {
            run.outcome.as_ref().is_err_and(|e| {
                matches!(
                    e.code,
                    ToolErrorCode::McpNotConnected | ToolErrorCode::McpUnknownTool
                ) && r
                    .alias
                    .as_ref()
                    .or(e.alias.as_ref())
                    .is_some_and(|a| self.pin_held.contains(a))
            })
        };
        let held = self.calls.get(id).is_some_and(held);
        let record = self.calls.get_mut(id)?;
        if record.alias.is_none()
            && let Err(e) = &run.outcome
        {
            record.alias.clone_from(&e.alias);
        }
        let decided = match approval.unwrap_or_else(|| decided(run.decision)) {
            // It never ran because its definition no longer matched its pin.
            Decided::NotRun | Decided::NotApproved if held => Decided::HeldByPin,
            other => other,
        };
        record.decided = Some(decided);
        record.redacted.clone_from(&run.redacted);
        record.elapsed_ms = Some(run.elapsed.as_millis().try_into().unwrap_or(u64::MAX));
        if let Err(error) = &run.outcome {
            record.code = Some(error.code);
            record.message = Some(error.message.clone());
            record.schema_errors = error
                .errors
                .iter()
                .map(|e| {
                    let at = if e.instance_path.is_empty() {
                        "the arguments".to_string()
                    } else {
                        format!("`{}`", e.instance_path)
                    };
                    format!("{at}: {}", e.message)
                })
                .collect();
        }
        Some(decided)
    }

    /// Flow control escalated (`escalated`) or denied call `id`.
    pub fn flow(&mut self, id: &CallId, escalated: bool, reason: FlowReason) {
        if let Some(record) = self.calls.get_mut(id) {
            record.flow = Some((escalated, reason));
        }
    }

    pub fn get(&self, id: &CallId) -> Option<&CallRecord> {
        self.calls.get(id)
    }

    /// `alias`'s connection was revoked for `definition_changed`.
    pub fn pin_violated(&mut self, alias: &str) {
        self.pin_held.insert(alias.to_string());
    }

    /// `alias` connected again (its tools matched their pins).
    pub fn connected(&mut self, alias: &str) {
        self.pin_held.remove(alias);
    }
}

/// How a call with no prompt was decided, as its protocol words.
fn decided(decision: Decision) -> Decided {
    match decision {
        Decision::NotRun => Decided::NotRun,
        Decision::RefusedBySchema => Decided::RefusedBySchema,
        Decision::DeniedByPolicy => Decided::DeniedByPolicy,
        Decision::DeniedByFlow => Decided::DeniedByFlow,
        Decision::Allow => Decided::AllowedByPolicy,
        // A `confirm` call goes through a prompt (recorded there); without
        // one (a flag decided), it is the same words.
        Decision::Approved { .. } => Decided::ApprovedOnce,
        Decision::Denied { .. } => Decided::NotApproved,
    }
}
