//! Why `initialize` did not succeed, in the harness's own words (SPEC rules 9
//! and 16): `message` names what happened — a timeout, an exit status, an HTTP
//! status, a JSON-RPC error code — and never carries text the server sent. The
//! server's own words (its JSON-RPC error message, an HTTP error body, its
//! stderr) go to `server_output`: operator-only, capped here, made inert
//! wherever they are shown.

use std::time::Duration;

use rmcp::service::ClientInitializeError;
use rmcp::transport::streamable_http_client::StreamableHttpError;

use crate::mcp::error::{ConnectError, ConnectErrorCode as Code};
use crate::mcp::process::StderrTail;

/// Lines of stderr attached to a failed connection attempt.
const STDERR_LINES_ON_FAILURE: usize = 12;
/// One piece of server output attached to a connect error, at most (characters).
pub const SERVER_WORDS_MAX_CHARS: usize = 2000;

const HINT_STDIO: &str =
    "check the server's command and arguments; its stderr tail is shown with this error";
const HINT_HTTP: &str =
    "check `url`, and that an MCP server speaking Streamable HTTP is running there";
const HINT_WS: &str = "check `url`, and that an MCP server speaking WebSocket (subprotocol `mcp`) \
                       is running there";
const HINT_ANSWER: &str = "the server refused or botched the handshake; what it said is shown \
                           as server output (never to the model)";

/// Which kind of transport failed (the advice differs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Via {
    Stdio,
    Http,
    WebSocket,
}

/// The deadline passed before `initialize` completed. Whatever the server did
/// after that (typically exiting on the stdin EOF our giving up caused) is a
/// consequence, not the cause.
pub fn timed_out(timeout: Duration, stderr: &StderrTail) -> ConnectError {
    with_stderr(
        ConnectError::new(
            Code::McpTimeout,
            format!(
                "the server did not complete initialize within {} ms",
                timeout.as_millis()
            ),
            "check that the command starts an MCP server on stdio, or raise connect_timeout_ms",
        ),
        stderr,
    )
}

/// The server process ended before `initialize` completed; `how` is the
/// watchdog's description of its exit status.
pub fn exited(how: &str, stderr: &StderrTail) -> ConnectError {
    with_stderr(
        ConnectError::new(
            Code::InitializeFailed,
            format!("the server {how} during initialize"),
            HINT_STDIO,
        ),
        stderr,
    )
}

/// `initialize` failed while the server (if it is a process) is still running.
pub fn failed(error: &ClientInitializeError, via: Via, stderr: &StderrTail) -> ConnectError {
    let hint = match via {
        Via::Stdio => HINT_STDIO,
        Via::Http => HINT_HTTP,
        Via::WebSocket => HINT_WS,
    };
    let (message, hint, words) = describe(error, hint);
    let mut error = with_stderr(
        ConnectError::new(Code::InitializeFailed, message, hint),
        stderr,
    );
    error.server_output.extend(words.map(|w| cap(&w)));
    error
}

/// Whether the server answered `initialize` (with an error or something
/// unusable), as opposed to the transport failing.
pub fn is_answer(error: &ClientInitializeError) -> bool {
    use ClientInitializeError as E;
    matches!(
        error,
        E::JsonRpcError(_)
            | E::ExpectedInitResponse(_)
            | E::ExpectedInitResult(_)
            | E::ConflictInitResponseId(..)
            | E::UncorrelatedErrorResponse { .. }
            | E::NoCompatibleProtocolVersion { .. }
    )
}

/// What happened (harness words), the advice, and what the server said.
fn describe(
    error: &ClientInitializeError,
    hint: &'static str,
) -> (String, &'static str, Option<String>) {
    use ClientInitializeError as E;
    let answered = |what: &str, words: String| {
        (
            format!("the server answered initialize {what}"),
            HINT_ANSWER,
            Some(words),
        )
    };
    match error {
        E::JsonRpcError(data) => {
            let mut words = data.message.to_string();
            if let Some(extra) = &data.data {
                words.push_str(&format!(" {extra}"));
            }
            answered(&format!("with JSON-RPC error {}", data.code.0), words)
        }
        E::ExpectedInitResponse(message) => answered(
            "with something other than a response to it",
            format!("{message:?}"),
        ),
        E::ExpectedInitResult(result) => answered(
            "with a result that is not an initialize result",
            format!("{result:?}"),
        ),
        E::ConflictInitResponseId(expected, got) => answered(
            "with the wrong request id",
            format!("expected id {expected}, got {got}"),
        ),
        E::UncorrelatedErrorResponse { expected, received } => answered(
            "with an error for another request id",
            format!("expected id {expected}, got {received}"),
        ),
        E::NoCompatibleProtocolVersion {
            server_supported, ..
        } => answered(
            "with no protocol revision the harness speaks",
            format!("the server supports {server_supported:?}"),
        ),
        E::ConnectionClosed(_) => ("the connection closed during initialize".into(), hint, None),
        E::Cancelled => ("initialize was cancelled".into(), hint, None),
        E::TransportError { error, .. } => {
            match error
                .error
                .downcast_ref::<StreamableHttpError<reqwest::Error>>()
            {
                Some(http) => describe_http(http),
                // A stdio transport error is a local I/O or framing error.
                None => (
                    format!(
                        "the transport failed during initialize: {}",
                        error_chain(error.error.as_ref())
                    ),
                    hint,
                    None,
                ),
            }
        }
        // Anything else (rmcp may add variants): its text is not vouched for.
        other => ("initialize failed".into(), hint, Some(other.to_string())),
    }
}

/// An HTTP transport error: the status and what kind of failure, never the body.
fn describe_http(
    error: &StreamableHttpError<reqwest::Error>,
) -> (String, &'static str, Option<String>) {
    use StreamableHttpError as H;
    match error {
        // rmcp's `Client(e)` does not name `e` as its source: unwrap it by hand
        // so "connection refused" reaches the operator. These words are the
        // HTTP client's and the operating system's, not the server's.
        H::Client(e) => (
            format!("could not reach the server: {}", error_chain(e)),
            HINT_HTTP,
            None,
        ),
        H::HttpStatus(status) => (
            format!("the server answered HTTP {}", status.status),
            HINT_HTTP,
            None,
        ),
        H::UnexpectedServerResponse(text) => {
            // rmcp writes "HTTP <status>: <body>" for an error status; only the
            // status is ours to repeat.
            let status = text
                .strip_prefix("HTTP ")
                .and_then(|rest| rest.get(..3))
                .filter(|code| code.bytes().all(|b| b.is_ascii_digit()));
            let message = match status {
                Some(code) => format!("the server answered HTTP {code}"),
                None => "the server's answer to initialize is not a valid JSON-RPC message".into(),
            };
            (message, HINT_HTTP, Some(text.to_string()))
        }
        H::UnexpectedContentType(content_type) => (
            "the server answered with a content type that is neither JSON nor an event stream"
                .into(),
            HINT_HTTP,
            content_type.as_ref().map(|t| format!("Content-Type: {t}")),
        ),
        H::ResponseBodyTooLarge { max_size } => (
            format!("the server's answer exceeded {max_size} bytes"),
            HINT_HTTP,
            None,
        ),
        H::Io(e) => (format!("I/O error: {e}"), HINT_HTTP, None),
        H::UnexpectedEndOfStream => (
            "the server's event stream ended before it answered".into(),
            HINT_HTTP,
            None,
        ),
        H::SessionExpired => (
            "the server answered HTTP 404 for the session".into(),
            HINT_HTTP,
            None,
        ),
        other => (
            "the HTTP transport failed during initialize".into(),
            HINT_HTTP,
            Some(other.to_string()),
        ),
    }
}

/// "outer: cause: root cause", each message once.
pub fn error_chain(error: &(dyn std::error::Error + 'static)) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut next = Some(error);
    while let Some(current) = next {
        let text = current.to_string();
        if !parts.iter().any(|p| p.contains(&text)) {
            parts.push(text);
        }
        next = current.source();
    }
    parts.join(": ")
}

/// Attaches the server's last stderr lines (each capped).
pub fn with_stderr(mut error: ConnectError, stderr: &StderrTail) -> ConnectError {
    error.server_output = stderr
        .last_lines(STDERR_LINES_ON_FAILURE)
        .iter()
        .map(|l| cap(l))
        .collect();
    error
}

/// At most [`SERVER_WORDS_MAX_CHARS`] characters, the cut said.
pub fn cap(text: &str) -> String {
    let total = text.chars().count();
    if total <= SERVER_WORDS_MAX_CHARS {
        return text.to_string();
    }
    let kept: String = text.chars().take(SERVER_WORDS_MAX_CHARS).collect();
    format!(
        "{kept}… [{} more characters not shown]",
        total - SERVER_WORDS_MAX_CHARS
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn server_words_are_capped_and_say_so() {
        assert_eq!(cap("short"), "short");
        let long = "x".repeat(SERVER_WORDS_MAX_CHARS + 5);
        let capped = cap(&long);
        assert!(
            capped.ends_with("… [5 more characters not shown]"),
            "{capped}"
        );
        assert!(capped.chars().count() < SERVER_WORDS_MAX_CHARS + 40);
    }
}
