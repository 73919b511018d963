//! What a server offers besides tools: resources (`resources/list`,
//! `resources/templates/list`, `resources/read`) and prompts (`prompts/list`,
//! `prompts/get`), and completions of their arguments (`completion/complete`).
//! Everything in them is the server's text: listings are parsed one entry at
//! a time (a malformed entry is counted, not fatal),
//! bounded like `tools/list`, and a failure becomes an envelope in the
//! harness's words, with the server's own words kept for the operator.

pub mod complete;
mod paged;
pub mod prompts;
pub mod resources;

use std::sync::Arc;

use super::connection::{Connection, RequestError};
use super::envelope::{ToolError, ToolErrorCode as Code};
use super::hub::Hub;

pub use complete::{Completion, CompletionRef};
pub use prompts::{Prompt, PromptArgument, PromptMessage, PromptMessages};
pub use resources::{Resource, ResourceList, ResourceTemplate};

/// The outcome of one request about resources or prompts.
#[derive(Debug, Clone)]
pub struct Offered<T> {
    pub result: Result<T, ToolError>,
    /// What the server said that the model must not see (a JSON-RPC error's
    /// message, a malformed answer). For the operator, shown as server output.
    pub server_output: Option<String>,
}

impl<T> Offered<T> {
    fn local(error: ToolError) -> Self {
        Self {
            result: Err(error),
            server_output: None,
        }
    }

    fn ok(value: T) -> Self {
        Self {
            result: Ok(value),
            server_output: None,
        }
    }
}

/// Which offering a request is about (in the harness's messages).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    Resources,
    Prompts,
}

impl Kind {
    fn noun(self) -> &'static str {
        match self {
            Kind::Resources => "resources",
            Kind::Prompts => "prompts",
        }
    }
}

impl Hub {
    /// The live connection of `alias` that offers `kind`, or the envelope
    /// saying why there is none.
    pub(super) fn offering(&self, alias: &str, kind: Kind) -> Result<Arc<Connection>, ToolError> {
        let error = |code, message: String| {
            let mut e = ToolError::new(code, message);
            e.alias = Some(alias.to_string());
            e
        };
        let known = self.aliases();
        let Some((alias_name, _)) = known.iter().find(|(a, _)| a.as_str() == alias) else {
            let names: Vec<&str> = known.iter().map(|(a, _)| a.as_str()).collect();
            return Err(error(
                Code::McpNotConnected,
                format!(
                    "no server alias `{}` in the config; known aliases: {}",
                    crate::sanitize::inert_line(alias, 64),
                    if names.is_empty() {
                        "(none)".to_string()
                    } else {
                        names.join(", ")
                    }
                ),
            ));
        };
        let snapshot = self.snapshot();
        let Some(entry) = snapshot.connection_for(alias_name) else {
            return Err(error(
                Code::McpNotConnected,
                format!("`{alias}` is not connected; connect it first (connect_mcp)"),
            ));
        };
        let conn = Arc::clone(entry.connection());
        if conn.is_ended() {
            return Err(error(
                Code::McpNotConnected,
                format!("the connection to `{alias}` has ended"),
            ));
        }
        let offers = match kind {
            Kind::Resources => conn.has_resources(),
            Kind::Prompts => conn.has_prompts(),
        };
        if !offers {
            return Err(error(
                Code::McpUnknownTool,
                format!(
                    "`{alias}` offers no {} (it did not declare them)",
                    kind.noun()
                ),
            ));
        }
        Ok(conn)
    }
}

/// A failed request about `what` (e.g. "resources/read") as an envelope and
/// the server's words. Unlike a tool call's timeout, the connection is kept:
/// the request was cancelled, and the server's tools are not in question.
pub(super) fn request_failed<T>(alias: &str, what: &str, error: RequestError) -> Offered<T> {
    let envelope = |code, message: String| {
        let mut e = ToolError::new(code, message);
        e.alias = Some(alias.to_string());
        e
    };
    let (error, said) = match error {
        RequestError::Remote { code, message } => (
            envelope(
                Code::McpRemoteError,
                format!(
                    "`{alias}` refused {what} (JSON-RPC error {code}); its error text is withheld \
                     from the model, the operator can see it. The connection is kept."
                ),
            ),
            Some(message),
        ),
        RequestError::Timeout(after) => (
            envelope(
                Code::McpTimeout,
                format!(
                    "`{alias}` did not answer {what} within {} ms; the request was cancelled, the \
                     connection is kept",
                    after.as_millis()
                ),
            ),
            None,
        ),
        RequestError::Unauthorized(_) => (
            envelope(
                Code::McpAuthRequired,
                format!("`{alias}` refused {what} for want of a valid sign-in"),
            ),
            None,
        ),
        lost @ RequestError::Lost(_) => (
            envelope(
                Code::McpConnectionLost,
                format!(
                    "the connection to `{alias}` was lost during {what} ({})",
                    lost.lost_detail().unwrap_or_default()
                ),
            ),
            None,
        ),
    };
    Offered {
        result: Err(error),
        server_output: said,
    }
}

/// A malformed answer: the harness's words for the model, the problem for the operator.
pub(super) fn malformed<T>(alias: &str, what: &str, problem: String) -> Offered<T> {
    let mut e = ToolError::new(
        Code::McpRemoteError,
        format!("`{alias}` answered {what} with something that is not a valid result"),
    );
    e.alias = Some(alias.to_string());
    Offered {
        result: Err(e),
        server_output: Some(problem),
    }
}
