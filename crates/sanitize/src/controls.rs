//! Control characters and terminal escape sequences in server text. The
//! operator sees them made visible (`inert`); the model gets none of them —
//! not the ESC, not the BEL, not a C1 CSI, and not the rest of a sequence
//! (`]0;title`, `[2J`) either, which would read as noise or as a hidden
//! payload. A `\r` right before a `\n` is a line ending, not a control that
//! hides anything; it goes too, without flagging the text.

const ESC: char = '\u{1b}';
const BEL: char = '\u{07}';
/// C1 forms: CSI, OSC, DCS, SOS, PM, APC, and the string terminator ST.
const C1_CSI: char = '\u{9b}';
const C1_ST: char = '\u{9c}';
/// The longest sequence removed whole; past it only the introducer goes
/// (a lone ESC must not swallow the rest of a text).
const MAX_SEQUENCE: usize = 256;

/// A character the model must not get: C0 but `\n` and `\t`, DEL, C1.
fn is_control(c: char) -> bool {
    c.is_control() && c != '\n' && c != '\t'
}

/// Whether `text` holds a control that hides or does something (a `\r`
/// before a `\n` does neither).
pub fn has_controls(text: &str) -> bool {
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\r' && chars.peek() == Some(&'\n') {
            continue;
        }
        if is_control(c) {
            return true;
        }
    }
    false
}

/// Whether `text` holds anything [`strip`] removes.
pub fn needs_strip(text: &str) -> bool {
    text.chars().any(is_control)
}

/// `text` without controls and escape sequences (whole, when they are
/// well formed and short).
pub fn strip(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if !is_control(c) {
            out.push(c);
            i += 1;
            continue;
        }
        i += sequence_len(&chars[i..]).unwrap_or(1);
    }
    out
}

/// The length of the escape sequence at the start of `s` (`s[0]` is a
/// control), if it is one that ends within [`MAX_SEQUENCE`] characters.
fn sequence_len(s: &[char]) -> Option<usize> {
    let window = &s[..s.len().min(MAX_SEQUENCE)];
    match (window.first()?, window.get(1)) {
        (&ESC, Some('[')) => csi_end(window, 2),
        (&C1_CSI, _) => csi_end(window, 1),
        // OSC, DCS, SOS, PM, APC: a string up to BEL or ST.
        (&ESC, Some(']' | 'P' | 'X' | '^' | '_')) => string_end(window, 2),
        ('\u{9d}' | '\u{90}' | '\u{98}' | '\u{9e}' | '\u{9f}', _) => string_end(window, 1),
        // ESC, intermediates (0x20–0x2F), one final byte (0x30–0x7E).
        (&ESC, Some(_)) => {
            let mut j = 1;
            while window
                .get(j)
                .is_some_and(|c| ('\u{20}'..='\u{2f}').contains(c))
            {
                j += 1;
            }
            window
                .get(j)
                .is_some_and(|c| ('\u{30}'..='\u{7e}').contains(c))
                .then_some(j + 1)
        }
        _ => None,
    }
}

/// CSI: parameters and intermediates (0x20–0x3F), then a final byte (0x40–0x7E).
fn csi_end(s: &[char], from: usize) -> Option<usize> {
    let mut j = from;
    while s.get(j).is_some_and(|c| ('\u{20}'..='\u{3f}').contains(c)) {
        j += 1;
    }
    s.get(j)
        .is_some_and(|c| ('\u{40}'..='\u{7e}').contains(c))
        .then_some(j + 1)
}

/// A control string: up to and with BEL, ESC `\` or C1 ST.
fn string_end(s: &[char], from: usize) -> Option<usize> {
    let mut j = from;
    while let Some(&c) = s.get(j) {
        match c {
            BEL | C1_ST => return Some(j + 1),
            ESC if s.get(j + 1) == Some(&'\\') => return Some(j + 2),
            _ => j += 1,
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sequences_go_whole_and_lone_controls_go_alone() {
        let hostile = "ok\x1b]0;pwned\x07\x1b[2J\x1b]52;c;cHduZWQ=\x07\u{9b}31m done\x1b(B.";
        assert_eq!(strip(hostile), "ok done.");
        assert!(has_controls(hostile));
        assert_eq!(strip("a\x07b\x00c\u{85}d\u{7f}e"), "abcde");
        assert_eq!(
            strip("line\r\nnext\ttab\n"),
            "line\nnexttab\n"
                .replace("next", "next\t")
                .replace("\t\ttab", "\ttab")
        );
        assert!(!has_controls("line\r\nnext\ttab\n"));
        assert!(has_controls("over\rwrite"));
        // An unterminated string takes only its introducer, not the text after.
        assert_eq!(strip("a\x1b]0;never ends"), "a]0;never ends");
        assert_eq!(strip("tail\x1b"), "tail");
        assert!(!needs_strip("plain ✓ text\n"));
    }
}
