//! Getting a new token for a session: authorizing (discovery, the grant,
//! scope selection) and refreshing (with rotation), and keeping what came back.

use std::sync::atomic::Ordering;

use super::super::challenge::Challenge;
use super::super::crypto::now_secs;
use super::super::discovery::{self, Discovery};
use super::super::dpop::Dpop;
use super::super::error::{Failure, OAuthError};
use super::super::flow::{self, Ctx};
use super::super::identity;
use super::super::spec::AuthMode;
use super::super::store::StoredToken;
use super::super::token::{self, ClientAuth, TokenType};
use super::{Attempt, AuthSession, MAX_AUTHORIZATIONS, Work};

impl AuthSession {
    pub(super) async fn authorize(
        &self,
        work: &mut Work,
        challenge: &Challenge,
        step_up: bool,
        attempt: &mut Attempt,
    ) -> Result<(), Failure> {
        if attempt.authorizations >= MAX_AUTHORIZATIONS {
            return Err(OAuthError::StepUpLimit {
                attempts: attempt.authorizations,
                scope: challenge.scopes().join(" "),
            }
            .into());
        }
        let agent = self.agent.as_deref();
        if flow::needs_person(&self.spec.grant)
            && !flow::agent_allowed(agent, self.interactive.load(Ordering::SeqCst))
        {
            let reason = if step_up {
                format!(
                    "{} asks for more permissions (scope \"{}\") than the current sign-in grants",
                    self.alias,
                    challenge.scopes().join(" ")
                )
            } else {
                format!("{} needs a sign-in", self.alias)
            };
            return Err(OAuthError::NeedsSignIn { reason, step_up }.into());
        }
        attempt.authorizations += 1;
        let allow_legacy = self.spec.mode == AuthMode::OAuth;
        // Discovered afresh every time: the server may have moved to another
        // authorization server since (and then nothing of the old one is reused).
        let d = discovery::discover(&self.net, &self.server, challenge, allow_legacy).await?;
        let scopes = self.choose_scopes(work, &d, challenge, step_up);
        // Sender-constrained tokens where the server offers them (RFC 9449).
        let dpop = match &d.server.dpop_algs {
            Some(algs) if algs.iter().any(|a| a == "ES256") => Some(Dpop::generate()?),
            _ => None,
        };
        tracing::debug!(alias = %self.alias, issuer = %d.server.issuer, dpop = dpop.is_some(), ?scopes, "OAuth: authorizing");
        let ctx = Ctx {
            alias: &self.alias,
            net: &self.net,
            store: &self.store,
            spec: &self.spec,
            resolved: &self.resolved,
            agent,
            budget: &self.budget,
            dpop: dpop.as_ref(),
        };
        let got = flow::obtain(&ctx, &d, scopes).await?;
        let scopes = got
            .issued
            .scopes
            .clone()
            .unwrap_or_else(|| got.requested.clone());
        work.requested = got.requested.clone();
        let dpop_key = match (got.issued.token_type, &dpop) {
            (TokenType::DPoP, Some(key)) => Some(key.export()),
            _ => None,
        };
        let token = StoredToken {
            issuer: d.server.issuer.clone(),
            resource: d.resource.clone(),
            client_id: got.client_id,
            access_token: got.issued.access_token,
            token_type: got.issued.token_type.as_str().to_string(),
            refresh_token: got.issued.refresh_token,
            expires_at: got.issued.expires_at,
            scopes,
            obtained_at: now_secs(),
            token_endpoint: d.server.token_endpoint.to_string(),
            revocation_endpoint: d.server.revocation_endpoint.as_ref().map(|u| u.to_string()),
            dpop_key,
        };
        self.keep(token);
        work.discovery = Some(d);
        if let Ok(mut f) = self.failure.lock() {
            *f = None;
        }
        Ok(())
    }

    /// Stores a token and starts sending it. A store that cannot be written
    /// costs the next run a sign-in, not this one.
    pub(super) fn keep(&self, token: StoredToken) {
        if let Err(e) = self.store.put_token(token.clone()) {
            tracing::warn!(alias = %self.alias, "OAuth: the token could not be stored: {e}");
        }
        self.set_current(Some(token));
    }

    /// The challenge's scopes; else the configured ones; else what the
    /// resource lists; on a step-up, added to what was asked for before.
    fn choose_scopes(
        &self,
        work: &Work,
        d: &Discovery,
        challenge: &Challenge,
        step_up: bool,
    ) -> Vec<String> {
        let mut scopes: Vec<String> = Vec::new();
        if step_up {
            scopes.extend(work.requested.iter().cloned());
        }
        scopes.extend(self.spec.scopes.iter().cloned());
        let asked = challenge.scopes();
        if !asked.is_empty() {
            scopes.extend(asked);
        } else if scopes.is_empty()
            && let Some(supported) = d.prm.as_ref().and_then(|p| p.scopes_supported.as_ref())
        {
            scopes.extend(supported.iter().cloned());
        }
        let mut seen = Vec::new();
        scopes.retain(|s| {
            let new = !seen.contains(s);
            seen.push(s.clone());
            new
        });
        scopes
    }

    /// Refreshes the current token (RFC 6749 §6), keeping a rotated refresh
    /// token. `Ok(false)`: there is nothing to refresh with.
    pub(super) async fn refresh(&self) -> Result<bool, Failure> {
        let Some(old) = self.current_token() else {
            return Ok(false);
        };
        let Some(refresh_token) = old.refresh_token.clone() else {
            return Ok(false);
        };
        let dpop = old.dpop_key.as_ref().map(Dpop::restore).transpose()?;
        let endpoint = super::super::origin::endpoint("token endpoint", &old.token_endpoint)?;
        let client = identity::for_refresh(
            &self.store,
            &self.spec,
            &self.resolved,
            &old.issuer,
            None,
            &old.client_id,
        );
        let auth = ClientAuth {
            client_id: &client.client_id,
            method: client.method,
            secret: client.secret.as_ref(),
            signer: self.resolved.signer.as_ref(),
            audience: &old.issuer,
        };
        let form = vec![
            ("grant_type", "refresh_token".to_string()),
            ("refresh_token", refresh_token.expose().to_string()),
            ("resource", old.resource.clone()),
        ];
        match token::request(
            &self.net,
            "token endpoint",
            &endpoint,
            form,
            &auth,
            dpop.as_ref(),
        )
        .await
        {
            Ok(issued) => {
                let token = StoredToken {
                    access_token: issued.access_token,
                    token_type: issued.token_type.as_str().to_string(),
                    // Rotation: a new refresh token replaces the old one.
                    refresh_token: issued.refresh_token.or(Some(refresh_token)),
                    expires_at: issued.expires_at,
                    scopes: issued.scopes.unwrap_or(old.scopes.clone()),
                    obtained_at: now_secs(),
                    ..old
                };
                self.keep(token);
                Ok(true)
            }
            Err(f) => match &f.error {
                OAuthError::TokenRejected { error, .. }
                    if error == "invalid_grant" || error.starts_with("HTTP 4") =>
                {
                    let refused = Failure {
                        error: OAuthError::RefreshRefused {
                            error: error.clone(),
                        },
                        server_output: f.server_output.clone(),
                    };
                    self.forget_current();
                    self.fail(refused.clone());
                    Err(refused)
                }
                _ => Err(f),
            },
        }
    }
}
