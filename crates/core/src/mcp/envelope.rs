//! The tool error envelope (SPEC rule 9): every field is built by the harness.
//! Remote private details never enter it; the operator sees them separately as
//! server output.

use std::fmt;

use serde::Serialize;

use super::schema::ArgumentError;

/// What went wrong with a tool call, as the model is told.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolErrorCode {
    /// The arguments do not match the tool's schema; nothing was sent.
    McpInvalidArguments,
    /// Local policy (`deny`) or the operator refused the call; nothing was sent.
    McpPermissionDenied,
    /// A sink call in a session holding untrusted content and private data
    /// was refused by `[flows] on_trifecta = "deny"`; nothing was sent.
    McpFlowDenied,
    /// No such tool in this request's tool set.
    McpUnknownTool,
    /// The tool's server is no longer connected.
    McpNotConnected,
    /// The server reported an error; the connection is kept.
    McpRemoteError,
    /// No answer in time; the call was cancelled and the connection dropped.
    McpTimeout,
    /// A call that ran as a task did not finish within `task_timeout_ms`; the
    /// task was cancelled and the connection kept.
    McpTaskTimeout,
    /// The server died or the transport closed; the connection was dropped.
    McpConnectionLost,
    /// The server refused the call for want of a (sufficient) sign-in; the
    /// operator has to sign in again.
    McpAuthRequired,
    /// `connect_mcp` did not end with exposed tools (rejected or failed).
    McpConnectFailed,
    /// A built-in tool's arguments do not match its schema.
    InvalidArguments,
    /// A built-in tool was refused by local policy or the operator.
    PermissionDenied,
    /// A built-in tool ran and failed (file not found, path outside the workspace, …).
    ToolFailed,
    /// The operator interrupted the turn before this call finished.
    Interrupted,
}

impl fmt::Display for ToolErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let text = serde_json::to_value(self)
            .ok()
            .and_then(|v| v.as_str().map(str::to_string));
        f.write_str(text.as_deref().unwrap_or("mcp_error"))
    }
}

/// The envelope itself. Serialized as-is into the model's context.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ToolError {
    pub code: ToolErrorCode,
    pub message: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub alias: Option<String>,
    /// The exposed name the model called.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    /// For `mcp_invalid_arguments`: every validation error with its instance path.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub errors: Vec<ArgumentError>,
    /// For `mcp_invalid_arguments`: the argument names the tool's schema does
    /// not declare (refused unless `extra_arguments = "allow"`). A boxed
    /// slice: the envelope travels in every `Result` of a tool.
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    pub undeclared: Box<[String]>,
}

impl ToolError {
    pub fn new(code: ToolErrorCode, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
            alias: None,
            tool: None,
            errors: Vec::new(),
            undeclared: Box::default(),
        }
    }

    pub fn for_tool(mut self, alias: &str, tool: &str) -> Self {
        self.alias = Some(alias.to_string());
        self.tool = Some(tool.to_string());
        self
    }
}

impl fmt::Display for ToolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.code, self.message)
    }
}
