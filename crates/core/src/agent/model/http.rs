//! The HTTP side the streaming providers share: one reqwest client per provider,
//! the request/retry loop, and reading the event stream into a provider's
//! [`Decoder`]. The providers only say what the wire looks like.

use std::time::Duration;

use bytes::Bytes;
use reqwest::header::{CONTENT_TYPE, HeaderMap, HeaderValue};
use serde_json::Value;
use sse_stream::Sse;

use super::api_error::{self, ApiError, Verdict};
use super::sse::Events;
use super::{HttpSettings, ModelError, ModelReply, StreamEvent};

/// A dead address or a black-holed port fails here rather than hanging the turn.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(30);
/// Silence this long means the stream is dead. Generous, because a local model
/// may think for minutes over a long prompt before its first token (hosted APIs
/// send pings meanwhile).
pub(crate) const READ_TIMEOUT: Duration = Duration::from_secs(300);
/// Error bodies are read only this far: we need the message, not a novel.
const MAX_ERROR_BODY: usize = 64 << 10;

/// A provider's reading of its event stream: a pure state machine fed one
/// event at a time, so the loop below owns all the I/O.
pub(crate) trait Decoder: Send {
    /// Takes one event, passing text and tool-call starts to `out` as they come.
    fn feed(&mut self, event: &Sse, out: &mut dyn FnMut(StreamEvent)) -> Result<Flow, StreamError>;
    /// What a stream that ended short of a reply was missing.
    type Incomplete: std::fmt::Display;
    /// The complete reply. `done`: the terminal event arrived (otherwise the
    /// body simply ended). `Err` says what was missing.
    fn finish(self, done: bool) -> Result<ModelReply, Self::Incomplete>;
}

/// Whether the stream goes on after an event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Flow {
    More,
    /// The terminal event (`message_stop`, `[DONE]`): stop reading.
    Done,
}

/// An event the decoder cannot accept.
#[derive(Debug)]
pub(crate) enum StreamError {
    /// The provider reported an error inside the stream (e.g. overloaded).
    Api(ApiError),
    /// The event does not follow the wire format.
    Malformed(String),
}

/// One configured HTTP endpoint and its client.
pub(crate) struct Endpoint {
    pub provider: &'static str,
    pub settings: HttpSettings,
    /// Building a client can fail (TLS setup); that surfaces on the first
    /// request instead of making every constructor fallible.
    client: Result<reqwest::Client, reqwest::Error>,
}

/// How one attempt ended, short of a reply.
enum Failure {
    Retry(ApiError),
    Fatal(ModelError),
}

impl Endpoint {
    pub fn new(provider: &'static str, settings: HttpSettings) -> Self {
        // reqwest is built without a default TLS provider; install ring once per process.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let client = reqwest::Client::builder()
            .connect_timeout(CONNECT_TIMEOUT)
            .read_timeout(READ_TIMEOUT)
            .build();
        Self {
            provider,
            settings,
            client,
        }
    }

    /// `base_url` + `path`, whatever trailing slash the operator wrote.
    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.settings.base_url.trim_end_matches('/'))
    }

    /// The key, trimmed; `None` when unset or blank.
    fn key(&self) -> Option<&str> {
        self.settings
            .api_key
            .as_deref()
            .map(str::trim)
            .filter(|k| !k.is_empty())
    }

    /// The key as a header value (`prefix` + key), marked sensitive so it never
    /// appears in debug output. `None` when no key is set.
    pub fn key_header(&self, prefix: &str) -> Result<Option<HeaderValue>, ModelError> {
        let Some(key) = self.key() else {
            return Ok(None);
        };
        let mut value =
            HeaderValue::from_str(&format!("{prefix}{key}")).map_err(|_| ModelError::Auth {
                provider: self.provider,
                status: 0,
                message: "the key contains characters that cannot go in an HTTP header".into(),
            })?;
        value.set_sensitive(true);
        Ok(Some(value))
    }

    /// POSTs `body` to `url` and decodes the streamed reply, retrying per the
    /// retry policy while nothing has reached `on_event` yet.
    pub async fn stream<D: Decoder>(
        &self,
        url: &str,
        headers: HeaderMap,
        body: &Value,
        new_decoder: impl Fn() -> D,
        on_event: &mut (dyn FnMut(StreamEvent) + Send),
    ) -> Result<ModelReply, ModelError> {
        let body = Bytes::from(serde_json::to_vec(body).map_err(|e| self.malformed(e))?);
        let policy = self.settings.retry;
        let attempts = policy.max_attempts.max(1);
        let mut failed = 0;
        loop {
            let attempt = self.attempt(url, &headers, &body, new_decoder(), on_event);
            let error = match attempt.await {
                Ok(reply) => return Ok(reply),
                Err(Failure::Fatal(error)) => return Err(error),
                Err(Failure::Retry(error)) => error,
            };
            failed += 1;
            tracing::warn!(
                provider = self.provider,
                status = error.status,
                attempt = failed,
                "model request failed; {}",
                error.message
            );
            if failed >= attempts {
                return Err(ModelError::Exhausted {
                    provider: self.provider,
                    attempts: failed,
                    status: error.status,
                    message: error.message,
                });
            }
            tokio::time::sleep(api_error::backoff(&policy, failed, error.retry_after)).await;
        }
    }

    async fn attempt<D: Decoder>(
        &self,
        url: &str,
        headers: &HeaderMap,
        body: &Bytes,
        mut decoder: D,
        on_event: &mut (dyn FnMut(StreamEvent) + Send),
    ) -> Result<ModelReply, Failure> {
        let client = self.client.as_ref().map_err(|error| {
            Failure::Fatal(ModelError::Unreachable {
                url: url.to_string(),
                message: format!("cannot set up the HTTP client: {}", describe(error)),
            })
        })?;
        let response = client
            .post(url)
            .headers(headers.clone())
            .header(CONTENT_TYPE, "application/json")
            .body(body.clone())
            .send()
            .await
            .map_err(|e| {
                Failure::Fatal(ModelError::Unreachable {
                    url: url.to_string(),
                    message: describe(&e),
                })
            })?;
        let status = response.status().as_u16();
        if !response.status().is_success() {
            let retry_after = api_error::retry_after(response.headers());
            let (bytes, truncated) = read_bounded(response, MAX_ERROR_BODY).await;
            let mut error = ApiError::from_body(status, &bytes, truncated);
            error.retry_after = retry_after;
            if status == 404 && !truncated && !is_structured(&bytes) {
                // Likely a wrong path rather than a wrong model: say where we asked.
                let said = if error.message.is_empty() {
                    "Not Found"
                } else {
                    &error.message
                };
                error.message = format!("{url} answered 404 ({said}); check base_url too");
            }
            return Err(self.judge(error, false));
        }
        if let Some(kind) = content_type(response.headers()).filter(|t| !is_event_stream(t)) {
            let (bytes, _) = read_bounded(response, MAX_ERROR_BODY).await;
            let text = api_error::clip(&String::from_utf8_lossy(&bytes), 200);
            return Err(Failure::Fatal(self.malformed(format!(
                "expected an event stream (text/event-stream) but got {kind}: {text}"
            ))));
        }

        let mut events = Events::new(response);
        let mut streamed = false;
        loop {
            let event = events
                .next()
                .await
                .map_err(|detail| Failure::Fatal(self.malformed(detail)))?;
            let Some(event) = event else {
                return decoder
                    .finish(false)
                    .map_err(|detail| Failure::Fatal(self.malformed(detail)));
            };
            let mut out = |e: StreamEvent| {
                streamed = true;
                on_event(e);
            };
            match decoder.feed(&event, &mut out) {
                Ok(Flow::More) => {}
                Ok(Flow::Done) => {
                    return decoder
                        .finish(true)
                        .map_err(|detail| Failure::Fatal(self.malformed(detail)));
                }
                Err(StreamError::Malformed(detail)) => {
                    return Err(Failure::Fatal(self.malformed(detail)));
                }
                Err(StreamError::Api(error)) => return Err(self.judge(error, streamed)),
            }
        }
    }

    fn judge(&self, error: ApiError, streamed: bool) -> Failure {
        let model = &self.settings.model;
        match api_error::judge(self.provider, model, self.key(), error, streamed) {
            Verdict::Retry(error) => Failure::Retry(error),
            Verdict::Fail(error) => Failure::Fatal(error),
        }
    }

    fn malformed(&self, detail: impl ToString) -> ModelError {
        ModelError::Malformed {
            provider: self.provider,
            detail: detail.to_string(),
        }
    }
}

/// Reads at most `limit` bytes of a body; `true` when there was more.
async fn read_bounded(mut response: reqwest::Response, limit: usize) -> (Vec<u8>, bool) {
    let mut bytes = Vec::new();
    while let Ok(Some(chunk)) = response.chunk().await {
        bytes.extend_from_slice(&chunk);
        if bytes.len() > limit {
            bytes.truncate(limit);
            return (bytes, true);
        }
    }
    (bytes, false)
}

/// Whether an error body is one of the JSON error shapes (not an HTML page, say).
fn is_structured(body: &[u8]) -> bool {
    serde_json::from_slice::<Value>(body)
        .ok()
        .and_then(|v| ApiError::from_json(404, &v))
        .is_some()
}

fn content_type(headers: &HeaderMap) -> Option<String> {
    let value = headers.get(CONTENT_TYPE)?.to_str().ok()?;
    Some(value.trim().to_ascii_lowercase())
}

fn is_event_stream(content_type: &str) -> bool {
    content_type.starts_with("text/event-stream")
}

/// What went wrong under a reqwest error: its causes ("client error (Connect):
/// tcp connect error: Connection refused"). reqwest's own message only says
/// "error sending request for url (…)", and the URL is reported separately.
pub(crate) fn describe(error: &reqwest::Error) -> String {
    let mut causes: Vec<String> = Vec::new();
    let mut source = std::error::Error::source(error);
    while let Some(cause) = source {
        let text = cause.to_string();
        if !causes.iter().any(|c| c.contains(&text)) {
            causes.push(text);
        }
        source = cause.source();
    }
    if causes.is_empty() {
        error.to_string()
    } else {
        causes.join(": ")
    }
}
