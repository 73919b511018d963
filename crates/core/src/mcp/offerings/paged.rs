//! A bounded, paginated `*/list` request: a page cap (`max_list_pages`), an
//! item cap and a repeated-cursor check, so an endless or looping server is an
//! error, not a hang.

use std::collections::HashSet;

use serde_json::{Value, json};

use super::super::connection::raw;
use super::super::connection::{Connection, RequestError};

/// At most this many entries in one listing of resources, templates or prompts.
pub const MAX_ITEMS: usize = 10_000;

pub(super) enum PageError {
    Request(RequestError),
    /// The server broke the protocol or a bound (the harness's words).
    Malformed(String),
}

/// Every entry under `key` of every page of `method`.
pub(super) async fn list_all(
    conn: &Connection,
    method: &str,
    key: &str,
    max_pages: usize,
) -> Result<Vec<Value>, PageError> {
    let mut items = Vec::new();
    let mut seen = HashSet::new();
    let mut cursor: Option<String> = None;
    for page in 1.. {
        if page > max_pages {
            return Err(PageError::Malformed(format!(
                "still paginating after {max_pages} pages of {method} (max_list_pages)"
            )));
        }
        let params = match &cursor {
            Some(c) => json!({ "cursor": c }),
            None => json!({}),
        };
        let answer = conn
            .request(method, params, conn.call_timeout())
            .await
            .map_err(PageError::Request)?;
        let mut answer = raw(answer);
        match answer.get_mut(key).map(Value::take) {
            Some(Value::Array(page_items)) => items.extend(page_items),
            None | Some(Value::Null) => {}
            Some(_) => {
                return Err(PageError::Malformed(format!(
                    "`{key}` of {method} is not an array"
                )));
            }
        }
        if items.len() > MAX_ITEMS {
            return Err(PageError::Malformed(format!(
                "more than {MAX_ITEMS} entries in {method}"
            )));
        }
        match answer.get("nextCursor") {
            None | Some(Value::Null) => break,
            Some(Value::String(next)) => {
                if !seen.insert(next.clone()) {
                    return Err(PageError::Malformed(format!(
                        "{method} repeated a cursor (page {page}): the listing loops"
                    )));
                }
                cursor = Some(next.clone());
            }
            Some(_) => {
                return Err(PageError::Malformed(format!(
                    "the nextCursor of {method} is not a string"
                )));
            }
        }
    }
    Ok(items)
}

/// A string member of an entry, if it is one.
pub(super) fn string(item: &Value, key: &str) -> Option<String> {
    item.get(key).and_then(Value::as_str).map(str::to_owned)
}
