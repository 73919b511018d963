//! What a connection is and what its requests end in: the server's identity,
//! its endpoint, and the ways a request fails (in the harness's words; an
//! authorization server's words kept apart, for the operator only).

use std::time::Duration;

use serde::Serialize;

/// Who the server says it is (untrusted: shown inert, never used for decisions).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ServerIdentity {
    pub name: String,
    pub version: String,
    /// The protocol revision negotiated in `initialize`.
    pub protocol_version: String,
    /// What the server asks the host to tell the model about it (its
    /// `instructions`): the harness passes them to no model; the poisoning
    /// screen reads them for the operator. Not printed (server prose).
    #[serde(skip)]
    pub instructions: Option<String>,
}

/// How the connection reaches its server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Endpoint {
    Stdio { pid: u32 },
    Http,
    WebSocket,
}

/// Whether a request failed locally, remotely or in transit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RequestError {
    /// No answer within the timeout; `notifications/cancelled` was sent.
    Timeout(Duration),
    /// The connection ended (process exit, transport closed, or closed by us).
    Lost(String),
    /// The server answered with a JSON-RPC error. Its text is server output.
    Remote { code: i32, message: String },
    /// An HTTP server refused the request (401/403) and signing in did not help.
    Unauthorized(AuthDenial),
}

/// Why a server's refusal could not be overcome, in the operator's words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuthDenial {
    pub message: String,
    pub hint: String,
    /// What the authorization server said (untrusted, operator-only).
    pub server_output: Vec<String>,
    /// A 403 asking for more scope: only this operation is refused, the
    /// connection stays usable.
    pub more_scope: bool,
}

impl AuthDenial {
    /// A refusal of a server without OAuth (or before any OAuth step ran).
    pub fn plain(alias: &str) -> Self {
        Self {
            message: "the server requires authorization (HTTP 401/403) and refused the request"
                .into(),
            hint: format!(
                "give this server a token: headers = {{ Authorization = \"Bearer ${{TOKEN}}\" }}, \
                 or sign in with OAuth: auth = \"oauth\" under [servers.{alias}]"
            ),
            server_output: Vec::new(),
            more_scope: false,
        }
    }

    /// From what the OAuth session recorded.
    pub fn from_failure(alias: &str, failure: crate::mcp::auth::Failure) -> Self {
        let more_scope = matches!(
            failure.error,
            crate::mcp::auth::OAuthError::NeedsSignIn { step_up: true, .. }
                | crate::mcp::auth::OAuthError::StepUpLimit { .. }
        );
        Self {
            message: failure.error.to_string(),
            hint: failure.error.hint(alias),
            server_output: failure.server_output,
            more_scope,
        }
    }
}

impl RequestError {
    /// Why the connection is gone, for `Lost` and `Unauthorized`.
    pub fn lost_detail(&self) -> Option<String> {
        match self {
            RequestError::Lost(detail) => Some(detail.clone()),
            RequestError::Unauthorized(denial) => Some(denial.message.clone()),
            _ => None,
        }
    }
}
