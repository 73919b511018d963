//! Flow control (SPEC rule 20): local labels on tools, the taint a session
//! gathers as labelled calls succeed, and the check a sink call meets.
//!
//! A session is the Lead's conversation (the Lead, its subagents and
//! teammates: what they read reaches the Lead) or one outside client's; the
//! operator's own calls by hand taint nothing and are never escalated (the
//! operator is the one a prompt would ask). The book is consulted at the call
//! path's one chokepoint (`Hub::call_as`) after the policy step, and written
//! when an outcome succeeds; calls are named by their `CallId`, never matched
//! by name. Taint only grows: the model has no way to clear it, the operator
//! does (`Hub::clear_taint`, logged).

use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex, MutexGuard};

use serde::{Deserialize, Serialize};

use crate::protocol::{CallId, Requester};

/// The benchmark's switch: the same call with and without flow control, in
/// one run (`bench::set_flow_checks`). Not in the product.
#[cfg(feature = "bench-internals")]
pub(crate) static CHECKS_OFF: std::sync::atomic::AtomicBool =
    std::sync::atomic::AtomicBool::new(false);

/// Whether the call path skips flow control (only ever under the benchmark).
pub(crate) fn checks_off() -> bool {
    #[cfg(feature = "bench-internals")]
    return CHECKS_OFF.load(std::sync::atomic::Ordering::Relaxed);
    #[cfg(not(feature = "bench-internals"))]
    false
}

/// A local label of a tool (the set is fixed; a server's annotations are
/// claims and never set one).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Label {
    /// Its results may carry someone else's words (web pages, issues, mail).
    UntrustedContent,
    /// It reads the user's private data (files, private repos, vaults).
    PrivateData,
    /// It can send data out.
    ExternalSink,
}

impl Label {
    pub const ALL: [Label; 3] = [
        Label::UntrustedContent,
        Label::PrivateData,
        Label::ExternalSink,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Label::UntrustedContent => "untrusted_content",
            Label::PrivateData => "private_data",
            Label::ExternalSink => "external_sink",
        }
    }

    fn bit(self) -> u8 {
        match self {
            Label::UntrustedContent => 1,
            Label::PrivateData => 2,
            Label::ExternalSink => 4,
        }
    }
}

impl fmt::Display for Label {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A tool's labels: a set, checked with one bit test on the call path.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct Labels(u8);

impl Labels {
    pub const NONE: Labels = Labels(0);

    pub fn of(labels: &[Label]) -> Self {
        Labels(labels.iter().fold(0, |bits, l| bits | l.bit()))
    }

    /// Both sets.
    pub fn with(self, other: Labels) -> Self {
        Labels(self.0 | other.0)
    }

    pub fn contains(self, label: Label) -> bool {
        self.0 & label.bit() != 0
    }

    pub fn is_empty(self) -> bool {
        self.0 == 0
    }

    pub fn iter(self) -> impl Iterator<Item = Label> {
        Label::ALL.into_iter().filter(move |l| self.contains(*l))
    }
}

impl Serialize for Labels {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.iter())
    }
}

/// `[servers.ALIAS] labels` and `[servers.ALIAS.tool_labels]`: a tool's own
/// entry replaces the server's labels for that tool.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ToolLabels {
    pub server: Labels,
    pub tools: std::collections::BTreeMap<String, Labels>,
}

impl ToolLabels {
    /// The labels of the tool published as `remote_name`.
    pub fn of(&self, remote_name: &str) -> Labels {
        self.tools.get(remote_name).copied().unwrap_or(self.server)
    }
}

/// The fixed labels of the built-in tools: the ones that read the workspace
/// read the user's private data.
pub fn builtin_labels(name: &str) -> Labels {
    match name {
        "read_file" | "list_dir" | "search_text" => Labels::of(&[Label::PrivateData]),
        _ => Labels::NONE,
    }
}

/// Labels a tool's annotations suggest, with the claim that suggests them:
/// `openWorldHint: true` — it reaches the open world, so its results may carry
/// someone else's words, and unless it also claims `readOnlyHint: true` it may
/// send data out. Claims only: `policy ALIAS` prints them as comments for the
/// operator to weigh, never as labels.
pub fn suggested_labels(annotations: Option<&serde_json::Value>) -> Option<(Labels, String)> {
    let hint = |name: &str| {
        annotations
            .and_then(|a| a.get(name))
            .and_then(serde_json::Value::as_bool)
    };
    if hint("openWorldHint") != Some(true) {
        return None;
    }
    Some(if hint("readOnlyHint") == Some(true) {
        (
            Labels::of(&[Label::UntrustedContent]),
            "the server claims openWorldHint: true, readOnlyHint: true".into(),
        )
    } else {
        (
            Labels::of(&[Label::UntrustedContent, Label::ExternalSink]),
            "the server claims openWorldHint: true".into(),
        )
    })
}

/// What a sink call in a session holding both untrusted content and private
/// data meets (`[flows] on_trifecta`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OnTrifecta {
    /// Escalated to the operator's approval prompt, whatever its policy says.
    #[default]
    Confirm,
    /// Refused with `mcp_flow_denied`.
    Deny,
}

impl OnTrifecta {
    pub fn as_str(self) -> &'static str {
        match self {
            OnTrifecta::Confirm => "confirm",
            OnTrifecta::Deny => "deny",
        }
    }
}

/// What a sink call after untrusted content alone meets (`[flows] untrusted_sink`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum UntrustedSink {
    /// Nothing (the default): only the whole trifecta escalates.
    #[default]
    Allow,
    Confirm,
}

impl UntrustedSink {
    pub fn as_str(self) -> &'static str {
        match self {
            UntrustedSink::Allow => "allow",
            UntrustedSink::Confirm => "confirm",
        }
    }
}

/// `[flows]`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FlowSettings {
    pub on_trifecta: OnTrifecta,
    pub untrusted_sink: UntrustedSink,
}

/// Which session a call's data lands in.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
#[serde(tag = "kind", content = "name", rename_all = "snake_case")]
pub enum FlowScope {
    /// The Lead's conversation (the Lead, its subagents, its teammates).
    Lead,
    /// An outside client's session, by its configured name.
    Client(String),
}

impl FlowScope {
    /// `None` for the operator's own calls: they taint nothing and are not checked.
    pub fn of(requester: &Requester) -> Option<Self> {
        match requester {
            Requester::Lead | Requester::Subagent(_) | Requester::Teammate(_) => {
                Some(FlowScope::Lead)
            }
            Requester::Client(name) => Some(FlowScope::Client(name.clone())),
            Requester::Operator => None,
        }
    }
}

impl fmt::Display for FlowScope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FlowScope::Lead => f.write_str("the Lead's session"),
            FlowScope::Client(name) => write!(f, "client {name}'s session"),
        }
    }
}

/// A call that tainted a session: its id and the tool's name.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Tainter {
    pub call: CallId,
    pub tool: String,
}

/// Tainters kept per kind: enough to say why, bounded for a long session.
const KEPT: usize = 8;

/// What one session has read.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Taint {
    pub untrusted: Vec<Tainter>,
    pub private: Vec<Tainter>,
}

impl Taint {
    pub fn is_untrusted(&self) -> bool {
        !self.untrusted.is_empty()
    }

    pub fn is_private(&self) -> bool {
        !self.private.is_empty()
    }

    pub fn is_clean(&self) -> bool {
        !self.is_untrusted() && !self.is_private()
    }
}

/// Which flow rule caught a sink call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FlowRule {
    /// `on_trifecta`: untrusted content and private data, then a sink.
    Trifecta,
    /// `untrusted_sink`: untrusted content, then a sink.
    UntrustedSink,
}

/// Why a sink call was escalated or refused: the rule and the calls that
/// tainted the session (the harness's own words, built from ids and names).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FlowReason {
    pub rule: FlowRule,
    pub tainted_by: Vec<Tainter>,
}

impl FlowReason {
    /// The tainting calls, `c1 (fetch), c2 (read_file)`.
    pub fn tainters(&self) -> String {
        self.tainted_by
            .iter()
            .map(|t| format!("{} ({})", t.call, t.tool))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

impl fmt::Display for FlowReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let by = self.tainters();
        match self.rule {
            FlowRule::Trifecta => write!(
                f,
                "flow rule on_trifecta: this tool is an external_sink and the session holds untrusted \
                 content and private data, from {by}"
            ),
            FlowRule::UntrustedSink => write!(
                f,
                "flow rule untrusted_sink: this tool is an external_sink and the session holds \
                 untrusted content, from {by}"
            ),
        }
    }
}

/// What the check decided about a sink call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FlowVerdict {
    /// Ask the operator, whatever the policy says.
    Escalate(FlowReason),
    /// Refuse (`mcp_flow_denied`).
    Deny(FlowReason),
}

/// The taint of every session of one hub. Cheap to clone (shared).
#[derive(Clone, Default)]
pub struct Flows {
    inner: Arc<Mutex<Inner>>,
}

#[derive(Default)]
struct Inner {
    settings: FlowSettings,
    sessions: HashMap<FlowScope, Taint>,
}

impl Flows {
    pub fn new(settings: FlowSettings) -> Self {
        let flows = Self::default();
        flows.lock().settings = settings;
        flows
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// `[flows]` changed (a config reload).
    pub fn set_settings(&self, settings: FlowSettings) {
        self.lock().settings = settings;
    }

    /// What a call of a tool labelled `labels` by `requester` meets. A tool
    /// that is no sink costs one bit test and no lock.
    pub fn check(&self, requester: &Requester, labels: Labels) -> Option<FlowVerdict> {
        if !labels.contains(Label::ExternalSink) {
            return None;
        }
        let scope = FlowScope::of(requester)?;
        let inner = self.lock();
        let taint = inner.sessions.get(&scope)?;
        if taint.is_untrusted() && taint.is_private() {
            let mut tainted_by = taint.untrusted.clone();
            tainted_by.extend(taint.private.iter().cloned());
            let reason = FlowReason {
                rule: FlowRule::Trifecta,
                tainted_by,
            };
            return Some(match inner.settings.on_trifecta {
                OnTrifecta::Confirm => FlowVerdict::Escalate(reason),
                OnTrifecta::Deny => FlowVerdict::Deny(reason),
            });
        }
        if taint.is_untrusted() && inner.settings.untrusted_sink == UntrustedSink::Confirm {
            return Some(FlowVerdict::Escalate(FlowReason {
                rule: FlowRule::UntrustedSink,
                tainted_by: taint.untrusted.clone(),
            }));
        }
        None
    }

    /// A call of `tool` (labelled `labels`) by `requester` succeeded: the
    /// session now holds what it read. Returns the session's taint when it
    /// changed kind (newly untrusted or newly private), for the views.
    pub fn tainted(
        &self,
        requester: &Requester,
        call: &CallId,
        tool: &str,
        labels: Labels,
    ) -> Option<(FlowScope, Taint)> {
        let untrusted = labels.contains(Label::UntrustedContent);
        let private = labels.contains(Label::PrivateData);
        if !untrusted && !private {
            return None;
        }
        let scope = FlowScope::of(requester)?;
        let mut inner = self.lock();
        let taint = inner.sessions.entry(scope.clone()).or_default();
        let before = (taint.is_untrusted(), taint.is_private());
        let tainter = || Tainter {
            call: call.clone(),
            tool: tool.to_string(),
        };
        if untrusted && taint.untrusted.len() < KEPT {
            taint.untrusted.push(tainter());
        }
        if private && taint.private.len() < KEPT {
            taint.private.push(tainter());
        }
        let after = (taint.is_untrusted(), taint.is_private());
        (before != after).then(|| (scope, taint.clone()))
    }

    /// The taint of `scope` now.
    pub fn taint(&self, scope: &FlowScope) -> Taint {
        self.lock().sessions.get(scope).cloned().unwrap_or_default()
    }

    /// A resumed session's taint, read back from its audit log: what it
    /// held when it ended, as it was (only the operator clears it).
    pub(crate) fn restore(&self, scope: FlowScope, taint: Taint) {
        if !taint.is_clean() {
            self.lock().sessions.insert(scope, taint);
        }
    }

    /// The operator clears `scope`'s taint; returns what it was. Only through
    /// `Hub::clear_taint`, which records it.
    pub(crate) fn clear(&self, scope: &FlowScope) -> Taint {
        self.lock().sessions.remove(scope).unwrap_or_default()
    }
}

impl fmt::Debug for Flows {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Flows")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sink() -> Labels {
        Labels::of(&[Label::ExternalSink])
    }

    #[test]
    fn the_trifecta_escalates_or_denies_and_names_the_tainting_calls() {
        let flows = Flows::new(FlowSettings::default());
        let lead = Requester::Lead;
        assert_eq!(flows.check(&lead, sink()), None);
        let fetch = Labels::of(&[Label::UntrustedContent]);
        assert!(flows.tainted(&lead, &"c1".into(), "fetch", fetch).is_some());
        assert_eq!(flows.check(&lead, sink()), None, "untrusted alone passes");
        // A subagent's read reaches the Lead: same session.
        let read = builtin_labels("read_file");
        let (scope, taint) = flows
            .tainted(&Requester::Subagent(1), &"c2".into(), "read_file", read)
            .unwrap();
        assert_eq!(scope, FlowScope::Lead);
        assert!(taint.is_untrusted() && taint.is_private());
        let Some(FlowVerdict::Escalate(reason)) = flows.check(&lead, sink()) else {
            panic!("escalated");
        };
        assert_eq!(reason.rule, FlowRule::Trifecta);
        let ids: Vec<&str> = reason.tainted_by.iter().map(|t| t.call.as_str()).collect();
        assert_eq!(ids, ["c1", "c2"]);
        assert!(reason.to_string().contains("c1 (fetch), c2 (read_file)"));
        // Another session is clean; the operator's own calls are never checked.
        assert_eq!(flows.check(&Requester::Client("ide".into()), sink()), None);
        assert_eq!(flows.check(&Requester::Operator, sink()), None);
        flows.set_settings(FlowSettings {
            on_trifecta: OnTrifecta::Deny,
            ..Default::default()
        });
        assert!(matches!(
            flows.check(&lead, sink()),
            Some(FlowVerdict::Deny(_))
        ));
        // A tool that is no sink is never checked.
        assert_eq!(flows.check(&lead, fetch), None);
        // Only the operator clears it.
        assert!(flows.clear(&FlowScope::Lead).is_private());
        assert_eq!(flows.check(&lead, sink()), None);
    }

    #[test]
    fn annotations_only_suggest() {
        use serde_json::json;
        assert_eq!(suggested_labels(None), None);
        assert_eq!(suggested_labels(Some(&json!({"readOnlyHint": true}))), None);
        let (labels, why) =
            suggested_labels(Some(&json!({"openWorldHint": true, "readOnlyHint": true}))).unwrap();
        assert_eq!(labels, Labels::of(&[Label::UntrustedContent]));
        assert!(why.contains("readOnlyHint"));
        let (labels, _) = suggested_labels(Some(&json!({"openWorldHint": true}))).unwrap();
        assert!(labels.contains(Label::ExternalSink) && labels.contains(Label::UntrustedContent));
    }

    #[test]
    fn untrusted_sink_escalates_after_untrusted_content_alone() {
        let flows = Flows::new(FlowSettings {
            untrusted_sink: UntrustedSink::Confirm,
            ..Default::default()
        });
        let lead = Requester::Lead;
        flows.tainted(
            &lead,
            &"p1".into(),
            "read_file",
            builtin_labels("read_file"),
        );
        assert_eq!(flows.check(&lead, sink()), None, "private alone passes");
        flows.tainted(
            &lead,
            &"u1".into(),
            "fetch",
            Labels::of(&[Label::UntrustedContent]),
        );
        flows.clear(&FlowScope::Lead);
        flows.tainted(
            &lead,
            &"u2".into(),
            "fetch",
            Labels::of(&[Label::UntrustedContent]),
        );
        let Some(FlowVerdict::Escalate(reason)) = flows.check(&lead, sink()) else {
            panic!("escalated");
        };
        assert_eq!(reason.rule, FlowRule::UntrustedSink);
        assert_eq!(reason.tainted_by.len(), 1);
    }
}
