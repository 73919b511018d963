//! Signing in to remote servers, as rmcp's transport sees it. OAuth itself is
//! the `mcp-harness-auth` crate (`crates/auth/`, no rmcp), re-exported here
//! under its module names so the rest of the harness says `mcp::auth::…`.
//! What stays here is the glue: [`transport::HttpClient`] (under rmcp's
//! Streamable HTTP client: the token on every request, recovery from the
//! 401/403 challenges rmcp surfaces) and the per-hub context a connection's
//! session is made from.

pub mod transport;

pub use mcp_harness_auth::{
    AgentKind, AuthMode, AuthSession, AuthSpec, Budget, Callback, EndpointAuth, Failure, Grant,
    JwtAlg, KeySource, Listener, LogoutReport, OAuthError, Prompt, Secret, SecretSource, Store,
    TokenView, Unattended, UserAgent, logout, parse_pasted,
};
pub use mcp_harness_auth::{
    agent, browser, budget, challenge, crypto, discovery, dpop, error, flow, identity, listener,
    net, origin, session, spec, store, token,
};
pub use transport::HttpClient;

use std::sync::Arc;
use std::time::Duration;

use url::Url;

use super::vars::Vars;

/// A secret's environment variable is read as every `${VAR}` is.
impl mcp_harness_auth::Env for Vars {
    fn var(&self, name: &str) -> Option<String> {
        self.get(name)
    }
}

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

#[cfg(test)]
mod tests {
    use super::Store;

    /// The auth crate finds the data dir on its own (it does not depend on
    /// the core); it must be the one the rest of the harness writes to.
    #[test]
    fn the_token_store_lives_in_the_harness_data_dir() {
        let expected = crate::logging::data_dir().map(|d| d.join("oauth").join("tokens.json"));
        assert_eq!(
            Store::default_location().path().map(|p| p.to_path_buf()),
            expected
        );
    }
}
