//! Who takes the authorization URL to a person and brings the redirect back:
//! a browser and the operator (the `login` command, the TUI's sign-in window),
//! or, for the conformance suite, an unattended stand-in that follows the
//! authorization server's redirects itself.

use std::time::Duration;

use futures::future::BoxFuture;
use url::Url;

use super::error::OAuthError;
use super::listener::{Callback, Listener};
use super::origin;

/// When an agent may be used.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AgentKind {
    /// No person involved (the conformance suite): any time, even mid-call.
    Unattended,
    /// A person: only while the operator asked to sign in, never behind a call.
    Human,
}

/// One authorization to present.
pub struct Prompt<'a> {
    pub alias: &'a str,
    pub url: &'a Url,
    pub listener: &'a mut Listener,
}

pub trait UserAgent: Send + Sync {
    fn kind(&self) -> AgentKind;

    /// Presents `prompt.url` and returns the redirect that came back (from the
    /// listener, or pasted). Not validated here.
    fn authorize<'a>(&'a self, prompt: Prompt<'a>) -> BoxFuture<'a, Result<Callback, OAuthError>>;
}

/// Follows the authorization server's redirects (no person approves anything:
/// the suite's server redirects at once) until they reach the listener.
pub struct Unattended {
    client: reqwest::Client,
    wait: Duration,
}

impl Unattended {
    pub fn new(wait: Duration) -> Self {
        let _ = rustls::crypto::ring::default_provider().install_default();
        let client = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .timeout(wait)
            .build()
            .unwrap_or_default();
        Self { client, wait }
    }
}

const MAX_HOPS: usize = 5;

impl UserAgent for Unattended {
    fn kind(&self) -> AgentKind {
        AgentKind::Unattended
    }

    fn authorize<'a>(&'a self, prompt: Prompt<'a>) -> BoxFuture<'a, Result<Callback, OAuthError>> {
        Box::pin(async move {
            let redirect = prompt.listener.redirect_uri().clone();
            let mut url = prompt.url.clone();
            for _ in 0..MAX_HOPS {
                let unreachable = |e: reqwest::Error| OAuthError::Unreachable {
                    what: "authorization endpoint",
                    url: url.to_string(),
                    detail: super::error::error_chain(&e),
                };
                let response = self
                    .client
                    .get(url.clone())
                    .send()
                    .await
                    .map_err(unreachable)?;
                let location = response
                    .headers()
                    .get(reqwest::header::LOCATION)
                    .and_then(|l| l.to_str().ok())
                    .and_then(|l| url.join(l).ok());
                let Some(next) = location else {
                    return Err(OAuthError::NoCode);
                };
                if next.host_str() == redirect.host_str() && next.path() == redirect.path() {
                    // It means us; anything else about it is checked like a paste.
                    super::listener::parse_pasted(next.as_str(), &redirect)?;
                    let _ = self.client.get(next).send().await;
                    return tokio::time::timeout(self.wait, prompt.listener.next())
                        .await
                        .ok()
                        .flatten()
                        .ok_or(OAuthError::NoCode);
                }
                origin::check("authorization endpoint", &next)?;
                url = next;
            }
            Err(OAuthError::NoCode)
        })
    }
}
