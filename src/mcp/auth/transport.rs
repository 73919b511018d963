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

    /// Runs `op` with the session's credentials; a refused request is retried
    /// after the session recovered (refresh, sign-in, step-up), bounded.
    async fn authorized<T, F, Fut>(&self, headers: &Headers, op: F) -> Result<T, Error>
    where
        F: Fn(Option<String>, Headers) -> Fut,
        Fut: Future<Output = Result<T, Error>>,
    {
        let Some(auth) = &self.auth else {
            return op(None, headers.clone()).await;
        };
        let mut attempt = Attempt::default();
        loop {
            let creds = auth.prepare().await;
            let (bearer, headers) = present(creds.as_ref(), headers);
            let result = op(bearer, headers).await;
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
}

/// The credentials as rmcp's client takes them: a bearer token, or headers.
fn present(creds: Option<&Creds>, headers: &Headers) -> (Option<String>, Headers) {
    match creds {
        Some(c) if c.scheme == TokenType::Bearer => {
            (Some(c.token.expose().to_string()), headers.clone())
        }
        Some(c) => {
            let mut headers = headers.clone();
            if let Ok(mut value) = HeaderValue::from_str(&format!("DPoP {}", c.token.expose())) {
                value.set_sensitive(true);
                headers.insert(http::header::AUTHORIZATION, value);
            }
            (None, headers)
        }
        None => (None, headers.clone()),
    }
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
        self.authorized(&custom_headers, |token, headers| {
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
        self.authorized(&custom_headers, |token, headers| {
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
        self.authorized(&custom_headers, |token, headers| {
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
        let (token, headers) = present(creds.as_ref(), &custom_headers);
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
        self.authorized(&custom_headers, |token, headers| {
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
        self.authorized(&custom_headers, |token, headers| {
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
