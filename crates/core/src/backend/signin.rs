//! Signing in from the TUI: the operator asks (`s`), the backend connects the
//! alias with this agent, which opens the browser when there is one and shows
//! the sign-in window (the URL, the waiting, a field for a pasted redirect),
//! then waits for the listener, a paste or the operator's cancel. Signing out
//! revokes the alias's tools at once, then its token.

use std::sync::{Arc, Mutex};

use futures::future::BoxFuture;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::Backend;
use crate::mcp::auth::{AgentKind, Callback, OAuthError, Prompt, UserAgent, browser, parse_pasted};
use crate::protocol::{BackendEvent, SignInView};

/// The TUI as the sign-in agent (one sign-in at a time).
pub struct TuiSignIn {
    events: mpsc::UnboundedSender<BackendEvent>,
    pending: Mutex<Option<Pending>>,
}

struct Pending {
    paste: mpsc::UnboundedSender<String>,
    cancel: CancellationToken,
}

impl TuiSignIn {
    pub fn new(events: mpsc::UnboundedSender<BackendEvent>) -> Self {
        Self {
            events,
            pending: Mutex::new(None),
        }
    }

    /// The operator pasted the address the browser was sent to.
    pub fn paste(&self, text: String) {
        if let Some(p) = self.pending.lock().ok().as_ref().and_then(|p| p.as_ref()) {
            let _ = p.paste.send(text);
        }
    }

    pub fn cancel(&self) {
        if let Some(p) = self.pending.lock().ok().as_ref().and_then(|p| p.as_ref()) {
            p.cancel.cancel();
        }
    }

    fn set(&self, pending: Option<Pending>) {
        if let Ok(mut slot) = self.pending.lock() {
            *slot = pending;
        }
    }
}

impl UserAgent for TuiSignIn {
    fn kind(&self) -> AgentKind {
        AgentKind::Human
    }

    fn authorize<'a>(&'a self, p: Prompt<'a>) -> BoxFuture<'a, Result<Callback, OAuthError>> {
        Box::pin(async move {
            let (tx, mut pasted) = mpsc::unbounded_channel();
            let cancel = CancellationToken::new();
            self.set(Some(Pending {
                paste: tx,
                cancel: cancel.clone(),
            }));
            let redirect = p.listener.redirect_uri().clone();
            let _ = self.events.send(BackendEvent::SignInStarted(SignInView {
                alias: p.alias.to_string(),
                url: p.url.to_string(),
                redirect: redirect.to_string(),
                browser: browser::open(p.url.as_str()).err().map(|e| e.to_string()),
            }));
            let outcome = loop {
                tokio::select! {
                    cb = p.listener.next() => {
                        break cb.ok_or(OAuthError::Listener { problem: "it stopped".into() });
                    }
                    Some(text) = pasted.recv() => match parse_pasted(&text, &redirect) {
                        Ok(cb) => break Ok(cb),
                        Err(e) => {
                            let _ = self.events.send(BackendEvent::SignInPasteRefused(e.to_string()));
                        }
                    },
                    _ = cancel.cancelled() => break Err(OAuthError::Cancelled),
                }
            };
            self.set(None);
            outcome
        })
    }
}

impl Backend {
    /// `s`: connect the alias, signing in if it asks (the window shows).
    pub(super) fn sign_in(&mut self, alias: String) {
        let (hub, events) = (self.hub.clone(), self.events.clone());
        self.jobs.spawn(async move {
            let (ok, text) = match hub.sign_in(&alias).await {
                Ok(report) => match report.outcome {
                    Ok(tools) => {
                        let who = hub
                            .token_view(&alias)
                            .map(|v| {
                                format!(
                                    "signed in to `{alias}` ({})",
                                    crate::sanitize::inert_line(&v.issuer, 80)
                                )
                            })
                            .unwrap_or_else(|| format!("`{alias}` did not ask for a sign-in"));
                        (
                            true,
                            format!("{who}; connected: {} tools exposed", tools.len()),
                        )
                    }
                    Err(e) => (
                        false,
                        format!(
                            "`{alias}` {}: {} — {}",
                            e.code,
                            crate::sanitize::inert_line(&e.message, 300),
                            crate::sanitize::inert_line(&e.hint, 200)
                        ),
                    ),
                },
                Err(e) => (false, e.to_string()),
            };
            let _ = events.send(BackendEvent::SignInEnded {
                alias,
                ok,
                text: text.clone(),
            });
            let _ = events.send(BackendEvent::Notice(text));
        });
    }

    /// `o`: the alias's tools go at once; then its token is revoked and deleted.
    pub(super) fn sign_out(&mut self, alias: String) {
        let (hub, events) = (self.hub.clone(), self.events.clone());
        self.jobs.spawn(async move {
            let text = match hub.sign_out(&alias).await {
                Ok(r) if r.removed == 0 => format!("nothing was stored for `{alias}`"),
                Ok(r) => format!(
                    "signed out of `{alias}`: its tools were revoked, {} token(s) deleted, {} revoked at the authorization server",
                    r.removed, r.revoked
                ),
                Err(e) => e.to_string(),
            };
            let _ = events.send(BackendEvent::CommandResult(text));
        });
    }
}

/// Shared by the backend (commands) and the hub (as its sign-in agent).
pub type SignInAgent = Arc<TuiSignIn>;
