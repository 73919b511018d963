//! Why a connection was rejected or failed, in words built locally.

use std::fmt;

use serde::Serialize;
use thiserror::Error;

use super::names::ServerAlias;
use super::pins::DefinitionChange;
use super::policy::PolicyMismatch;

/// Codes of the `check --json` contract. The first group *rejects* a connection
/// (the server works, but what it publishes breaks a local rule); the second means
/// the connection *failed* (the server could not be reached or died).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ConnectErrorCode {
    NameTooLong,
    NameCollision,
    DuplicateTool,
    SchemaNotObject,
    SchemaExternalRef,
    SchemaInvalid,
    PolicyMismatch,
    PaginationLimit,
    InvalidToolDefinition,
    /// A tool's definition differs from its pin (rule 14).
    DefinitionChanged,
    /// `pin = "required"` and a tool has no pin.
    DefinitionUnpinned,
    /// A tool without a pin is suspicious (the poisoning screen): it is not
    /// trusted on first use; the operator accepts it, or denies it.
    DefinitionSuspicious,
    SpawnFailed,
    InitializeFailed,
    McpTimeout,
    McpConnectionLost,
    /// An HTTP server answered 401/403: it wants credentials we did not send.
    AuthRequired,
    /// The server answered a protocol revision the harness did not offer, or
    /// speaks none the harness does (SPEC rule 17).
    ProtocolVersionMismatch,
    /// The lock file with the pins cannot be read or written, so the tools
    /// cannot be checked against them.
    LockFileError,
}

/// Where an alias ends up after a connection attempt that did not succeed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FailureKind {
    /// The server answered, but a local rule refuses what it publishes.
    Rejected,
    /// The server could not be started, reached or kept alive.
    Failed,
}

impl ConnectErrorCode {
    pub fn kind(self) -> FailureKind {
        use ConnectErrorCode::*;
        match self {
            SpawnFailed
            | InitializeFailed
            | McpTimeout
            | McpConnectionLost
            | AuthRequired
            | LockFileError
            | ProtocolVersionMismatch => FailureKind::Failed,
            _ => FailureKind::Rejected,
        }
    }

    pub fn as_str(self) -> &'static str {
        use ConnectErrorCode::*;
        match self {
            NameTooLong => "name_too_long",
            NameCollision => "name_collision",
            DuplicateTool => "duplicate_tool",
            SchemaNotObject => "schema_not_object",
            SchemaExternalRef => "schema_external_ref",
            SchemaInvalid => "schema_invalid",
            PolicyMismatch => "policy_mismatch",
            PaginationLimit => "pagination_limit",
            InvalidToolDefinition => "invalid_tool_definition",
            DefinitionChanged => "definition_changed",
            DefinitionUnpinned => "definition_unpinned",
            DefinitionSuspicious => "definition_suspicious",
            SpawnFailed => "spawn_failed",
            InitializeFailed => "initialize_failed",
            McpTimeout => "mcp_timeout",
            McpConnectionLost => "mcp_connection_lost",
            AuthRequired => "auth_required",
            ProtocolVersionMismatch => "protocol_version_mismatch",
            LockFileError => "lock_file_error",
        }
    }
}

impl fmt::Display for ConnectErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A connection attempt that did not end with exposed tools.
///
/// `message` says what happened and names the rule and the tools involved; `hint`
/// says what the operator can do. Both are built locally; server-controlled names
/// inside them are quoted with [`super::names::quote`].
#[derive(Debug, Clone, Error)]
#[error("{code}: {message}")]
pub struct ConnectError {
    pub code: ConnectErrorCode,
    pub message: String,
    pub hint: String,
    /// The remote tool names involved, exactly as published.
    pub tools: Vec<String>,
    /// For `policy_mismatch`: what differs.
    pub policy_diff: Option<Box<PolicyMismatch>>,
    /// For `definition_changed` (and renames under `definition_unpinned`):
    /// each tool's change, with its diff (see [`ConnectError::changes`];
    /// boxed thin: this error travels in every `Result` of the connect path).
    changes: Option<Box<Changes>>,
    /// What the server itself said (stderr tail, its error text), raw.
    /// Operator-only: shown inert, never put into anything the model sees.
    pub server_output: Vec<String>,
}

impl ConnectError {
    pub fn new(
        code: ConnectErrorCode,
        message: impl Into<String>,
        hint: impl Into<String>,
    ) -> Self {
        Self {
            code,
            message: message.into(),
            hint: hint.into(),
            tools: Vec::new(),
            policy_diff: None,
            changes: None,
            server_output: Vec::new(),
        }
    }

    pub fn with_tools(mut self, tools: Vec<String>) -> Self {
        self.tools = tools;
        self
    }

    pub fn kind(&self) -> FailureKind {
        self.code.kind()
    }

    /// Each changed definition, with its diff (empty unless the pins broke).
    pub fn changes(&self) -> &[DefinitionChange] {
        self.changes.as_deref().map_or(&[], |c| c.0.as_slice())
    }

    pub fn with_changes(mut self, changes: Vec<DefinitionChange>) -> Self {
        self.changes = (!changes.is_empty()).then(|| Box::new(Changes(changes)));
        self
    }

    /// What happened, for the model: the harness's words only (SPEC rules 9 and
    /// 16). A failure's `message` already is; a rejection's names the server's
    /// tools, whose names are server text, so the model gets what rule broke and
    /// how many tools are involved instead.
    pub fn model_message(&self) -> String {
        use ConnectErrorCode::*;
        let n = self.tools.len();
        let tools = |n: usize| {
            if n == 1 {
                "1 tool".to_string()
            } else {
                format!("{n} tools")
            }
        };
        match self.code {
            SpawnFailed
            | InitializeFailed
            | McpTimeout
            | McpConnectionLost
            | AuthRequired
            | LockFileError
            | ProtocolVersionMismatch => self.message.clone(),
            NameTooLong => format!(
                "{} of the server would get an exposed name longer than 64 characters",
                tools(n)
            ),
            NameCollision => format!(
                "{} of the server collide with each other, a built-in or another server's tools \
                 once their names are normalized",
                tools(n)
            ),
            DuplicateTool => "the server published the same tool name more than once".into(),
            SchemaNotObject | SchemaExternalRef | SchemaInvalid => format!(
                "the input schema of {} breaks the schema rule ({})",
                tools(n),
                self.code
            ),
            PolicyMismatch => match &self.policy_diff {
                Some(diff) => format!(
                    "the tools the server publishes differ from the local policy: {} published \
                     without a policy entry, {} in the policy but not published",
                    diff.missing.len(),
                    diff.extra.len()
                ),
                None => "the tools the server publishes differ from the local policy".into(),
            },
            PaginationLimit => "the server's tools/list did not end within the local limits".into(),
            InvalidToolDefinition => "the server published malformed tool definitions".into(),
            DefinitionChanged => format!(
                "the definitions of {} differ from what the operator pinned (approved); \
                 the operator must review the change and accept it",
                tools(n)
            ),
            DefinitionUnpinned => format!(
                "{} of the server have no pinned (approved) definition, and this server \
                 requires one; the operator must review and pin them",
                tools(n)
            ),
            DefinitionSuspicious => format!(
                "the definitions of {} of the server read as addressed to the model \
                 (the harness's poisoning screen); the operator must review and accept them",
                tools(n)
            ),
        }
    }
}

/// The definition changes of a [`ConnectError`].
#[derive(Debug, Clone)]
struct Changes(Vec<DefinitionChange>);

/// Errors of the connection manager itself (before any server is involved).
#[derive(Debug, Clone, Error, PartialEq, Eq)]
pub enum HubError {
    #[error("unknown server alias `{alias}`; known aliases: {}", known_list(.known))]
    UnknownAlias { alias: String, known: Vec<String> },
    #[error("`{0}` is already connected")]
    AlreadyConnected(ServerAlias),
    #[error("`{0}` is already connecting; wait for it to finish")]
    AlreadyConnecting(ServerAlias),
    #[error("`{0}` is not connected")]
    NotConnected(ServerAlias),
    #[error("connecting `{0}` was cancelled: it was disconnected while connecting")]
    ConnectCancelled(ServerAlias),
    #[error("the harness is shutting down")]
    ShuttingDown,
}

fn known_list(known: &[String]) -> String {
    if known.is_empty() {
        "(none configured)".to_string()
    } else {
        known.join(", ")
    }
}
