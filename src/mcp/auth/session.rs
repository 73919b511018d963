//! One connection's OAuth state: the token it sends (from the store, or just
//! obtained), refreshing it before it expires and once on a 401, and — when a
//! request is refused — discovering, signing in or stepping up, at most three
//! authorizations per request. Authorization is serialized: two requests
//! refused at once lead to one sign-in.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

use tokio::sync::watch;
use tokio_util::sync::CancellationToken;
use url::Url;

use super::agent::UserAgent;
use super::budget::Budget;
use super::challenge::{self, Challenge};
use super::crypto::now_secs;
use super::discovery::{self, Discovery};
use super::dpop::Dpop;
use super::error::{Failure, OAuthError};
use super::flow::{self, Ctx};
use super::identity;
use super::net::Net;
use super::spec::{AuthMode, AuthSpec, Resolved, Secret};
use super::store::{Store, StoredToken};
use super::token::{self, ClientAuth, TokenType};

/// Authorizations (sign-in and step-ups) one request may cause.
pub const MAX_AUTHORIZATIONS: u32 = 3;
/// A token this close to expiry is refreshed before it is sent.
const REFRESH_AHEAD: u64 = 60;

/// What a request carries.
#[derive(Clone)]
pub struct Creds {
    pub generation: u64,
    pub scheme: TokenType,
    pub token: Secret,
    /// The key a DPoP token is bound to: each request gets a fresh proof.
    pub dpop: Option<Arc<Dpop>>,
}

/// Why a request was refused.
pub enum Refusal<'a> {
    /// 401, with the `WWW-Authenticate` value if there was one.
    Unauthorized(Option<&'a str>),
    /// 403 with a challenge.
    Forbidden(&'a str),
}

/// What one request has used up.
#[derive(Debug, Default)]
pub struct Attempt {
    refreshed: bool,
    authorizations: u32,
}

/// What the operator may see of the token (never the token).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TokenView {
    pub issuer: String,
    pub scopes: Vec<String>,
    pub expires_at: Option<u64>,
    pub token_type: &'static str,
}

pub struct AuthSession {
    alias: String,
    server: Url,
    spec: AuthSpec,
    resolved: Resolved,
    net: Net,
    store: Arc<Store>,
    agent: Option<Arc<dyn UserAgent>>,
    interactive: AtomicBool,
    work: tokio::sync::Mutex<Work>,
    current: RwLock<Option<Current>>,
    generation: AtomicU64,
    loaded: AtomicBool,
    failure: Mutex<Option<Failure>>,
    /// Fired when a 401 cannot be resolved: the watchdog ends the connection.
    pub lost: CancellationToken,
    view: watch::Sender<Option<TokenView>>,
    budget: Budget,
}

/// The token being sent, its generation, and its DPoP key if bound to one.
struct Current {
    token: StoredToken,
    generation: u64,
    dpop: Option<Arc<Dpop>>,
}

#[derive(Default)]
struct Work {
    discovery: Option<Discovery>,
    requested: Vec<String>,
}

/// Everything a session is made of.
pub struct SessionParams {
    pub alias: String,
    pub server: Url,
    pub spec: AuthSpec,
    pub resolved: Resolved,
    pub per_request: Duration,
    pub store: Arc<Store>,
    pub agent: Option<Arc<dyn UserAgent>>,
    pub budget: Budget,
}

impl AuthSession {
    pub fn new(p: SessionParams) -> Self {
        Self {
            alias: p.alias,
            server: p.server,
            spec: p.spec,
            resolved: p.resolved,
            net: Net::new(p.per_request),
            store: p.store,
            agent: p.agent,
            interactive: AtomicBool::new(false),
            work: tokio::sync::Mutex::new(Work::default()),
            current: RwLock::new(None),
            generation: AtomicU64::new(0),
            loaded: AtomicBool::new(false),
            failure: Mutex::new(None),
            lost: CancellationToken::new(),
            view: watch::channel(None).0,
            budget: p.budget,
        }
    }

    /// Lets a person be asked to sign in (only while the operator asked for it).
    pub fn allow_interaction(&self, on: bool) {
        self.interactive.store(on, Ordering::SeqCst);
    }

    /// Why the last authorization failed, if it did.
    pub fn failure(&self) -> Option<Failure> {
        self.failure.lock().ok()?.clone()
    }

    /// The token's issuer, scopes and expiry, as they change.
    pub fn view(&self) -> watch::Receiver<Option<TokenView>> {
        self.view.subscribe()
    }

    fn fail(&self, f: Failure) {
        tracing::warn!(alias = %self.alias, "OAuth: {}", f.error);
        if let Ok(mut slot) = self.failure.lock() {
            *slot = Some(f);
        }
    }

    fn creds(&self) -> Option<Creds> {
        let current = self.current.read().ok()?;
        let c = current.as_ref()?;
        let scheme = match &c.dpop {
            Some(_) if c.token.token_type.eq_ignore_ascii_case("dpop") => TokenType::DPoP,
            _ => TokenType::Bearer,
        };
        Some(Creds {
            generation: c.generation,
            scheme,
            token: c.token.access_token.clone(),
            dpop: c.dpop.clone(),
        })
    }

    fn current_token(&self) -> Option<StoredToken> {
        self.current.read().ok()?.as_ref().map(|c| c.token.clone())
    }

    fn set_current(&self, token: Option<StoredToken>) {
        let generation = self.generation.fetch_add(1, Ordering::SeqCst) + 1;
        // A DPoP-bound token is no use without its key: a damaged key is no token.
        let dpop = token
            .as_ref()
            .and_then(|t| t.dpop_key.as_ref())
            .and_then(|k| Dpop::restore(k).ok())
            .map(Arc::new);
        let view = token.as_ref().map(|t| TokenView {
            issuer: t.issuer.clone(),
            scopes: t.scopes.clone(),
            expires_at: t.expires_at,
            token_type: if t.token_type.eq_ignore_ascii_case("dpop") {
                "DPoP"
            } else {
                "Bearer"
            },
        });
        if let Ok(mut current) = self.current.write() {
            *current = token.map(|token| Current {
                token,
                generation,
                dpop,
            });
        }
        self.view.send_replace(view);
    }

    /// The credentials for the next request: the stored token on first use,
    /// refreshed first if it is about to expire.
    pub async fn prepare(&self) -> Option<Creds> {
        if !self.loaded.load(Ordering::SeqCst) {
            let _work = self.work.lock().await;
            if !self.loaded.swap(true, Ordering::SeqCst) {
                match self.store.tokens_for(&self.server) {
                    Ok(tokens) => self.set_current(tokens.into_iter().next()),
                    Err(e) => self.fail(e.into()),
                }
            }
        }
        let expiring = self.current.read().ok().and_then(|c| {
            c.as_ref().map(|c| {
                (
                    c.generation,
                    c.token.refresh_token.is_some()
                        && c.token
                            .expires_at
                            .is_some_and(|at| at <= now_secs() + REFRESH_AHEAD),
                )
            })
        });
        if let Some((generation, true)) = expiring {
            let _work = self.work.lock().await;
            if self.generation.load(Ordering::SeqCst) == generation {
                // A failed refresh leaves the old token: the server decides.
                let _ = self.refresh().await;
            }
        }
        self.creds()
    }

    /// A request sent with `sent` was refused: make it possible to retry.
    /// `false` means give up (the reason is in [`Self::failure`]).
    pub async fn recover(
        &self,
        sent: Option<u64>,
        refusal: Refusal<'_>,
        attempt: &mut Attempt,
    ) -> bool {
        let mut work = self.work.lock().await;
        let now = self.creds().map(|c| c.generation);
        if now.is_some() && now != sent {
            // Another request already got a new token while this one waited.
            return true;
        }
        let (header, step_up) = match refusal {
            Refusal::Unauthorized(h) => (h.unwrap_or(""), false),
            Refusal::Forbidden(h) => (h, true),
        };
        let challenge = challenge::parse(header);
        if step_up && !challenge.is_insufficient_scope() {
            return false;
        }
        if self.spec.mode == AuthMode::Auto
            && challenge.resource_metadata().is_none()
            && sent.is_none()
        {
            // Not an OAuth server as far as we can tell: the 401 stands.
            return false;
        }
        if !step_up && sent.is_some() {
            if !attempt.refreshed {
                attempt.refreshed = true;
                match self.refresh().await {
                    Ok(true) => return true,
                    Ok(false) => {}
                    Err(f) if matches!(f.error, OAuthError::RefreshRefused { .. }) => {}
                    Err(f) => {
                        self.fail(f);
                        self.lost.cancel();
                        return false;
                    }
                }
            }
            // The server no longer takes this token: it is of no use to anyone.
            self.forget_current();
        }
        match self
            .authorize(&mut work, &challenge, step_up, attempt)
            .await
        {
            Ok(()) => true,
            Err(f) => {
                let needs = !step_up;
                self.fail(f);
                if needs && sent.is_some() {
                    self.lost.cancel();
                }
                false
            }
        }
    }

    fn forget_current(&self) {
        if let Some(old) = self.current_token() {
            let _ = self.store.remove_token(&old.issuer, &old.resource);
        }
        self.set_current(None);
    }

    async fn authorize(
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
    fn keep(&self, token: StoredToken) {
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
    async fn refresh(&self) -> Result<bool, Failure> {
        let Some(old) = self.current_token() else {
            return Ok(false);
        };
        let Some(refresh_token) = old.refresh_token.clone() else {
            return Ok(false);
        };
        let dpop = old.dpop_key.as_ref().map(Dpop::restore).transpose()?;
        let endpoint = super::origin::endpoint("token endpoint", &old.token_endpoint)?;
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
