//! JSON with comments and trailing commas (VS Code's `mcp.json`, Gemini CLI's
//! `settings.json`, and what editors let people leave in the others) turned into
//! strict JSON of the same length: comments and trailing commas become spaces
//! (line breaks inside block comments stay), so every position serde_json
//! reports is the position in the file the operator wrote.

/// The strict-JSON equivalent of `text`, byte for byte the same length.
pub fn to_strict(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = bytes.to_vec();
    let mut i = 0;
    // The last comma seen outside strings and comments, not yet followed by a value.
    let mut pending_comma: Option<usize> = None;
    while i < bytes.len() {
        match bytes[i] {
            b'"' => {
                pending_comma = None;
                i += 1;
                while i < bytes.len() && bytes[i] != b'"' {
                    // An escape skips the next byte (an escaped quote or backslash).
                    i += if bytes[i] == b'\\' { 2 } else { 1 };
                }
                i += 1;
            }
            b'/' if bytes.get(i + 1) == Some(&b'/') => {
                while i < bytes.len() && bytes[i] != b'\n' {
                    out[i] = b' ';
                    i += 1;
                }
            }
            b'/' if bytes.get(i + 1) == Some(&b'*') => {
                let start = i;
                i += 2;
                while i < bytes.len() && !(bytes[i] == b'*' && bytes.get(i + 1) == Some(&b'/')) {
                    i += 1;
                }
                // An unterminated comment blanks to the end; serde_json then says
                // "EOF while parsing" at the right place.
                let end = (i + 2).min(bytes.len());
                for b in &mut out[start..end] {
                    if *b != b'\n' {
                        *b = b' ';
                    }
                }
                i = end;
            }
            b',' => {
                pending_comma = Some(i);
                i += 1;
            }
            b'}' | b']' => {
                if let Some(comma) = pending_comma.take() {
                    out[comma] = b' ';
                }
                i += 1;
            }
            b' ' | b'\t' | b'\r' | b'\n' => i += 1,
            _ => {
                pending_comma = None;
                i += 1;
            }
        }
    }
    // Only ASCII bytes were replaced by ASCII spaces, and only outside strings and
    // whole comments: the result is still UTF-8.
    String::from_utf8(out).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comments_and_trailing_commas_become_spaces() {
        let text = "{\n  // a comment, with \"quotes\"\n  \"a\": [1, 2,], /* b\n c */ \"s\": \"// not a comment, \\\"x\\\"\",\n}\n";
        let strict = to_strict(text);
        assert_eq!(strict.len(), text.len());
        let value: serde_json::Value = serde_json::from_str(&strict).unwrap();
        assert_eq!(value["a"], serde_json::json!([1, 2]));
        assert_eq!(value["s"], "// not a comment, \"x\"");
        assert_eq!(strict.lines().count(), text.lines().count());
    }

    #[test]
    fn errors_keep_their_position() {
        let text = "{\n  // note\n  \"a\": 1\n  \"b\": 2\n}";
        let e = serde_json::from_str::<serde_json::Value>(&to_strict(text)).unwrap_err();
        assert_eq!((e.line(), e.column()), (4, 3));
    }
}
