//! The HTTP client under rmcp's Streamable HTTP transport: rmcp's own reqwest
//! client, plus OAuth where the server uses it — the token on every request
//! (and only to this server: redirects to another origin are not followed),
//! and a refused request retried once the session has recovered.

use std::collections::HashMap;
use std::future::Future;
use std::sync::Arc;

use futures::stream::BoxStream;
use http::{HeaderName, HeaderValue};
use rmcp::model::ClientJsonRpcMessage;
use rmcp::transport::streamable_http_client::{
    SseError, StreamableHttpClient, StreamableHttpError, StreamableHttpPostResponse,
    StreamableHttpResponseLimits,
};
use sse_stream::Sse;

use super::session::{Attempt, AuthSession, Creds, Refusal};
use super::token::TokenType;

type Headers = HashMap<HeaderName, HeaderValue>;
type Error = StreamableHttpError<reqwest::Error>;

/// The harness's HTTP client for MCP servers.
#[derive(Clone)]
pub struct HttpClient {
    inner: reqwest::Client,
    auth: Option<Arc<AuthSession>>,
}

impl HttpClient {
    pub fn new(auth: Option<Arc<AuthSession>>) -> Self {
        let _ = rustls::crypto::ring::default_provider().install_default();
        // Authorization must never follow a redirect to another origin; reqwest
        // would drop it there, but an MCP endpoint has no business redirecting
        // elsewhere at all.
        let policy = reqwest::redirect::Policy::custom(|attempt| {
            let same = attempt
                .previous()
                .first()
                .is_some_and(|first| super::origin::same_origin(first, attempt.url()));
            if same && attempt.previous().len() < 5 {
                attempt.follow()
            } else {
                attempt.stop()
            }
        });
        let inner = reqwest::Client::builder()
            .redirect(policy)
            .build()
            .unwrap_or_default();
        Self { inner, auth }
    }

    /// The reqwest client under it (for a request rmcp's client cannot make,
    /// see `rawhttp`), to be sent through [`Self::authorized`].
    pub(in crate::mcp) fn http(&self) -> &reqwest::Client {
        &self.inner
    }

    /// Runs `op` with the session's credentials; a refused request is retried
    /// after the session recovered (refresh, sign-in, step-up), bounded.
    pub(in crate::mcp) async fn authorized<T, F, Fut>(
        &self,
        method: &str,
        uri: &str,
        headers: &Headers,
        op: F,
    ) -> Result<T, Error>
    where
        F: Fn(Option<String>, Headers) -> Fut,
        Fut: Future<Output = Result<T, Error>>,
    {
        let Some(auth) = &self.auth else {
            return op(None, headers.clone()).await;
        };
        let mut attempt = Attempt::default();
        let mut nonce_asked = false;
        loop {
            let creds = auth.prepare().await;
            let (bearer, with_creds) = present(creds.as_ref(), method, uri, headers);
            let result = op(bearer, with_creds).await;
            let challenge = match &result {
                Err(StreamableHttpError::AuthRequired(e)) => {
                    Some((false, Some(e.www_authenticate_header.clone())))
                }
                Err(StreamableHttpError::InsufficientScope(e)) => {
                    Some((true, Some(e.www_authenticate_header.clone())))
                }
                Err(StreamableHttpError::Client(e))
                    if e.status() == Some(reqwest::StatusCode::UNAUTHORIZED) =>
                {
                    Some((false, None))
                }
                _ => None,
            };
            let Some((forbidden, header)) = challenge else {
                return result;
            };
            // RFC 9449 §9: the server wants a nonce in the proof. rmcp's client
            // does not hand back the `DPoP-Nonce` header, so ask for it once.
            let wants_nonce = header
                .as_deref()
                .is_some_and(|h| super::challenge::parse(h).error() == Some("use_dpop_nonce"));
            if let (true, false, Some(c)) = (wants_nonce, nonce_asked, creds.as_ref()) {
                nonce_asked = true;
                if self.fetch_nonce(c, uri, headers).await {
                    continue;
                }
            }
            let refusal = match (&header, forbidden) {
                (Some(h), true) => Refusal::Forbidden(h),
                (h, _) => Refusal::Unauthorized(h.as_deref()),
            };
            let sent = creds.as_ref().map(|c| c.generation);
            if !auth.recover(sent, refusal, &mut attempt).await {
                return result;
            }
        }
    }

    /// Learns the resource server's DPoP nonce: a `ping` (harmless if it were
    /// ever answered) with a proof, whose refusal carries `DPoP-Nonce`.
    async fn fetch_nonce(&self, creds: &Creds, uri: &str, headers: &Headers) -> bool {
        let Some(dpop) = &creds.dpop else {
            return false;
        };
        let (_, headers) = present(Some(creds), "POST", uri, headers);
        let ping = r#"{"jsonrpc":"2.0","id":"dpop-nonce","method":"ping"}"#;
        let mut request = self
            .inner
            .post(uri)
            .header(http::header::CONTENT_TYPE, "application/json")
            .header(http::header::ACCEPT, "application/json, text/event-stream")
            .body(ping);
        for (name, value) in headers {
            request = request.header(name, value);
        }
        let Ok(response) = request.send().await else {
            return false;
        };
        let nonce = response
            .headers()
            .get("dpop-nonce")
            .and_then(|v| v.to_str().ok());
        match (nonce, url::Url::parse(uri)) {
            (Some(nonce), Ok(url)) => {
                dpop.remember_nonce(&url, Some(nonce));
                true
            }
            _ => false,
        }
    }
}

/// The credentials as rmcp's client takes them: a bearer token, or for a
/// DPoP-bound token the `DPoP` scheme and a fresh proof for this request.
fn present(
    creds: Option<&Creds>,
    method: &str,
    uri: &str,
    headers: &Headers,
) -> (Option<String>, Headers) {
    let Some(c) = creds else {
        return (None, headers.clone());
    };
    let (TokenType::DPoP, Some(dpop)) = (c.scheme, &c.dpop) else {
        return (Some(c.token.expose().to_string()), headers.clone());
    };
    let mut headers = headers.clone();
    let proof = url::Url::parse(uri)
        .ok()
        .and_then(|url| dpop.proof(method, &url, Some(c.token.expose())).ok())
        .and_then(|p| HeaderValue::from_str(&p).ok());
    let scheme = HeaderValue::from_str(&format!("DPoP {}", c.token.expose())).ok();
    if let (Some(proof), Some(mut scheme)) = (proof, scheme) {
        scheme.set_sensitive(true);
        headers.insert(http::header::AUTHORIZATION, scheme);
        headers.insert(HeaderName::from_static("dpop"), proof);
    }
    (None, headers)
}

impl StreamableHttpClient for HttpClient {
    type Error = reqwest::Error;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        _auth_header: Option<String>,
        custom_headers: Headers,
    ) -> Result<StreamableHttpPostResponse, Error> {
        self.authorized("POST", &uri, &custom_headers, |token, headers| {
            self.inner.post_message(
                uri.clone(),
                message.clone(),
                session_id.clone(),
                token,
                headers,
            )
        })
        .await
    }

    async fn post_message_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        _auth_header: Option<String>,
        custom_headers: Headers,
        max_sse_event_size: usize,
    ) -> Result<StreamableHttpPostResponse, Error> {
        self.authorized("POST", &uri, &custom_headers, |token, headers| {
            self.inner.post_message_with_max_sse_event_size(
                uri.clone(),
                message.clone(),
                session_id.clone(),
                token,
                headers,
                max_sse_event_size,
            )
        })
        .await
    }

    async fn post_message_with_response_limits(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        _auth_header: Option<String>,
        custom_headers: Headers,
        limits: StreamableHttpResponseLimits,
    ) -> Result<StreamableHttpPostResponse, Error> {
        self.authorized("POST", &uri, &custom_headers, |token, headers| {
            self.inner.post_message_with_response_limits(
                uri.clone(),
                message.clone(),
                session_id.clone(),
                token,
                headers,
                limits,
            )
        })
        .await
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        _auth_header: Option<String>,
        custom_headers: Headers,
    ) -> Result<(), Error> {
        // Closing never starts a sign-in: the current token, if any, and done.
        let creds = match &self.auth {
            Some(auth) => auth.prepare().await,
            None => None,
        };
        let (token, headers) = present(creds.as_ref(), "DELETE", &uri, &custom_headers);
        self.inner
            .delete_session(uri, session_id, token, headers)
            .await
    }

    async fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        _auth_header: Option<String>,
        custom_headers: Headers,
    ) -> Result<BoxStream<'static, Result<Sse, SseError>>, Error> {
        self.authorized("GET", &uri, &custom_headers, |token, headers| {
            self.inner.get_stream(
                uri.clone(),
                session_id.clone(),
                last_event_id.clone(),
                token,
                headers,
            )
        })
        .await
    }

    async fn get_stream_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        _auth_header: Option<String>,
        custom_headers: Headers,
        max_sse_event_size: usize,
    ) -> Result<BoxStream<'static, Result<Sse, SseError>>, Error> {
        self.authorized("GET", &uri, &custom_headers, |token, headers| {
            self.inner.get_stream_with_max_sse_event_size(
                uri.clone(),
                session_id.clone(),
                last_event_id.clone(),
                token,
                headers,
                max_sse_event_size,
            )
        })
        .await
    }
}
