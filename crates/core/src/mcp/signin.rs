//! Signing in and out of an alias (OAuth): who takes the sign-in to a person,
//! where tokens are kept, a connect the operator asked to sign in for, and a
//! sign-out that revokes the alias's tools at once and then its tokens.

use std::sync::Arc;

use super::auth::{self, AuthContext, LogoutReport, OAuthError, Store, TokenView};
use super::connection::ServerIdentity;
use super::error::{ConnectError, HubError};
use super::events::RevokeCause;
use super::hub::{ConnectReport, Hub};
use super::names::ServerAlias;
use super::published::PublishedTool;
use super::spec::TransportSpec;

impl Hub {
    /// Where OAuth tokens are kept.
    pub fn token_store(&self) -> Arc<Store> {
        Arc::clone(&self.inner.auth.store)
    }

    pub(super) fn auth_context(&self, interactive: bool) -> AuthContext {
        AuthContext {
            interactive,
            ..self.inner.auth.clone()
        }
    }

    /// Connects an alias the operator asked to sign in to: the sign-in agent
    /// may show them the authorization page (the connect timeout does not run
    /// meanwhile). Later refusals of the same connection never ask again.
    pub async fn sign_in(&self, alias: &str) -> Result<ConnectReport, HubError> {
        self.connect_with(alias, true).await
    }

    /// Like [`Hub::probe`], signing in if the server asks (the `login` command).
    pub async fn sign_in_probe(
        &self,
        alias: &str,
    ) -> Result<(ServerIdentity, Vec<PublishedTool>), ConnectError> {
        self.probe_with(alias, true).await
    }

    /// The token the alias's live connection sends: issuer, scopes, expiry.
    pub fn token_view(&self, alias: &str) -> Option<TokenView> {
        let state = self.lock();
        let connection = state
            .slots
            .get(&ServerAlias::new(alias))?
            .connection
            .as_ref()?;
        connection.auth()?.view().borrow().clone()
    }

    /// Signs out: the alias's tools are revoked at once (if it is connected),
    /// then its tokens are revoked where the server supports it and deleted.
    /// Nothing stored is not an error.
    pub async fn sign_out(&self, alias: &str) -> Result<LogoutReport, SignOutError> {
        let spec = self.spec(alias).map_err(SignOutError::Hub)?;
        let TransportSpec::Http {
            url,
            auth: auth_spec,
            ..
        } = &spec.transport
        else {
            return Err(SignOutError::NotHttp(spec.alias.clone()));
        };
        let connected = self
            .lock()
            .slots
            .get(&spec.alias)
            .is_some_and(|s| s.connection.is_some());
        if connected {
            self.disconnect_with(
                alias,
                RevokeCause::AuthRequired {
                    detail: "signed out by the operator".into(),
                },
            )
            .map_err(SignOutError::Hub)?;
        }
        let url = self.inner.vars.expand(url).map_err(|problem| {
            SignOutError::OAuth(OAuthError::Config {
                key: format!("servers.{alias}.url"),
                problem: problem.to_string(),
            })
        })?;
        auth::logout(
            alias,
            &url,
            auth_spec,
            &self.inner.vars,
            &self.token_store(),
            spec.connect_timeout,
        )
        .await
        .map_err(SignOutError::OAuth)
    }
}

/// Why signing out did not happen.
#[derive(Debug, thiserror::Error)]
pub enum SignOutError {
    #[error("{0}")]
    Hub(HubError),
    #[error("`{0}` is a stdio server; sign-in applies to `url` servers")]
    NotHttp(ServerAlias),
    #[error("{0}")]
    OAuth(OAuthError),
}
