//! The Streamable HTTP client under rmcp: reqwest, except that a `tools/list`
//! POST made while the connection's raw tap is armed is sent here, so the
//! listing sees the answer as the server sent it (see `rawtap`). rmcp's own
//! client parses the body straight into its typed model, which drops a tool's
//! `execution` and, on 2026-07-28, whole tools with invalid `x-mcp-header`
//! annotations — silently, which rule 5 cannot allow.
//!
//! Everything else (other requests, notifications, the GET stream, DELETE)
//! goes to the harness's HTTP client (rmcp's reqwest client with OAuth)
//! unchanged; the tapped POST carries the same credentials.

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use futures::StreamExt as _;
use futures::stream::BoxStream;
use http::{HeaderName, HeaderValue, StatusCode, header};
use rmcp::model::{ClientJsonRpcMessage, ClientRequest, ServerJsonRpcMessage};
use rmcp::transport::streamable_http_client::{
    AuthRequiredError, InsufficientScopeError, SseError, StreamableHttpClient, StreamableHttpError,
    StreamableHttpPostResponse, StreamableHttpResponseLimits,
};
use sse_stream::{Sse, SseStream};

use super::auth::transport::HttpClient;
use super::rawtap::RawTap;

type HttpError = StreamableHttpError<reqwest::Error>;

#[derive(Clone)]
pub struct RawHttpClient {
    inner: HttpClient,
    tap: Arc<RawTap>,
    streams: Arc<OpenStreams>,
}

/// How many GET event streams of a connection are open now: while one is,
/// the server's end shows as its end, and no liveness check is needed.
#[derive(Debug, Default)]
pub struct OpenStreams(AtomicUsize);

impl OpenStreams {
    pub fn any(&self) -> bool {
        self.0.load(Ordering::Relaxed) > 0
    }
}

/// Counts one open stream until dropped with it.
struct Counted(Arc<OpenStreams>);

impl Counted {
    fn new(streams: &Arc<OpenStreams>) -> Self {
        streams.0.fetch_add(1, Ordering::Relaxed);
        Self(Arc::clone(streams))
    }
}

impl Drop for Counted {
    fn drop(&mut self) {
        self.0.0.fetch_sub(1, Ordering::Relaxed);
    }
}

impl RawHttpClient {
    pub fn new(inner: HttpClient, tap: Arc<RawTap>, streams: Arc<OpenStreams>) -> Self {
        Self {
            inner,
            tap,
            streams,
        }
    }

    /// `stream`, counted open while it lives.
    fn counted(
        &self,
        stream: BoxStream<'static, Result<Sse, SseError>>,
    ) -> BoxStream<'static, Result<Sse, SseError>> {
        let open = Counted::new(&self.streams);
        stream
            .inspect(move |_| {
                let _ = &open;
            })
            .boxed()
    }

    fn tapped(&self, message: &ClientJsonRpcMessage) -> bool {
        self.tap.is_armed()
            && matches!(
                message,
                ClientJsonRpcMessage::Request(r)
                    if matches!(&r.request, ClientRequest::CustomRequest(c) if c.method == "tools/list")
            )
    }

    async fn post_tapped(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_token: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        limits: StreamableHttpResponseLimits,
    ) -> Result<StreamableHttpPostResponse, HttpError> {
        let mut request = self
            .inner
            .http()
            .post(uri.as_ref())
            .header(header::ACCEPT, "text/event-stream, application/json");
        if let Some(token) = auth_token {
            request = request.bearer_auth(token);
        }
        for (name, value) in custom_headers {
            request = request.header(name, value);
        }
        if let Some(session) = &session_id {
            request = request.header("mcp-session-id", session.as_ref());
        }
        let response = request
            .json(&message)
            .send()
            .await
            .map_err(StreamableHttpError::Client)?;
        let status = response.status();
        let text_header = |name: &str| {
            response
                .headers()
                .get(name)
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned)
        };
        let challenge = text_header(header::WWW_AUTHENTICATE.as_str());
        match (status, challenge) {
            (StatusCode::UNAUTHORIZED, Some(challenge)) => {
                return Err(StreamableHttpError::AuthRequired(AuthRequiredError::new(
                    challenge,
                )));
            }
            (StatusCode::FORBIDDEN, Some(challenge)) => {
                return Err(StreamableHttpError::InsufficientScope(
                    InsufficientScopeError::new(challenge, None),
                ));
            }
            (StatusCode::NOT_FOUND, _) if session_id.is_some() => {
                return Err(StreamableHttpError::SessionExpired);
            }
            _ => {}
        }
        let session = text_header("mcp-session-id");
        let content_type = text_header(header::CONTENT_TYPE.as_str()).unwrap_or_default();
        if !status.is_success() {
            let body = read_bounded(response, limits.max_error_response_size).await?;
            return match serde_json::from_slice::<ServerJsonRpcMessage>(&body) {
                Ok(error @ ServerJsonRpcMessage::Error(_)) => {
                    Ok(StreamableHttpPostResponse::Json(error, session))
                }
                _ => Err(StreamableHttpError::UnexpectedServerResponse(Cow::Owned(
                    format!("HTTP {status}"),
                ))),
            };
        }
        if content_type.starts_with("text/event-stream") {
            let tap = Arc::clone(&self.tap);
            let events: BoxStream<'static, Result<Sse, SseError>> =
                SseStream::from_bytes_stream(response.bytes_stream())
                    .map(move |event| {
                        if let Ok(Sse {
                            data: Some(data), ..
                        }) = &event
                        {
                            tap.message(data.as_bytes().to_vec());
                        }
                        event
                    })
                    .boxed();
            return Ok(StreamableHttpPostResponse::Sse(events, session));
        }
        let body = read_bounded(response, limits.max_json_response_size).await?;
        self.tap.message(body.clone());
        let message = serde_json::from_slice(&body).map_err(StreamableHttpError::Deserialize)?;
        Ok(StreamableHttpPostResponse::Json(message, session))
    }
}

/// The body, refused beyond `max` bytes.
async fn read_bounded(response: reqwest::Response, max: usize) -> Result<Vec<u8>, HttpError> {
    let mut body = Vec::new();
    let mut chunks = response.bytes_stream();
    while let Some(chunk) = chunks.next().await {
        let chunk = chunk.map_err(StreamableHttpError::Client)?;
        if body.len() + chunk.len() > max {
            return Err(StreamableHttpError::ResponseBodyTooLarge { max_size: max });
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

impl StreamableHttpClient for RawHttpClient {
    type Error = reqwest::Error;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_token: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<StreamableHttpPostResponse, HttpError> {
        self.post_message_with_response_limits(
            uri,
            message,
            session_id,
            auth_token,
            custom_headers,
            StreamableHttpResponseLimits::default(),
        )
        .await
    }

    async fn post_message_with_response_limits(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_token: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        limits: StreamableHttpResponseLimits,
    ) -> Result<StreamableHttpPostResponse, HttpError> {
        if self.tapped(&message) {
            return self
                .inner
                .authorized("POST", &uri, &custom_headers, |token, headers| {
                    self.post_tapped(
                        uri.clone(),
                        message.clone(),
                        session_id.clone(),
                        token.or_else(|| auth_token.clone()),
                        headers,
                        limits,
                    )
                })
                .await;
        }
        self.inner
            .post_message_with_response_limits(
                uri,
                message,
                session_id,
                auth_token,
                custom_headers,
                limits,
            )
            .await
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        auth_token: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<(), HttpError> {
        self.inner
            .delete_session(uri, session_id, auth_token, custom_headers)
            .await
    }

    async fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_token: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<BoxStream<'static, Result<Sse, SseError>>, HttpError> {
        self.inner
            .get_stream(uri, session_id, last_event_id, auth_token, custom_headers)
            .await
            .map(|stream| self.counted(stream))
    }

    async fn get_stream_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_token: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Result<BoxStream<'static, Result<Sse, SseError>>, HttpError> {
        self.inner
            .get_stream_with_max_sse_event_size(
                uri,
                session_id,
                last_event_id,
                auth_token,
                custom_headers,
                max_sse_event_size,
            )
            .await
            .map(|stream| self.counted(stream))
    }
}
