//! What one MCP content block is, read leniently from its JSON: the one place
//! that knows the block types, so the model's view (`agent::toolbox`) and the
//! operator's (`call`'s output, the TUI) describe a block the same way.

use serde_json::Value;

/// One content block (of a tool result, a resource, a prompt message).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Block<'a> {
    Text(&'a str),
    Image {
        mime: &'a str,
        /// Base64 text as sent.
        data: &'a str,
    },
    Audio {
        mime: &'a str,
        data: &'a str,
    },
    ResourceLink {
        name: &'a str,
        uri: &'a str,
        mime: Option<&'a str>,
    },
    /// An embedded resource: its text, or the size of its binary `blob`.
    Resource {
        uri: &'a str,
        mime: Option<&'a str>,
        text: Option<&'a str>,
        blob: Option<&'a str>,
    },
    /// A type this harness does not know (kept, never interpreted).
    Unknown(&'a str),
}

impl<'a> Block<'a> {
    pub fn of(block: &'a Value) -> Self {
        let field = |v: &'a Value, name: &str| v.get(name).and_then(Value::as_str);
        let s = |name: &str| field(block, name).unwrap_or_default();
        match s("type") {
            "text" => Block::Text(s("text")),
            "image" => Block::Image {
                mime: s("mimeType"),
                data: s("data"),
            },
            "audio" => Block::Audio {
                mime: s("mimeType"),
                data: s("data"),
            },
            "resource_link" => Block::ResourceLink {
                name: s("name"),
                uri: s("uri"),
                mime: field(block, "mimeType"),
            },
            "resource" => {
                let resource = block.get("resource").unwrap_or(&Value::Null);
                Block::Resource {
                    uri: field(resource, "uri").unwrap_or_default(),
                    mime: field(resource, "mimeType"),
                    text: field(resource, "text"),
                    blob: field(resource, "blob"),
                }
            }
            other => Block::Unknown(other),
        }
    }
}

/// How many bytes base64 `data` decodes to (without decoding it).
pub fn decoded_len(data: &str) -> usize {
    let data = data.trim_end();
    let padding = data.bytes().rev().take_while(|b| *b == b'=').count().min(2);
    (data.len() / 4 * 3 + (data.len() % 4).saturating_sub(1)).saturating_sub(padding)
}

/// `12,345 bytes`, `2.1 MB`: a size for people.
pub fn human_size(bytes: usize) -> String {
    match bytes {
        0..1_000 => format!("{bytes} bytes"),
        1_000..1_000_000 => format!("{:.1} kB", bytes as f64 / 1e3),
        _ => format!("{:.1} MB", bytes as f64 / 1e6),
    }
}

/// The one line that stands for a binary or linked block, for the model and the
/// operator alike; `None` for text and embedded text, which are their text.
/// Server-controlled parts (names, URIs, MIME types) are the caller's to make inert.
pub fn summary_line(block: &Block<'_>) -> Option<String> {
    let mime = |m: Option<&str>| m.map(|m| format!(" ({m})")).unwrap_or_default();
    match block {
        Block::Text(_) => None,
        Block::Resource { text: Some(_), .. } => None,
        Block::Image { mime, data } => Some(format!(
            "[image] {}, {}",
            or_unknown(mime),
            human_size(decoded_len(data))
        )),
        Block::Audio { mime, data } => Some(format!(
            "[audio] {}, {}",
            or_unknown(mime),
            human_size(decoded_len(data))
        )),
        Block::ResourceLink { name, uri, mime: m } => {
            Some(format!("[resource link] {name} <{uri}>{}", mime(*m)))
        }
        Block::Resource {
            uri, mime: m, blob, ..
        } => Some(format!(
            "[resource] <{uri}>{}, {} of binary data",
            mime(*m),
            human_size(blob.map(decoded_len).unwrap_or(0))
        )),
        Block::Unknown(kind) => Some(format!("[content of type `{kind}`]")),
    }
}

/// The header line above an embedded resource's text.
pub fn resource_header(uri: &str, mime: Option<&str>) -> String {
    match mime {
        Some(m) => format!("[resource] <{uri}> ({m})"),
        None => format!("[resource] <{uri}>"),
    }
}

fn or_unknown(mime: &str) -> &str {
    if mime.is_empty() {
        "unknown type"
    } else {
        mime
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn sizes_and_lines() {
        assert_eq!(decoded_len("AAAA"), 3);
        assert_eq!(decoded_len("AAA="), 2);
        assert_eq!(decoded_len("AA=="), 1);
        assert_eq!(decoded_len(""), 0);
        let link = json!({"type":"resource_link","name":"README","uri":"file:///r.md","mimeType":"text/markdown"});
        assert_eq!(
            summary_line(&Block::of(&link)).unwrap(),
            "[resource link] README <file:///r.md> (text/markdown)"
        );
        let image = json!({"type":"image","mimeType":"image/png","data":"A".repeat(4000)});
        assert_eq!(
            summary_line(&Block::of(&image)).unwrap(),
            "[image] image/png, 3.0 kB"
        );
        let blob = json!({"type":"resource","resource":{"uri":"x:/b","blob":"AAAA"}});
        assert_eq!(
            summary_line(&Block::of(&blob)).unwrap(),
            "[resource] <x:/b>, 3 bytes of binary data"
        );
        let text = json!({"type":"resource","resource":{"uri":"x:/t","text":"hi"}});
        assert_eq!(summary_line(&Block::of(&text)), None);
    }
}
