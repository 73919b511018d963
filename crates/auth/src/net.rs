//! Every HTTP request OAuth makes: bounded in time (each request by the
//! connect timeout) and in size, to https or loopback http only, following
//! redirects only within one origin (discovery) or not at all (everything
//! that carries a credential).

use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::StreamExt as _;
use reqwest::header::{ACCEPT, CONTENT_TYPE, HeaderMap, HeaderValue, LOCATION};
use serde::de::DeserializeOwned;
use url::Url;

use super::error::OAuthError;
use super::origin;

/// The most any OAuth response may be. Metadata and token responses are a few
/// KiB; a server sending megabytes is misbehaving.
pub const MAX_BODY: usize = 256 * 1024;
/// Same-origin redirects followed while fetching a metadata document.
const MAX_REDIRECTS: usize = 3;

/// One answer, fully read (bounded).
#[derive(Debug)]
pub struct Reply {
    pub status: u16,
    pub headers: HeaderMap,
    pub body: Vec<u8>,
    pub url: Url,
}

impl Reply {
    pub fn ok(&self) -> bool {
        (200..300).contains(&self.status)
    }

    /// The body as JSON of type `T`; the problem is described without quoting
    /// the body (it may hold a token).
    pub fn json<T: DeserializeOwned>(&self, what: &'static str) -> Result<T, OAuthError> {
        serde_json::from_slice(&self.body).map_err(|e| OAuthError::BadDocument {
            what,
            url: self.url.to_string(),
            problem: describe_json_error(&e),
        })
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }
}

/// serde's message names the field and position, never the value.
fn describe_json_error(e: &serde_json::Error) -> String {
    match e.classify() {
        serde_json::error::Category::Data => format!("unexpected JSON content ({e})"),
        _ => "not a JSON document".into(),
    }
}

/// Clears the in-flight slot however the request ends (dropped included).
struct Done<'a>(&'a Mutex<Option<(&'static str, String)>>);

impl Drop for Done<'_> {
    fn drop(&mut self) {
        if let Ok(mut slot) = self.0.lock() {
            *slot = None;
        }
    }
}

/// The HTTP client of the OAuth layer.
#[derive(Clone)]
pub struct Net {
    client: reqwest::Client,
    per_request: Duration,
    /// The request in flight (what, URL): said when a deadline cuts it short.
    in_flight: Arc<Mutex<Option<(&'static str, String)>>>,
}

impl Net {
    pub fn new(per_request: Duration) -> Self {
        // reqwest is built without a default TLS provider; install ring once.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let client = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .timeout(per_request)
            .connect_timeout(per_request)
            .user_agent(concat!("mcp-harness/", env!("CARGO_PKG_VERSION")))
            .build()
            .unwrap_or_default();
        Self {
            client,
            per_request,
            in_flight: Arc::default(),
        }
    }

    /// "the token endpoint at URL", while a request is waiting for its answer.
    pub fn in_flight(&self) -> Option<String> {
        let slot = self.in_flight.lock().ok()?;
        slot.as_ref()
            .map(|(what, url)| format!("the {what} at {url}"))
    }

    pub fn per_request(&self) -> Duration {
        self.per_request
    }

    /// GET a JSON document, following same-origin redirects only.
    pub async fn get(&self, what: &'static str, url: &Url) -> Result<Reply, OAuthError> {
        let mut url = url.clone();
        for _ in 0..=MAX_REDIRECTS {
            origin::check(what, &url)?;
            let request = self
                .client
                .get(url.clone())
                .header(ACCEPT, HeaderValue::from_static("application/json"));
            let reply = self.send(what, &url, request).await?;
            if !(300..400).contains(&reply.status) {
                return Ok(reply);
            }
            let Some(next) = reply
                .header(LOCATION.as_str())
                .and_then(|l| url.join(l).ok())
            else {
                return Ok(reply);
            };
            if !origin::same_origin(&url, &next) {
                return Err(OAuthError::BadDocument {
                    what,
                    url: url.to_string(),
                    problem: format!("it redirects to another origin ({next}); not followed"),
                });
            }
            url = next;
        }
        Err(OAuthError::BadDocument {
            what,
            url: url.to_string(),
            problem: format!("more than {MAX_REDIRECTS} redirects"),
        })
    }

    /// POST a form (`application/x-www-form-urlencoded`); never follows redirects.
    pub async fn post_form(
        &self,
        what: &'static str,
        url: &Url,
        form: &[(&str, &str)],
        headers: HeaderMap,
    ) -> Result<Reply, OAuthError> {
        origin::check(what, url)?;
        let body = url::form_urlencoded::Serializer::new(String::new())
            .extend_pairs(form)
            .finish();
        let request = self
            .client
            .post(url.clone())
            .headers(headers)
            .header(
                CONTENT_TYPE,
                HeaderValue::from_static("application/x-www-form-urlencoded"),
            )
            .header(ACCEPT, HeaderValue::from_static("application/json"))
            .body(body);
        self.send(what, url, request).await
    }

    /// POST a JSON body; never follows redirects.
    pub async fn post_json(
        &self,
        what: &'static str,
        url: &Url,
        body: &serde_json::Value,
    ) -> Result<Reply, OAuthError> {
        origin::check(what, url)?;
        let request = self
            .client
            .post(url.clone())
            .header(CONTENT_TYPE, HeaderValue::from_static("application/json"))
            .header(ACCEPT, HeaderValue::from_static("application/json"))
            .body(body.to_string());
        self.send(what, url, request).await
    }

    async fn send(
        &self,
        what: &'static str,
        url: &Url,
        request: reqwest::RequestBuilder,
    ) -> Result<Reply, OAuthError> {
        let failed = |e: reqwest::Error| self.transport_error(what, url, &e);
        // reqwest's own timeout covers the body too; this one is a backstop in
        // case a slow body trickles in just under it chunk by chunk.
        let exchange = async {
            let response = request.send().await.map_err(failed)?;
            let status = response.status().as_u16();
            let headers = response.headers().clone();
            let mut body = Vec::new();
            let mut stream = response.bytes_stream();
            while let Some(chunk) = stream.next().await {
                let chunk = chunk.map_err(failed)?;
                if body.len() + chunk.len() > MAX_BODY {
                    return Err(OAuthError::TooLarge {
                        what,
                        url: url.to_string(),
                        limit: MAX_BODY,
                    });
                }
                body.extend_from_slice(&chunk);
            }
            Ok(Reply {
                status,
                headers,
                body,
                url: url.clone(),
            })
        };
        if let Ok(mut slot) = self.in_flight.lock() {
            *slot = Some((what, url.to_string()));
        }
        let _done = Done(&self.in_flight);
        match tokio::time::timeout(self.per_request + Duration::from_millis(250), exchange).await {
            Ok(result) => result,
            Err(_) => Err(OAuthError::TimedOut {
                what,
                url: url.to_string(),
                after: self.per_request,
            }),
        }
    }

    fn transport_error(&self, what: &'static str, url: &Url, e: &reqwest::Error) -> OAuthError {
        if e.is_timeout() {
            return OAuthError::TimedOut {
                what,
                url: url.to_string(),
                after: self.per_request,
            };
        }
        OAuthError::Unreachable {
            what,
            url: url.to_string(),
            detail: super::error::error_chain(e),
        }
    }
}
