//! The views of the features around a call: how it was decided, the session's
//! grants, the explanation of a decision, the conversation of a resumed
//! session, and the fields of a server's form.

use serde_json::Value;

use super::CallId;
use super::kinds::Requester;
use super::views::{ToolCallView, ToolOutcomeView};

/// Identifies one session grant ("approve always").
pub type GrantId = u64;

/// How a call was decided, by which local rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decided {
    /// The local policy says `allow` (or the built-in tool's effect is allow).
    AllowedByPolicy,
    /// `confirm`: the operator approved this call.
    ApprovedOnce,
    /// `confirm`: the operator approved this call and granted the tool for the session.
    ApprovedAlways(GrantId),
    /// `confirm`: a session grant approved it without asking.
    SessionGrant(GrantId),
    /// `confirm`: the operator denied it.
    DeniedByOperator,
    /// Not approved: the prompt was withdrawn (interrupted, revoked, timed out).
    NotApproved,
    /// The local policy says `deny` (the tool is not offered; the model tried anyway).
    DeniedByPolicy,
    /// Flow control refused it: a sink in a session holding untrusted content
    /// and private data, under `[flows] on_trifecta = "deny"`.
    DeniedByFlow,
    /// The arguments failed the tool's input schema; nothing was sent.
    RefusedBySchema,
    /// The tool's definition changed from its pin; the call was held.
    HeldByPin,
    /// It never reached a decision (unknown tool, not connected, interrupted).
    NotRun,
}

impl Decided {
    /// A short phrase for the call's row.
    pub fn phrase(self) -> &'static str {
        match self {
            Decided::AllowedByPolicy => "allowed by policy",
            Decided::ApprovedOnce => "approved once",
            Decided::ApprovedAlways(_) => "approved, always",
            Decided::SessionGrant(_) => "session grant",
            Decided::DeniedByOperator => "denied by you",
            Decided::NotApproved => "not approved",
            Decided::DeniedByPolicy => "denied by policy",
            Decided::DeniedByFlow => "refused by flow control",
            Decided::RefusedBySchema => "refused by schema",
            Decided::HeldByPin => "held by pin",
            Decided::NotRun => "not run",
        }
    }

    /// Its name in the audit log (`decided` records), which a resumed
    /// session reads back with [`Decided::from_key`].
    pub fn key(self) -> &'static str {
        match self {
            Decided::AllowedByPolicy => "allowed_by_policy",
            Decided::ApprovedOnce => "approved_once",
            Decided::ApprovedAlways(_) => "approved_always",
            Decided::SessionGrant(_) => "session_grant",
            Decided::DeniedByOperator => "denied_by_operator",
            Decided::NotApproved => "not_approved",
            Decided::DeniedByPolicy => "denied_by_policy",
            Decided::DeniedByFlow => "denied_by_flow",
            Decided::RefusedBySchema => "refused_by_schema",
            Decided::HeldByPin => "held_by_pin",
            Decided::NotRun => "not_run",
        }
    }

    /// The grant it names, if any.
    pub fn grant(self) -> Option<GrantId> {
        match self {
            Decided::ApprovedAlways(id) | Decided::SessionGrant(id) => Some(id),
            _ => None,
        }
    }

    /// The decision a `key` names (`grant`: the grant's id, for the two that
    /// name one).
    pub fn from_key(key: &str, grant: GrantId) -> Option<Self> {
        Some(match key {
            "allowed_by_policy" => Decided::AllowedByPolicy,
            "approved_once" => Decided::ApprovedOnce,
            "approved_always" => Decided::ApprovedAlways(grant),
            "session_grant" => Decided::SessionGrant(grant),
            "denied_by_operator" => Decided::DeniedByOperator,
            "not_approved" => Decided::NotApproved,
            "denied_by_policy" => Decided::DeniedByPolicy,
            "denied_by_flow" => Decided::DeniedByFlow,
            "refused_by_schema" => Decided::RefusedBySchema,
            "held_by_pin" => Decided::HeldByPin,
            "not_run" => Decided::NotRun,
            _ => return None,
        })
    }
}

/// One "approve always" of this session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GrantView {
    pub id: GrantId,
    /// The exposed name (or the built-in tool's).
    pub tool: String,
    /// `None` for a built-in tool.
    pub alias: Option<String>,
    /// The name as published, for `save to config`.
    pub remote_name: Option<String>,
    /// When it was given, `HH:MM:SS UTC`.
    pub given_at: String,
    /// Calls it approved since (the first, asked, one not counted).
    pub uses: u64,
    /// The outside client it holds for (the gateway's); `None`: the
    /// session's own agents and the operator.
    pub client: Option<String>,
}

/// Which local rule a line of an explanation is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rule {
    Policy,
    Schema,
    Approval,
    Pin,
    /// Flow control: the session's taint escalated or denied the call.
    Flow,
    /// Credentials in the result were withheld from the model.
    Redaction,
    /// The poisoning screen flagged the tool's definition (rule, reason,
    /// field, phrase).
    Screen,
    Outcome,
}

impl Rule {
    pub fn label(self) -> &'static str {
        match self {
            Rule::Policy => "policy",
            Rule::Schema => "schema",
            Rule::Approval => "approval",
            Rule::Pin => "pin",
            Rule::Flow => "flow",
            Rule::Redaction => "redaction",
            Rule::Screen => "screen",
            Rule::Outcome => "outcome",
        }
    }
}

/// Which local rule decided a call, line by line (locally built text).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExplainView {
    pub call_id: CallId,
    pub tool: String,
    pub lines: Vec<(Rule, String)>,
}

/// One entry of an earlier conversation (`--resume`).
#[derive(Debug, Clone, PartialEq)]
pub enum HistoryItem {
    User(String),
    Assistant {
        agent: Requester,
        text: String,
    },
    /// A call and, when the transcript has it, how it ended.
    Call(Box<(ToolCallView, Option<ToolOutcomeView>)>),
    Notice(String),
}

/// Why a prompt left the screen without the operator's answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Withdrawal {
    /// The turn was interrupted, or the harness is shutting down.
    Interrupted,
    /// Nobody answered in time, or the call was cancelled.
    Settled,
    /// Its tool left the registry (the text says why: locally built).
    Revoked(String),
    /// Its tool's definition changed since it was asked.
    Changed,
    /// An "always" given on another prompt covers it: it was approved.
    Granted(GrantId),
}

/// A single or multiple choice option: the value sent, and its label.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Choice {
    pub value: String,
    /// The server's title for it (untrusted), when it gave one.
    pub title: Option<String>,
}

/// What a string field is for (a hint in the form, checked before sending).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TextFormat {
    Email,
    Uri,
    Date,
    DateTime,
}

impl TextFormat {
    pub fn hint(self) -> &'static str {
        match self {
            TextFormat::Email => "an email address",
            TextFormat::Uri => "a URI (https://…)",
            TextFormat::Date => "a date, YYYY-MM-DD",
            TextFormat::DateTime => "a date and time, YYYY-MM-DDTHH:MM:SSZ",
        }
    }
}

/// One problem with a form's answer, on its field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldProblem {
    /// The field's name (`None`: the answer as a whole).
    pub field: Option<String>,
    pub message: String,
}

/// A default as JSON (the form turns it into its own values).
pub type DefaultValue = Option<Value>;

/// One resource of a server as listed (its text, untrusted: rendered inert).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResourceRow {
    pub uri: String,
    pub name: String,
    pub mime: Option<String>,
    pub size: Option<u64>,
}

/// A server's resources and templates (the answer to `Command::ListResources`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResourcesView {
    pub alias: String,
    pub resources: Vec<ResourceRow>,
    /// Templates: their `uriTemplate`, name and MIME type (`size` unused).
    pub templates: Vec<ResourceRow>,
    pub malformed: usize,
    /// The local policy for reading them.
    pub read: super::kinds::PolicyEffect,
    /// Why there is no listing (the harness's words), if there is none.
    pub error: Option<String>,
}
