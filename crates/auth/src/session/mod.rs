//! One connection's OAuth state: the token it sends (from the store, or just
//! obtained), refreshing it before it expires and once on a 401, and — when a
//! request is refused — discovering, signing in or stepping up, at most three
//! authorizations per request. Authorization is serialized: two requests
//! refused at once lead to one sign-in.

mod renew;

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

use tokio::sync::watch;
use tokio_util::sync::CancellationToken;
use url::Url;

use super::agent::UserAgent;
use super::budget::Budget;
use super::challenge;
use super::crypto::now_secs;
use super::discovery::Discovery;
use super::dpop::Dpop;
use super::error::{Failure, OAuthError};
use super::net::Net;
use super::spec::{AuthMode, AuthSpec, Resolved, Secret};
use super::store::{Store, StoredToken};
use super::token::TokenType;

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

    /// What a connect deadline cut short, if it was signing in: the step it
    /// was waiting for, in the operator's words.
    pub fn cut_short(&self, after: Duration) -> Option<Failure> {
        let step = self.net.in_flight()?;
        Some(Failure::from(OAuthError::SignInTimedOut { step, after }))
    }

    /// The token's issuer, scopes and expiry, as they change.
    pub fn view(&self) -> watch::Receiver<Option<TokenView>> {
        self.view.subscribe()
    }

    fn fail(&self, f: Failure) {
        tracing::warn!(alias = %self.alias, "OAuth: {}", f.error);
        if let Ok(mut slot) = self.failure.lock() {
            // "Needs a sign-in" after a refused refresh: the refusal says why.
            let keep = matches!(
                (&f.error, slot.as_ref().map(|s| &s.error)),
                (
                    OAuthError::NeedsSignIn { step_up: false, .. },
                    Some(OAuthError::RefreshRefused { .. })
                )
            );
            if !keep {
                *slot = Some(f);
            }
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
}
