//! Untrusted text → inert text (SPEC rules 13 and 15).
//!
//! Everything a server sends (names, descriptions, results, stderr) passes through
//! [`inert`] before it reaches a terminal, so server output can never move the cursor,
//! set the window title, write the clipboard or reorder text with bidi overrides, and
//! nothing in it is invisible. Text bound for the model goes through [`for_model`]
//! instead: invisible code points removed.

pub mod controls;
pub mod hidden;
pub mod json;

use hidden::Class;

/// Replaces every character that a terminal could interpret, or that it would
/// draw as nothing, with a visible stand-in.
///
/// - C0 controls (except `\n` and `\t`), DEL and C1 controls become `�`-free
///   caret/hex forms such as `^[` or `<U+009B>`, so the operator can see that
///   something was there without it taking effect.
/// - Bidi overrides and isolates (U+202A–U+202E, U+2066–U+2069, U+200E/F, U+061C)
///   and every invisible code point (SPEC rule 15, see [`hidden`]: zero-width
///   characters, tag characters, variation selectors, …) become `<U+202E>` etc.
///   Joiners and selectors inside an emoji stay.
///
/// `keep_newlines = false` also neutralizes `\n` (for one-line contexts: table cells,
/// names, titles).
pub fn inert(text: &str, keep_newlines: bool) -> String {
    let mut out = String::with_capacity(text.len());
    for (c, class) in hidden::classify(text) {
        match c {
            '\n' if keep_newlines => out.push('\n'),
            '\t' => out.push_str(if keep_newlines { "\t" } else { " " }),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            c if (c as u32) < 0x20 => {
                out.push('^');
                out.push(char::from(b'@' + c as u8));
            }
            c if class == Class::Hidden || is_dangerous(c) => {
                out.push_str(&format!("<U+{:04X}>", c as u32))
            }
            c => out.push(c),
        }
    }
    out
}

/// Server text for the model: invisible code points, controls and escape
/// sequences removed (the model never gets them, not even inside emoji).
///
/// Borrowed when there is nothing to change: printable ASCII with newlines and
/// tabs, what nearly every description is (the poisoning screen reads every
/// prose string of every definition through this).
pub fn for_model(text: &str) -> std::borrow::Cow<'_, str> {
    if text
        .bytes()
        .all(|b| (0x20..0x7f).contains(&b) || b == b'\n' || b == b'\t')
    {
        return std::borrow::Cow::Borrowed(text);
    }
    std::borrow::Cow::Owned(inert(&hidden::strip(text), true))
}

/// [`for_model`] on one line of at most `max_chars` characters.
pub fn for_model_line(text: &str, max_chars: usize) -> String {
    inert_line(&hidden::strip(text), max_chars)
}

/// One line, at most `max_chars` characters (an ellipsis marks a cut), inert.
pub fn inert_line(text: &str, max_chars: usize) -> String {
    let clean = inert(text, false);
    if clean.chars().count() <= max_chars {
        return clean;
    }
    let mut cut: String = clean.chars().take(max_chars.saturating_sub(1)).collect();
    cut.push('…');
    cut
}

/// Characters other than C0 controls that a terminal or a text layout engine acts on.
pub fn is_dangerous(c: char) -> bool {
    matches!(c as u32,
        0x7f            // DEL
        | 0x80..=0x9f   // C1 controls (CSI, OSC, … in 8-bit form)
        | 0x061c        // arabic letter mark
        | 0x200e | 0x200f
        | 0x202a..=0x202e
        | 0x2066..=0x2069)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn for_model_borrows_only_what_the_full_path_leaves_unchanged() {
        let printable: String = (0x20u8..0x7f).map(char::from).chain(['\n', '\t']).collect();
        assert!(matches!(
            for_model(&printable),
            std::borrow::Cow::Borrowed(_)
        ));
        assert_eq!(inert(&hidden::strip(&printable), true), printable);
        for changed in ["a\rb", "a\u{1b}[2Jb", "a\u{200b}b", "a\u{7f}b", "caf\u{e9}"] {
            assert!(
                matches!(for_model(changed), std::borrow::Cow::Owned(_)),
                "{changed:?}"
            );
        }
    }

    #[test]
    fn escape_sequences_become_visible_text() {
        let hostile = "a\x1b]0;pwned\x07b\x1b[2Jc\u{9b}31md\u{202e}e";
        let clean = inert(hostile, true);
        assert!(!clean.chars().any(|c| c.is_control() && c != '\n'));
        assert!(!clean.chars().any(is_dangerous));
        assert_eq!(clean, "a^[]0;pwned^Gb^[[2Jc<U+009B>31md<U+202E>e");
    }

    #[test]
    fn invisible_text_is_shown_to_the_operator_and_removed_for_the_model() {
        let text = "Look\u{200B}up\u{E0049}\u{E0047} 👩‍💻 \u{202E}x\u{9b}";
        assert_eq!(
            inert(text, true),
            "Look<U+200B>up<U+E0049><U+E0047> 👩‍💻 <U+202E>x<U+009B>"
        );
        assert_eq!(for_model(text), "Lookup 👩💻 x");
        assert_eq!(for_model("a\x1b]0;pwned\x07b\x1b[2Jc\u{9b}31md"), "abcd");
        assert_eq!(for_model_line("a\u{FEFF}\nb", 10), "a\\nb");
    }

    #[test]
    fn newlines_kept_or_flattened() {
        assert_eq!(inert("a\nb\r\n", true), "a\nb\\r\n");
        assert_eq!(inert("a\nb\tc", false), "a\\nb c");
    }

    #[test]
    fn inert_line_cuts_on_char_boundaries() {
        assert_eq!(inert_line("déjà vu", 4), "déj…");
        assert_eq!(inert_line("short", 10), "short");
    }
}
