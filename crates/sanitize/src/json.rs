//! JSON that is safe to print to a terminal (the headless commands' `--json`
//! output) or to `cat` (the session's `audit.jsonl` and `transcript.jsonl`):
//! serde_json already escapes C0 controls; this also escapes DEL, C1 controls
//! and bidi controls as `\uXXXX`, so no byte of it can drive a terminal.
//!
//! Invisible code points (SPEC rule 15) differ by purpose: `--json` output is
//! read by the operator (often through `jq`, which would turn an escape back into
//! nothing), so there they become the text `<U+XXXX>`, as in the human output;
//! the logs keep the data exact and write them as `\uXXXX`.

use std::io;

use serde::Serialize;
use serde_json::ser::Formatter;

use super::hidden::{Class, classify};
use super::is_dangerous;

/// What becomes of an invisible code point.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Invisible {
    /// The text `<U+XXXX>` (operator output).
    Shown,
    /// A `\uXXXX` escape (logs: the data stays exact).
    Escaped,
}

struct InertFormatter(Invisible);

impl Formatter for InertFormatter {
    fn write_string_fragment<W: ?Sized + io::Write>(
        &mut self,
        writer: &mut W,
        fragment: &str,
    ) -> io::Result<()> {
        let mut start = 0;
        let mut at = 0;
        for (c, class) in classify(fragment) {
            let i = at;
            at += c.len_utf8();
            let hidden = class == Class::Hidden;
            if !(hidden || is_dangerous(c)) {
                continue;
            }
            writer.write_all(&fragment.as_bytes()[start..i])?;
            start = at;
            if hidden && self.0 == Invisible::Shown {
                write!(writer, "<U+{:04X}>", c as u32)?;
            } else if c.len_utf16() == 2 {
                // Outside the BMP: a surrogate pair, as JSON wants.
                let mut units = [0u16; 2];
                c.encode_utf16(&mut units);
                write!(writer, "\\u{:04x}\\u{:04x}", units[0], units[1])?;
            } else {
                write!(writer, "\\u{:04x}", c as u32)?;
            }
        }
        writer.write_all(&fragment.as_bytes()[start..])
    }
}

/// One line of JSON, terminal-safe, invisible characters shown (`--json` output).
pub fn to_line(value: &impl Serialize) -> String {
    write(value, Invisible::Shown)
}

/// One line of a session log (`audit.jsonl`, `transcript.jsonl`), terminal-safe
/// and lossless.
pub fn to_log_line(value: &impl Serialize) -> String {
    write(value, Invisible::Escaped)
}

fn write(value: &impl Serialize, invisible: Invisible) -> String {
    let mut out = Vec::new();
    let mut ser = serde_json::Serializer::with_formatter(&mut out, InertFormatter(invisible));
    if value.serialize(&mut ser).is_err() {
        return "null".into();
    }
    String::from_utf8(out).unwrap_or_else(|_| "null".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn logs_escape_dangerous_and_invisible_characters_and_keep_the_data() {
        let text = "a\u{1b}[2J\u{9b}b\u{202e}c\u{7f}é\u{200b}\u{E0041}👩‍💻";
        let line = to_log_line(&serde_json::json!({ "t": text }));
        assert_eq!(
            line,
            r#"{"t":"a\u001b[2J\u009bb\u202ec\u007fé\u200b\udb40\udc41👩‍💻"}"#
        );
        let back: serde_json::Value = serde_json::from_str(&line).unwrap();
        assert_eq!(back["t"], text);
    }

    #[test]
    fn output_shows_invisible_characters_as_text() {
        let text = "a\u{9b}b\u{202e}c\u{200b}d\u{E0041} ❤️";
        let line = to_line(&serde_json::json!({ "t": text }));
        assert_eq!(line, r#"{"t":"a\u009bb<U+202E>c<U+200B>d<U+E0041> ❤️"}"#);
    }
}
