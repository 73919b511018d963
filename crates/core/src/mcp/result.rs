//! Reading a `tools/call` result leniently (unknown content block types are kept,
//! not fatal) and capping its text at `max_result_bytes` with a notice. Text is
//! a text block's `text` and an embedded resource's `resource.text`; binary
//! payloads (images, audio, blobs) are the agent's business (what a model accepts).

use std::io::Write as _;

#[cfg(test)]
use rmcp::model::{CustomResult, ServerResult};
use serde_json::{Value, json};

use super::secrets::{self, Redactions, SecretKind};
use super::spill::Spilled;

/// What the model gets back from a successful call.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolOutput {
    /// MCP content blocks as the server sent them (text possibly truncated).
    pub content: Vec<Value>,
    pub structured_content: Option<Value>,
    /// Whether `max_result_bytes` cut anything (a notice block says so too).
    pub truncated: bool,
    /// Kinds of credentials replaced by `[redacted: KIND]` in what the model
    /// gets (the credentials themselves go to the operator as server output).
    pub redacted: Vec<SecretKind>,
}

pub(super) struct Parsed {
    pub is_error: bool,
    pub content: Vec<Value>,
    pub structured: Option<Value>,
}

/// What is wrong with a result's shape (the detail beside the harness's own
/// "malformed result").
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(super) enum Malformed {
    #[error("the result is not a JSON object")]
    NotAnObject,
    #[error("`content` is not an array")]
    ContentNotAnArray,
}

/// Reads a `tools/call` result leniently: unknown content block types are kept
/// as they are instead of failing the whole result (tests build results as rmcp
/// types; a type other than a tool result is the test's mistake).
#[cfg(test)]
pub(super) fn parse_result(result: ServerResult) -> Result<Parsed, Malformed> {
    let raw = match result {
        ServerResult::CallToolResult(r) => serde_json::to_value(r).expect("a result is JSON"),
        ServerResult::CustomResult(CustomResult(raw)) => raw,
        ServerResult::EmptyResult(_) => json!({}),
        other => panic!("unexpected result type: {other:?}"),
    };
    parse_value(raw)
}

/// Reads a `tools/call` result from its JSON.
pub(super) fn parse_value(raw: Value) -> Result<Parsed, Malformed> {
    // Taken apart, not copied: the result is ours.
    let Value::Object(mut raw) = raw else {
        return Err(Malformed::NotAnObject);
    };
    let content = match raw.remove("content") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(blocks)) => blocks,
        Some(_) => return Err(Malformed::ContentNotAnArray),
    };
    Ok(Parsed {
        is_error: raw.get("isError").and_then(Value::as_bool).unwrap_or(false),
        content,
        structured: raw.remove("structuredContent").filter(|v| !v.is_null()),
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

/// Where the whole text of a large result goes.
pub(super) struct Saver<'a> {
    /// The session's `results/`, if there is one.
    pub dir: Option<&'a std::path::Path>,
    /// The call's id (the file is named after it).
    pub call_id: &'a str,
}

/// Caps the text of a result at `max_bytes`, with an explicit notice block.
/// Without a place to save the rest (tests, a library user), it is dropped.
#[cfg(test)]
pub(super) fn truncate(parsed: Parsed, max_bytes: usize) -> ToolOutput {
    finish(
        parsed,
        None,
        max_bytes,
        Saver {
            dir: None,
            call_id: "test",
        },
    )
}

/// [`finish`] on the caller's task when it only reads memory, on the blocking
/// pool when it writes `results/CALL_ID.txt` (a result over `max_bytes`): a
/// hop to another thread only for the calls that do file work. Then the
/// model's part is scanned for credentials ([`redact`]); what was withheld
/// comes back beside it, for the operator.
pub(super) async fn finish_result(
    parsed: Parsed,
    spilled: Option<Spilled>,
    max_bytes: usize,
    dir: Option<std::path::PathBuf>,
    call_id: String,
) -> Result<(ToolOutput, Redactions), tokio::task::JoinError> {
    let (_, total) = text_lengths(&parsed, spilled.as_ref());
    let finish_here = move || {
        let saver = Saver {
            dir: dir.as_deref(),
            call_id: &call_id,
        };
        finish(parsed, spilled, max_bytes, saver)
    };
    let mut output = if total <= max_bytes as u64 {
        finish_here()
    } else {
        tokio::task::spawn_blocking(finish_here).await?
    };
    let found = redact(&mut output);
    Ok((output, found))
}

/// Replaces each credential in what the model gets (texts, `structuredContent`
/// strings) by `[redacted: KIND]`: one scan of the text the model's part holds
/// (at most `max_result_bytes`), no copy unless something is found.
pub(super) fn redact(output: &mut ToolOutput) -> Redactions {
    let mut found = Redactions::default();
    secrets::redact_blocks(&mut output.content, &mut found);
    if let Some(structured) = &mut output.structured_content {
        secrets::redact_json(structured, &mut found);
    }
    output.redacted = found.kinds();
    found
}

/// Every text of the result in order with its whole length (what the stdio
/// gate kept aside counts whole), and their total joined by line breaks.
fn text_lengths(parsed: &Parsed, spilled: Option<&Spilled>) -> (Vec<u64>, u64) {
    let lengths: Vec<u64> = parsed
        .content
        .iter()
        .filter_map(text)
        .enumerate()
        .map(|(ordinal, block)| {
            spilled
                .and_then(|s| s.piece(ordinal))
                .map_or(block.len() as u64, |p| p.bytes)
        })
        .collect();
    let total = lengths.iter().sum::<u64>() + lengths.len().saturating_sub(1) as u64;
    (lengths, total)
}

/// The length of `value` as JSON text, without building the text; once it
/// is over `cap`, some number over `cap` (the counting stops there).
fn json_len_capped(value: &Value, cap: usize) -> usize {
    struct Count {
        n: usize,
        cap: usize,
    }
    impl std::io::Write for Count {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.n += buf.len();
            if self.n > self.cap {
                // Stops the serializer: the answer is "over".
                return Err(std::io::Error::other("over the cap"));
            }
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut count = Count { n: 0, cap };
    match serde_json::to_writer(&mut count, value) {
        Ok(()) => count.n,
        Err(_) => count.n.max(cap + 1),
    }
}

/// The model's view of a result: text over `max_bytes` cut (the whole of it
/// saved in `results/CALL_ID.txt`, the notice says where and how to read on),
/// whatever the stdio gate left out of a long message said so.
pub(super) fn finish(
    parsed: Parsed,
    spilled: Option<Spilled>,
    max_bytes: usize,
    saver: Saver<'_>,
) -> ToolOutput {
    let (lengths, total) = text_lengths(&parsed, spilled.as_ref());
    let spilled = spilled.unwrap_or_default();
    let structured_len = parsed
        .structured
        .as_ref()
        .map(|v| json_len_capped(v, max_bytes))
        .unwrap_or(0);
    let structured_cut = structured_len > max_bytes || spilled.cut_other;
    if total <= max_bytes as u64 && !structured_cut && spilled.is_empty() {
        return ToolOutput {
            content: parsed.content,
            structured_content: parsed.structured,
            truncated: false,
            redacted: Vec::new(),
        };
    }
    let saved = (total > max_bytes as u64).then(|| save(&parsed.content, &spilled, &saver));
    // The model's part: texts in order until `max_bytes`; later texts left out.
    let mut shown = 0usize;
    let mut offset = 0u64;
    let mut cut_done = false;
    let mut ordinal = 0;
    let mut content = Vec::with_capacity(parsed.content.len() + 1);
    for mut block in parsed.content {
        let Some(len) = text(&block).map(str::len) else {
            content.push(block);
            continue;
        };
        let whole = lengths.get(ordinal).copied().unwrap_or(len as u64);
        ordinal += 1;
        if cut_done {
            continue;
        }
        let remaining = max_bytes - shown;
        if whole as usize <= remaining && whole == len as u64 {
            shown += len;
            offset += whole + 1;
        } else if let Some(slot) = text_mut(&mut block) {
            let head = slot.as_str().unwrap_or_default();
            let mut cut = remaining.min(head.len());
            while !head.is_char_boundary(cut) {
                cut -= 1;
            }
            shown += cut;
            offset += cut as u64;
            *slot = Value::String(head[..cut].to_string());
            cut_done = true;
        }
        content.push(block);
    }
    let mut notice = String::from("[mcp-harness: ");
    if total > max_bytes as u64 {
        notice.push_str(&format!(
            "the result has {total} bytes of text; {shown} are shown (max_result_bytes). "
        ));
        match saved {
            Some(Ok(name)) => notice.push_str(&format!(
                "All of it is saved as results/{name}; read_result {{\"call_id\": \"{}\", \"offset\": {offset}}} reads on from where this stops.",
                saver.call_id
            )),
            Some(Err(why)) => notice.push_str(&format!("The rest is not saved: {why}.")),
            None => {}
        }
    } else {
        notice.push_str("parts of the result were left out.");
    }
    let structured = if structured_cut {
        // Its whole length, now that it is known to be over.
        let structured_len = parsed
            .structured
            .as_ref()
            .map_or(0, |v| json_len_capped(v, usize::MAX - 1));
        notice.push_str(&format!(
            " structuredContent ({structured_len} bytes{}) is omitted.",
            if spilled.cut_other {
                ", cut in transit"
            } else {
                ""
            }
        ));
        None
    } else {
        parsed.structured
    };
    for omitted in &spilled.omitted {
        if omitted.what == "binary data" {
            notice.push_str(&format!(
                " A block's binary data of {} bytes is left out: too large for a model.",
                omitted.bytes
            ));
        }
    }
    if spilled.failed {
        notice.push_str(" Part of the text could not be kept (the disk refused it).");
    }
    notice.push(']');
    content.push(json!({ "type": "text", "text": notice }));
    ToolOutput {
        content,
        structured_content: structured,
        truncated: true,
        redacted: Vec::new(),
    }
}

/// Why the whole of a cut result is not saved (the notice says it).
#[derive(Debug, thiserror::Error)]
enum SaveError {
    #[error("this run keeps no session directory to save it in")]
    NoDirectory,
    #[error("{}: {error}", dir.display())]
    Create {
        dir: std::path::PathBuf,
        error: std::io::Error,
    },
    #[error("writing results/{name} failed: {error}")]
    Write { name: String, error: std::io::Error },
}

/// Writes every text of the result, whole, into `results/CALL_ID.txt` (mode
/// 0600), separated by line breaks. Returns the file's name.
fn save(content: &[Value], spilled: &Spilled, saver: &Saver<'_>) -> Result<String, SaveError> {
    let dir = saver.dir.ok_or(SaveError::NoDirectory)?;
    let (mut file, name) =
        super::results::create(dir, saver.call_id).map_err(|error| SaveError::Create {
            dir: dir.to_path_buf(),
            error,
        })?;
    let mut write = || -> std::io::Result<()> {
        for (ordinal, block) in content.iter().filter_map(text).enumerate() {
            if ordinal > 0 {
                file.write_all(b"\n")?;
            }
            match spilled.piece(ordinal) {
                Some(piece) => {
                    let path = piece.path.as_ref().ok_or_else(|| {
                        std::io::Error::other("part of the text could not be kept as it arrived")
                    })?;
                    std::io::copy(&mut std::fs::File::open(path)?, &mut file)?;
                }
                None => file.write_all(block.as_bytes())?,
            }
        }
        file.flush()
    };
    if let Err(error) = write() {
        // No half file: the notice says it could not be saved.
        let _ = std::fs::remove_file(dir.join(&name));
        return Err(SaveError::Write { name, error });
    }
    Ok(name)
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
                .contains("15 bytes of text; 4 are shown")
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
                .contains("50 bytes of text; 10 are shown")
        );
    }

    #[test]
    fn structured_content_over_the_cap_is_omitted_with_its_whole_length() {
        let structured = json!({"rows": "y".repeat(300)});
        let whole = structured.to_string().len();
        let parsed = Parsed {
            is_error: false,
            content: vec![json!({"type":"text","text":"ok"})],
            structured: Some(structured.clone()),
        };
        let out = truncate(parsed, 100);
        assert!(out.truncated);
        assert_eq!(out.structured_content, None);
        let notice = out.content.last().unwrap()["text"].as_str().unwrap();
        assert!(
            notice.contains(&format!("structuredContent ({whole} bytes) is omitted")),
            "{notice}"
        );
        // Under the cap it stays, counted without being written out.
        assert_eq!(json_len_capped(&structured, 1000), whole);
        assert!(json_len_capped(&structured, 10) > 10);
        let parsed = Parsed {
            is_error: false,
            content: vec![],
            structured: Some(structured.clone()),
        };
        assert_eq!(truncate(parsed, whole).structured_content, Some(structured));
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
