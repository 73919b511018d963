//! `tools/list` with bounded pagination: a page cap, a tool cap and a
//! repeated-cursor check, so an endless or looping server is an error, not a hang.
//! Tools are parsed one by one, so a malformed definition is reported by name.

use std::collections::{BTreeSet, HashSet};

use serde_json::{Value, json};

use super::connection::{Connection, RequestError};
use super::error::{ConnectError, ConnectErrorCode as Code};
use super::names::quote;
use super::published::{DefinitionError, Position, PublishedTool};
use super::spec::Limits;

/// Lists every tool the server publishes, following `nextCursor`. `on_page` sees
/// each page's well-formed tools as they arrive (to start work early).
pub async fn list_tools(
    conn: &Connection,
    limits: &Limits,
    mut on_page: impl FnMut(&[PublishedTool]),
) -> Result<Vec<PublishedTool>, ConnectError> {
    if !conn.has_tools() {
        return Ok(Vec::new());
    }
    // One listing at a time: the raw answers are tapped per connection.
    let _one = conn.listing.lock().await;
    let started = tokio::time::Instant::now();
    let mut ttl: Option<u64> = None;
    let mut tools = Vec::new();
    let mut malformed = Vec::new();
    let mut seen_cursors = HashSet::new();
    let mut cursor: Option<String> = None;
    for page in 1.. {
        if page > limits.max_list_pages {
            return Err(too_long(format!(
                "the server was still paginating after {} pages of tools/list",
                limits.max_list_pages
            )));
        }
        let params = match &cursor {
            Some(c) => json!({ "cursor": c }),
            None => json!({}),
        };
        // The raw answer is what the server published; rmcp's typed one may
        // lack fields (`execution`) or, over HTTP on 2026-07-28, whole tools.
        let raw = conn
            .request_raw("tools/list", params, conn.call_timeout())
            .await
            .map_err(|e| request_failed(e, "tools/list"))?;
        let (page_tools, next) = parse_raw_page(&raw, page)?;
        if let Some(page_ttl) = raw.get("ttlMs").and_then(Value::as_u64) {
            ttl = Some(ttl.map_or(page_ttl, |t| t.min(page_ttl)));
        }
        let page_start = tools.len();
        for raw in page_tools {
            match raw {
                Ok(tool) => tools.push(tool),
                Err(problem) => malformed.push(problem.to_string()),
            }
        }
        on_page(&tools[page_start..]);
        if tools.len() + malformed.len() > limits.max_tools {
            return Err(too_long(format!(
                "the server published more than {} tools",
                limits.max_tools
            )));
        }
        match next {
            None => break,
            Some(next) => {
                if !seen_cursors.insert(next.clone()) {
                    return Err(too_long(format!(
                        "the server repeated the cursor {} on page {page}, which would loop forever",
                        quote(&next)
                    )));
                }
                cursor = Some(next);
            }
        }
    }
    if !malformed.is_empty() {
        return Err(ConnectError::new(
            Code::InvalidToolDefinition,
            format!(
                "tools/list contained malformed tool definitions: {}",
                malformed.join("; ")
            ),
            "the server is broken or incompatible; report it to its authors",
        ));
    }
    check_duplicates(&tools)?;
    // `ttlMs` (2026-07-28): the list must be re-listed before it is used after this.
    let expires = ttl
        .filter(|_| conn.is_stateless())
        .map(|ms| started + std::time::Duration::from_millis(ms));
    *conn.list_expires.lock().unwrap_or_else(|e| e.into_inner()) = expires;
    Ok(tools)
}

type ParsedPage = (Vec<Result<PublishedTool, DefinitionError>>, Option<String>);

fn parse_raw_page(raw: &Value, page: usize) -> Result<ParsedPage, ConnectError> {
    let Some(items) = raw.get("tools").and_then(Value::as_array) else {
        return Err(malformed_page(page, "the result has no `tools` array"));
    };
    let next = match raw.get("nextCursor") {
        None | Some(Value::Null) => None,
        Some(Value::String(c)) => Some(c.clone()),
        Some(_) => return Err(malformed_page(page, "`nextCursor` is not a string")),
    };
    let tools = items
        .iter()
        .enumerate()
        .map(|(index, item)| PublishedTool::from_json(item, Position { page, index }))
        .collect();
    Ok((tools, next))
}

fn check_duplicates(tools: &[PublishedTool]) -> Result<(), ConnectError> {
    let mut seen = HashSet::new();
    let duplicates: BTreeSet<&str> = tools
        .iter()
        .filter(|t| !seen.insert(t.name.as_str()))
        .map(|t| t.name.as_str())
        .collect();
    if duplicates.is_empty() {
        return Ok(());
    }
    let names: Vec<String> = duplicates.iter().map(|n| quote(n)).collect();
    Err(ConnectError::new(
        Code::DuplicateTool,
        format!(
            "the server published the same tool name more than once: {}",
            names.join(", ")
        ),
        "the server is broken; report it to its authors",
    )
    .with_tools(duplicates.iter().map(|n| n.to_string()).collect()))
}

fn malformed_page(page: usize, what: &str) -> ConnectError {
    ConnectError::new(
        Code::InvalidToolDefinition,
        format!("page {page} of tools/list is malformed: {what}"),
        "the server is broken or incompatible; report it to its authors",
    )
}

fn too_long(message: String) -> ConnectError {
    ConnectError::new(
        Code::PaginationLimit,
        message,
        "the server is broken, or publishes more than the limits allow (max_tools, max_list_pages)",
    )
}

/// The whole connect (start, `initialize`, every `tools/list` page) took longer
/// than `connect_timeout_ms`.
pub fn missed_deadline(timeout: std::time::Duration) -> ConnectError {
    ConnectError::new(
        Code::McpTimeout,
        format!(
            "the server did not finish initialize and tools/list within {} ms",
            timeout.as_millis()
        ),
        "the server lists its tools too slowly; check it, or raise connect_timeout_ms",
    )
}

/// Maps a failed request made while connecting to a connect error.
pub fn request_failed(error: RequestError, method: &str) -> ConnectError {
    match error {
        RequestError::Timeout(t) => ConnectError::new(
            Code::McpTimeout,
            format!("{method} got no answer within {} ms", t.as_millis()),
            "the server hangs; check it, or raise call_timeout_ms",
        ),
        RequestError::Unauthorized(denial) => {
            let mut error = ConnectError::new(
                Code::AuthRequired,
                format!("{method}: {}", denial.message),
                denial.hint,
            );
            error.server_output = denial.server_output;
            error
        }
        RequestError::Lost(detail) => ConnectError::new(
            Code::McpConnectionLost,
            format!("{method}: {detail}"),
            "the server died while connecting; its stderr tail may say why",
        ),
        RequestError::Remote { code, message } => {
            let mut error = ConnectError::new(
                Code::InitializeFailed,
                format!("{method} failed: the server answered with JSON-RPC error {code}"),
                "the server does not list its tools correctly; its error text is shown as server output",
            );
            error.server_output = vec![super::connection::initfail::cap(&message)];
            error
        }
    }
}
