//! Reading a `tools/call` result leniently (unknown content block types are kept,
//! not fatal) and capping its text at `max_result_bytes` with a notice. Text is
//! a text block's `text` and an embedded resource's `resource.text`; binary
//! payloads (images, audio, blobs) are the agent's business (what a model accepts).

#[cfg(test)]
use rmcp::model::{CustomResult, ServerResult};
use serde_json::{Value, json};

/// What the model gets back from a successful call.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolOutput {
    /// MCP content blocks as the server sent them (text possibly truncated).
    pub content: Vec<Value>,
    pub structured_content: Option<Value>,
    /// Whether `max_result_bytes` cut anything (a notice block says so too).
    pub truncated: bool,
}

pub(super) struct Parsed {
    pub is_error: bool,
    pub content: Vec<Value>,
    pub structured: Option<Value>,
}

/// Reads a `tools/call` result leniently: unknown content block types are kept
/// as they are instead of failing the whole result.
#[cfg(test)]
pub(super) fn parse_result(result: ServerResult) -> Result<Parsed, String> {
    let raw = match result {
        ServerResult::CallToolResult(r) => serde_json::to_value(r).map_err(|e| e.to_string())?,
        ServerResult::CustomResult(CustomResult(raw)) => raw,
        ServerResult::EmptyResult(_) => json!({}),
        other => {
            return Err(format!(
                "unexpected result type: {}",
                serde_json::to_string(&other).unwrap_or_default()
            ));
        }
    };
    parse_value(raw)
}

/// Reads a `tools/call` result from its JSON.
pub(super) fn parse_value(raw: Value) -> Result<Parsed, String> {
    if !raw.is_object() {
        return Err("the result is not a JSON object".into());
    }
    let content = match raw.get("content") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(blocks)) => blocks.clone(),
        Some(_) => return Err("`content` is not an array".into()),
    };
    Ok(Parsed {
        is_error: raw.get("isError").and_then(Value::as_bool).unwrap_or(false),
        content,
        structured: raw
            .get("structuredContent")
            .filter(|v| !v.is_null())
            .cloned(),
    })
}

pub(super) fn text_of(content: &[Value]) -> String {
    content
        .iter()
        .filter_map(|b| b.get("text").and_then(Value::as_str))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The text a block carries, if any: a text block's `text`, or the `text` of an
/// embedded resource.
fn text(block: &Value) -> Option<&str> {
    block
        .get("text")
        .or_else(|| block.get("resource").and_then(|r| r.get("text")))
        .and_then(Value::as_str)
}

fn text_mut(block: &mut Value) -> Option<&mut Value> {
    if block.get("text").is_some_and(Value::is_string) {
        return block.get_mut("text");
    }
    block
        .get_mut("resource")
        .and_then(|r| r.get_mut("text"))
        .filter(|t| t.is_string())
}

/// Caps the text of a result at `max_bytes`, with an explicit notice block.
pub(super) fn truncate(parsed: Parsed, max_bytes: usize) -> ToolOutput {
    let total: usize = parsed.content.iter().filter_map(text).map(str::len).sum();
    let structured_len = parsed
        .structured
        .as_ref()
        .map(|v| v.to_string().len())
        .unwrap_or(0);
    if total <= max_bytes && structured_len <= max_bytes {
        return ToolOutput {
            content: parsed.content,
            structured_content: parsed.structured,
            truncated: false,
        };
    }
    let mut shown = 0;
    let mut cut_done = false;
    let mut content = Vec::with_capacity(parsed.content.len() + 1);
    for mut block in parsed.content {
        let Some(len) = text(&block).map(str::len) else {
            content.push(block);
            continue;
        };
        if cut_done {
            continue;
        }
        let remaining = max_bytes - shown;
        if len <= remaining {
            shown += len;
        } else if let Some(slot) = text_mut(&mut block) {
            let whole = slot.as_str().unwrap_or_default();
            let mut cut = remaining;
            while !whole.is_char_boundary(cut) {
                cut -= 1;
            }
            shown += cut;
            *slot = Value::String(whole[..cut].to_string());
            cut_done = true;
        }
        content.push(block);
    }
    let mut notice =
        format!("[mcp-harness: result truncated: {shown} of {total} bytes of text shown");
    let structured = if structured_len > max_bytes {
        notice.push_str(&format!(
            "; structuredContent of {structured_len} bytes omitted"
        ));
        None
    } else {
        parsed.structured
    };
    notice.push_str(" (max_result_bytes)]");
    content.push(json!({ "type": "text", "text": notice }));
    ToolOutput {
        content,
        structured_content: structured,
        truncated: true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn truncation_cuts_text_on_char_boundaries_and_says_so() {
        let parsed = Parsed {
            is_error: false,
            content: vec![
                json!({"type":"text","text":"ééééé"}),
                json!({"type":"text","text":"more"}),
            ],
            structured: None,
        };
        let out = truncate(parsed, 5);
        assert!(out.truncated);
        assert_eq!(out.content[0]["text"], "éé");
        assert_eq!(out.content.len(), 2, "{:?}", out.content);
        assert!(
            out.content[1]["text"]
                .as_str()
                .unwrap()
                .contains("4 of 14 bytes")
        );
    }

    #[test]
    fn embedded_resource_text_counts_as_text() {
        let parsed = Parsed {
            is_error: false,
            content: vec![
                json!({"type":"resource","resource":{"uri":"file:///a","text":"x".repeat(50)}}),
                json!({"type":"image","mimeType":"image/png","data":"AAAA"}),
            ],
            structured: None,
        };
        let out = truncate(parsed, 10);
        assert!(out.truncated);
        assert_eq!(out.content[0]["resource"]["text"], "x".repeat(10));
        assert_eq!(out.content[0]["resource"]["uri"], "file:///a");
        assert_eq!(out.content[1]["type"], "image", "binary blocks are kept");
        assert!(
            out.content[2]["text"]
                .as_str()
                .unwrap()
                .contains("10 of 50 bytes")
        );
    }

    #[test]
    fn small_results_are_untouched() {
        let parsed = Parsed {
            is_error: false,
            content: vec![json!({"type":"text","text":"ok"})],
            structured: None,
        };
        let out = truncate(parsed, 100);
        assert!(!out.truncated);
        assert_eq!(out.content, vec![json!({"type":"text","text":"ok"})]);
    }

    #[test]
    fn unknown_content_blocks_survive_parsing() {
        let raw =
            json!({"content":[{"type":"text","text":"hello"},{"type":"hologram","data":"?"}]});
        let parsed = parse_result(ServerResult::CustomResult(CustomResult(raw))).unwrap();
        assert_eq!(parsed.content.len(), 2);
        assert!(!parsed.is_error);
    }
}
