//! Every string a server (or the model) sends passes through here before it
//! reaches a widget: escape sequences, C0/C1 controls and bidi overrides become
//! visible, inert text (see `crate::sanitize`, which the headless commands share).

use textwrap::Options;

/// Multi-line text, inert.
pub fn text(raw: &str) -> String {
    crate::sanitize::inert(raw, true)
}

/// One line, inert, whole (the caller fits it to a column).
pub fn inert_text(raw: &str) -> String {
    crate::sanitize::inert(raw, false)
}

/// One line, inert, at most `max` characters.
pub fn line(raw: &str, max: usize) -> String {
    crate::sanitize::inert_line(raw, max)
}

/// Inert text wrapped to `width` columns.
pub fn wrapped(raw: &str, width: usize) -> Vec<String> {
    let clean = text(raw);
    let width = width.max(8);
    let mut out = Vec::new();
    for paragraph in clean.split('\n') {
        if paragraph.is_empty() {
            out.push(String::new());
            continue;
        }
        out.extend(
            textwrap::wrap(paragraph, Options::new(width).break_words(true))
                .into_iter()
                .map(|l| l.into_owned()),
        );
    }
    out
}
