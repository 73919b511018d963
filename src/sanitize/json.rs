//! JSON that is safe to print to a terminal (the headless commands' `--json`
//! output) or to `cat` (the session's `audit.jsonl` and `transcript.jsonl`):
//! serde_json already escapes C0 controls; this also escapes DEL, C1 controls
//! and bidi controls as `\uXXXX`, so no byte of it can drive a terminal. The data
//! is unchanged: a JSON parser reads back exactly what was written.

use std::io;

use serde::Serialize;
use serde_json::ser::Formatter;

use super::is_dangerous;

struct InertFormatter;

impl Formatter for InertFormatter {
    fn write_string_fragment<W: ?Sized + io::Write>(
        &mut self,
        writer: &mut W,
        fragment: &str,
    ) -> io::Result<()> {
        let mut start = 0;
        for (i, c) in fragment.char_indices() {
            if is_dangerous(c) {
                writer.write_all(&fragment.as_bytes()[start..i])?;
                write!(writer, "\\u{:04x}", c as u32)?;
                start = i + c.len_utf8();
            }
        }
        writer.write_all(&fragment.as_bytes()[start..])
    }
}

/// One line of JSON, terminal-safe (`--json` output).
pub fn to_line(value: &impl Serialize) -> String {
    write(value)
}

/// One line of a session log (`audit.jsonl`, `transcript.jsonl`), terminal-safe
/// and lossless.
pub fn to_log_line(value: &impl Serialize) -> String {
    write(value)
}

fn write(value: &impl Serialize) -> String {
    let mut out = Vec::new();
    let mut ser = serde_json::Serializer::with_formatter(&mut out, InertFormatter);
    if value.serialize(&mut ser).is_err() {
        return "null".into();
    }
    String::from_utf8(out).unwrap_or_else(|_| "null".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dangerous_characters_are_escaped_but_data_survives() {
        let text = "a\u{1b}[2J\u{9b}b\u{202e}c\u{7f}é";
        let line = to_line(&serde_json::json!({ "t": text }));
        assert_eq!(line, r#"{"t":"a\u001b[2J\u009bb\u202ec\u007fé"}"#);
        let back: serde_json::Value = serde_json::from_str(&line).unwrap();
        assert_eq!(back["t"], text);
    }
}
