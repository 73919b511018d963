//! What a provider said went wrong, from an HTTP error body or an error event in
//! the stream, and the one place that decides what each failure becomes: a
//! retry, or a `ModelError` the operator can act on.

use std::time::Duration;

use reqwest::header::HeaderMap;
use serde_json::Value;

use super::{ModelError, RetryPolicy};

/// Error kinds (`type` or `code`) that mean "no such model", across Anthropic,
/// OpenAI, vLLM and friends; a 404 means the same.
const NOT_FOUND_KINDS: &[&str] = &["not_found_error", "model_not_found", "NotFoundError"];

/// Server text is shown to the operator on one line; longer is noise.
const MAX_MESSAGE_CHARS: usize = 400;

/// One failure as the provider described it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ApiError {
    /// The HTTP status, or the status the provider's error kind stands for.
    pub status: u16,
    pub message: String,
    /// The provider said the model (or endpoint) does not exist.
    pub not_found: bool,
    /// The server asked us to wait this long before trying again.
    pub retry_after: Option<Duration>,
}

impl ApiError {
    /// From an error response body (`truncated`: we stopped reading it at our bound).
    pub fn from_body(status: u16, body: &[u8], truncated: bool) -> Self {
        let text = String::from_utf8_lossy(body);
        let parsed = if truncated {
            None
        } else {
            serde_json::from_str::<Value>(&text).ok()
        };
        if let Some(error) = parsed.as_ref().and_then(|v| Self::from_json(status, v)) {
            return error;
        }
        let message = if truncated {
            format!(
                "(an error body too large to read; it starts: {})",
                clip(&text, 200)
            )
        } else {
            clip(&text, MAX_MESSAGE_CHARS)
        };
        Self {
            status,
            message,
            not_found: status == 404,
            retry_after: None,
        }
    }

    /// From a JSON error object in any of the shapes providers use:
    /// `{"error": {"message", "type", "code"}}` (Anthropic, OpenAI, Ollama,
    /// llama.cpp), `{"error": "text"}`, or a flat `{"message", "type", "code"}`
    /// (vLLM). `None` when the value carries no message at all.
    pub fn from_json(status: u16, value: &Value) -> Option<Self> {
        let (message, holder) = match value.get("error") {
            Some(Value::String(text)) => (text.clone(), value),
            Some(inner @ Value::Object(_)) => (str_field(inner, "message")?, inner),
            _ => (str_field(value, "message")?, value),
        };
        let kinds = [str_field(holder, "type"), str_field(holder, "code")];
        let not_found = status == 404
            || kinds
                .iter()
                .flatten()
                .any(|k| NOT_FOUND_KINDS.contains(&k.as_str()));
        Some(Self {
            status,
            message: clip(&message, MAX_MESSAGE_CHARS),
            not_found,
            retry_after: None,
        })
    }
}

/// What the request loop does with a failure.
#[derive(Debug)]
pub(crate) enum Verdict {
    /// Worth another attempt (rate limited, overloaded, server error) — if
    /// attempts remain.
    Retry(ApiError),
    /// Final.
    Fail(ModelError),
}

/// Decides a failure. `streamed`: some of the reply already reached `on_event`,
/// so a retry would show the operator the same text twice; it is not retried.
/// `key` is redacted from the server's text, should a server ever echo it.
pub(crate) fn judge(
    provider: &'static str,
    model: &str,
    key: Option<&str>,
    mut error: ApiError,
    streamed: bool,
) -> Verdict {
    if let Some(key) = key.filter(|k| !k.is_empty()) {
        error.message = error.message.replace(key, "<redacted>");
    }
    let ApiError {
        status, message, ..
    } = error.clone();
    match status {
        401 | 403 => Verdict::Fail(ModelError::Auth {
            provider,
            status,
            message,
        }),
        _ if error.not_found => Verdict::Fail(ModelError::UnknownModel {
            provider,
            model: model.to_string(),
            message,
        }),
        429 | 500..=599 if !streamed => Verdict::Retry(error),
        429 | 500..=599 => Verdict::Fail(ModelError::Http {
            provider,
            status,
            message: format!(
                "{message} (after part of the reply had streamed; not retried, so as not to repeat it)"
            ),
        }),
        _ => Verdict::Fail(ModelError::Http {
            provider,
            status,
            message,
        }),
    }
}

/// How long to wait before attempt `failed + 1`, after `failed` attempts: the
/// server's `retry-after` when it sent one, else `base_delay * 2^(failed-1)`;
/// never more than `max_delay`.
pub(crate) fn backoff(
    policy: &RetryPolicy,
    failed: u32,
    retry_after: Option<Duration>,
) -> Duration {
    let exponential = || {
        let doublings = failed.saturating_sub(1).min(20);
        policy.base_delay.saturating_mul(1 << doublings)
    };
    retry_after
        .unwrap_or_else(exponential)
        .min(policy.max_delay)
}

/// `retry-after-ms` (OpenAI) or `retry-after` in seconds (both providers).
/// The HTTP-date form is not used by either API and falls back to backoff.
pub(crate) fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    let number = |name: &str| -> Option<f64> {
        let value = headers
            .get(name)?
            .to_str()
            .ok()?
            .trim()
            .parse::<f64>()
            .ok()?;
        (value.is_finite() && value >= 0.0).then_some(value)
    };
    if let Some(ms) = number("retry-after-ms") {
        return Some(Duration::from_secs_f64(ms.min(1e9) / 1000.0));
    }
    number("retry-after").map(|s| Duration::from_secs_f64(s.min(1e6)))
}

fn str_field(value: &Value, name: &str) -> Option<String> {
    value.get(name)?.as_str().map(str::to_string)
}

/// One line, at most `max` characters (whitespace collapsed).
pub(crate) fn clip(text: &str, max: usize) -> String {
    let line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    match line.char_indices().nth(max) {
        Some((cut, _)) => format!("{}…", &line[..cut]),
        None => line,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn shapes_of_error_bodies() {
        let anthropic =
            json!({"type": "error", "error": {"type": "not_found_error", "message": "model: x"}});
        let e = ApiError::from_json(400, &anthropic).expect("message");
        assert!(e.not_found);
        assert_eq!(e.message, "model: x");
        let vllm = json!({"object": "error", "message": "no model", "type": "BadRequestError", "code": 400});
        assert_eq!(
            ApiError::from_json(400, &vllm).map(|e| e.message),
            Some("no model".into())
        );
        let flat = json!({"error": "bad key"});
        assert_eq!(
            ApiError::from_json(401, &flat).map(|e| e.message),
            Some("bad key".into())
        );
        let body = ApiError::from_body(502, b"<html> Bad\n gateway </html>", false);
        assert_eq!(body.message, "<html> Bad gateway </html>");
        assert!(
            ApiError::from_body(500, b"{", true)
                .message
                .contains("too large")
        );
    }

    #[test]
    fn backoff_doubles_and_is_capped() {
        let policy = RetryPolicy {
            max_attempts: 9,
            base_delay: Duration::from_millis(100),
            max_delay: Duration::from_millis(500),
        };
        let delays: Vec<_> = (1..=5)
            .map(|n| backoff(&policy, n, None).as_millis())
            .collect();
        assert_eq!(delays, [100, 200, 400, 500, 500]);
        let told = backoff(&policy, 1, Some(Duration::from_secs(30)));
        assert_eq!(told, Duration::from_millis(500));
    }

    #[test]
    fn the_key_never_shows() {
        let error =
            ApiError::from_body(401, b"{\"error\":{\"message\":\"bad key sk-123\"}}", false);
        match judge("openai", "m", Some("sk-123"), error, false) {
            Verdict::Fail(ModelError::Auth { message, .. }) => {
                assert_eq!(message, "bad key <redacted>")
            }
            other => panic!("{other:?}"),
        }
    }
}
