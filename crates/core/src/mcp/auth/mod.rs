//! Signing in to remote servers: OAuth 2.1 as the MCP authorization spec says.
//!
//! rmcp 3.11 has an OAuth client behind its `auth` feature; it is not used.
//! As its source reads, its discovery would refuse the 2025-03-26 metadata the
//! conformance suite checks (an issuer with a path, served at the server's
//! origin), it proceeds when an
//! authorization server does not advertise PKCE (the spec says refuse), picks
//! the token endpoint's client authentication from metadata rather than from
//! the registration or the config, signs `private_key_jwt` only through
//! jsonwebtoken on aws-lc-rs (a C build), and reports failures as strings.
//! What is used of rmcp is its transport: the 401/403 challenges its HTTP
//! client surfaces, under our [`transport::HttpClient`].
//!
//! Layers: `origin` (where traffic may go), `net` (bounded HTTP), `challenge`,
//! `discovery`, `identity` (client ID), `token` (token endpoint), `flow` (the
//! grants), `session` (one connection's tokens), `transport` (under rmcp),
//! `store` (0600 file), `listener` + `agent` (the browser step), `budget`.

pub mod agent;
pub mod browser;
pub mod budget;
pub mod challenge;
pub mod crypto;
pub mod discovery;
pub mod dpop;
pub mod error;
pub mod flow;
pub mod identity;
pub mod listener;
mod logout;
mod metadata;
pub mod net;
pub mod origin;
pub mod session;
pub mod spec;
pub mod store;
pub mod token;
pub mod transport;

use std::sync::Arc;
use std::time::Duration;

use url::Url;

pub use agent::{AgentKind, Prompt, Unattended, UserAgent};
pub use budget::Budget;
pub use crypto::JwtAlg;
pub use error::{Failure, OAuthError};
pub use listener::{Callback, Listener, parse_pasted};
pub use logout::{LogoutReport, logout};
pub use session::{AuthSession, TokenView};
pub use spec::{AuthMode, AuthSpec, EndpointAuth, Grant, KeySource, Secret, SecretSource};
pub use store::Store;
pub use transport::HttpClient;

use super::vars::Vars;

/// What every connection of a hub shares for OAuth.
#[derive(Clone)]
pub struct AuthContext {
    pub store: Arc<Store>,
    /// Who takes sign-ins to a person (or does them unattended); none in
    /// headless commands, which then say how to sign in.
    pub agent: Option<Arc<dyn UserAgent>>,
    /// A person may be asked during this attempt (the operator asked to sign in).
    pub interactive: bool,
}

impl AuthContext {
    pub fn new(store: Arc<Store>) -> Self {
        Self {
            store,
            agent: None,
            interactive: false,
        }
    }
}

impl std::fmt::Debug for AuthContext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AuthContext")
            .field("store", &self.store)
            .field("agent", &self.agent.as_ref().map(|a| a.kind()))
            .field("interactive", &self.interactive)
            .finish()
    }
}

/// The HTTP client of one connection, with its OAuth session if it has one.
pub struct ForConnection {
    pub client: HttpClient,
    pub session: Option<Arc<AuthSession>>,
    pub budget: Budget,
}

/// Sets up OAuth for one HTTP connection. A server with its own
/// `Authorization` header, `auth = "none"`, or (without `auth = "oauth"`)
/// plain http to a non-loopback host gets no session.
pub fn for_connection(
    alias: &str,
    url: &str,
    headers: &[(String, String)],
    spec: &AuthSpec,
    vars: &Vars,
    per_request: Duration,
    ctx: &AuthContext,
) -> Result<ForConnection, OAuthError> {
    let budget = Budget::default();
    let own_header = headers
        .iter()
        .any(|(k, _)| k.eq_ignore_ascii_case("authorization"));
    let server = Url::parse(url).map_err(|e| OAuthError::BadUrl {
        what: "server URL",
        url: url.to_string(),
        problem: e.to_string(),
    })?;
    let secure = origin::check("server URL", &server);
    let engaged = match spec.mode {
        AuthMode::Off => false,
        _ if own_header => false,
        AuthMode::OAuth => {
            // Tokens never cross the network in clear text.
            secure?;
            true
        }
        AuthMode::Auto => secure.is_ok(),
    };
    if !engaged {
        return Ok(ForConnection {
            client: HttpClient::new(None),
            session: None,
            budget,
        });
    }
    let resolved = spec.resolve(alias, vars)?;
    let session = Arc::new(AuthSession::new(session::SessionParams {
        alias: alias.to_string(),
        server,
        spec: spec.clone(),
        resolved,
        per_request,
        store: Arc::clone(&ctx.store),
        agent: ctx.agent.clone(),
        budget: budget.clone(),
    }));
    session.allow_interaction(ctx.interactive);
    Ok(ForConnection {
        client: HttpClient::new(Some(Arc::clone(&session))),
        session: Some(session),
        budget,
    })
}
