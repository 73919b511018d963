//! Invisible code points (SPEC rule 15): characters a terminal draws as nothing,
//! with which a server can hide text from the operator that a model still reads
//! (tag characters spell ASCII invisibly).
//!
//! What counts is decided by Unicode's own data (ICU4X `icu_properties`, already
//! in the build through the URL stack), never a hand list: general category
//! **Cf** (format: zero-width space and joiners, bidi controls, word joiner,
//! invisible operators, the byte-order mark, soft hyphen, tag characters, …),
//! **Zl**/**Zp** (line and paragraph separators), and every
//! **Default_Ignorable_Code_Point** (adds variation selectors, Hangul fillers,
//! the combining grapheme joiner, Mongolian free variation selectors, and the
//! reserved ranges meant to stay invisible).
//!
//! Emoji are the one exception, and only for the operator's view: a zero-width
//! joiner *between two emoji* (👩‍💻) and a variation selector right after a
//! character that is an emoji (❤️, 1️⃣) are how emoji are written, so they stay
//! as they are there and do not flag a tool. That context is told by Unicode's
//! emoji properties (Extended_Pictographic, Emoji_Modifier, Emoji); one joiner
//! or selector per emoji carries at most a bit, and the model never gets them
//! either way. Tag characters are always made visible, even inside a flag
//! sequence (🏴 + tags), because they are exactly what spells hidden ASCII.

use icu_properties::props::{
    DefaultIgnorableCodePoint, Emoji, EmojiModifier, ExtendedPictographic, GeneralCategory,
};
use icu_properties::{CodePointMapData, CodePointSetData};

const ZWJ: char = '\u{200D}';

/// How one character of untrusted text is treated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Class {
    /// Shown as it is.
    Visible,
    /// Invisible: made visible as `<U+XXXX>` for the operator, removed for the model.
    Hidden,
    /// A joiner or variation selector inside an emoji: kept for the operator,
    /// removed for the model, not a reason to flag.
    EmojiPart,
}

/// Invisible by Unicode's data, whatever surrounds it.
pub fn is_invisible(c: char) -> bool {
    if c.is_ascii() {
        return false;
    }
    let category = CodePointMapData::<GeneralCategory>::new().get(c);
    matches!(
        category,
        GeneralCategory::Format
            | GeneralCategory::LineSeparator
            | GeneralCategory::ParagraphSeparator
    ) || CodePointSetData::new::<DefaultIgnorableCodePoint>().contains(c)
}

fn is_variation_selector(c: char) -> bool {
    matches!(c, '\u{FE0E}' | '\u{FE0F}')
}

/// Each character of `text` with its class, in order.
pub fn classify(text: &str) -> impl Iterator<Item = (char, Class)> + '_ {
    let mut chars = text.chars().peekable();
    // Whether the previous character ended an emoji (a pictograph, a skin-tone
    // modifier, or a selector kept as part of one).
    let mut after_emoji = false;
    // Whether the previous character is an emoji at all (selectors may follow it).
    let mut after_emoji_base = false;
    std::iter::from_fn(move || {
        let c = chars.next()?;
        if c.is_ascii() {
            // Digits, `#` and `*` are emoji bases of keycaps (1️⃣).
            after_emoji_base = c.is_ascii_digit() || c == '#' || c == '*';
            after_emoji = false;
            return Some((c, Class::Visible));
        }
        let class = if !is_invisible(c) {
            Class::Visible
        } else if (is_variation_selector(c) && after_emoji_base)
            || (c == ZWJ
                && after_emoji
                && chars.peek().is_some_and(|next| {
                    CodePointSetData::new::<ExtendedPictographic>().contains(*next)
                }))
        {
            Class::EmojiPart
        } else {
            Class::Hidden
        };
        let pictograph = CodePointSetData::new::<ExtendedPictographic>().contains(c)
            || CodePointSetData::new::<EmojiModifier>().contains(c);
        after_emoji = pictograph || (class == Class::EmojiPart && c != ZWJ);
        after_emoji_base = class == Class::Visible && CodePointSetData::new::<Emoji>().contains(c);
        Some((c, class))
    })
}

/// Whether `text` holds an invisible character outside an emoji, or a control
/// character or escape sequence (which the model never gets either).
pub fn has_hidden(text: &str) -> bool {
    super::controls::has_controls(text)
        // ASCII has no invisible character.
        || (!text.is_ascii() && classify(text).any(|(_, class)| class == Class::Hidden))
}

/// `text` without any invisible character (emoji joiners and selectors
/// included), control character or escape sequence: what the model may read.
pub fn strip(text: &str) -> std::borrow::Cow<'_, str> {
    let invisible = !text.is_ascii() && text.chars().any(is_invisible);
    let controls = super::controls::needs_strip(text);
    if !invisible && !controls {
        return std::borrow::Cow::Borrowed(text);
    }
    let visible: String = text.chars().filter(|c| !is_invisible(*c)).collect();
    std::borrow::Cow::Owned(if controls {
        super::controls::strip(&visible)
    } else {
        visible
    })
}

/// Whether any string in `value` (object keys included) holds hidden text.
pub fn value_has_hidden(value: &serde_json::Value) -> bool {
    use serde_json::Value;
    match value {
        Value::String(s) => has_hidden(s),
        Value::Array(items) => items.iter().any(value_has_hidden),
        Value::Object(map) => map
            .iter()
            .any(|(k, v)| has_hidden(k) || value_has_hidden(v)),
        _ => false,
    }
}

/// `value` with every string (and key) stripped of invisible characters.
pub fn strip_value(value: &serde_json::Value) -> serde_json::Value {
    use serde_json::Value;
    match value {
        Value::String(s) => Value::String(strip(s).into_owned()),
        Value::Array(items) => Value::Array(items.iter().map(strip_value).collect()),
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| (strip(k).into_owned(), strip_value(v)))
                .collect(),
        ),
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hidden(text: &str) -> Vec<char> {
        classify(text)
            .filter(|(_, class)| *class == Class::Hidden)
            .map(|(c, _)| c)
            .collect()
    }

    #[test]
    fn unicode_data_decides_what_is_invisible() {
        for c in [
            '\u{200B}',
            '\u{200C}',
            '\u{200D}',
            '\u{200E}',
            '\u{200F}',
            '\u{2060}',
            '\u{2061}',
            '\u{2064}',
            '\u{FEFF}',
            '\u{00AD}',
            '\u{202E}',
            '\u{2066}',
            '\u{061C}',
            '\u{180E}',
            '\u{2028}',
            '\u{2029}',
            '\u{FE00}',
            '\u{FE0F}',
            '\u{E0100}',
            '\u{E01EF}',
            '\u{E0001}',
            '\u{E0041}',
            '\u{E007F}',
            '\u{115F}',
            '\u{3164}',
            '\u{034F}',
        ] {
            assert!(is_invisible(c), "U+{:04X}", c as u32);
        }
        for c in [
            'a', 'é', ' ', '\u{00A0}', '\u{3000}', '漢', '😀', '\u{0301}', '\u{E000}',
        ] {
            assert!(!is_invisible(c), "U+{:04X}", c as u32);
        }
    }

    #[test]
    fn tag_characters_spelling_ascii_are_hidden() {
        let tags: String = "ignore"
            .chars()
            .map(|c| char::from_u32(0xE0000 + c as u32).unwrap())
            .collect();
        let text = format!("Look up a key.{tags}");
        assert!(has_hidden(&text));
        assert_eq!(hidden(&text).len(), 6);
        assert_eq!(strip(&text), "Look up a key.");
    }

    #[test]
    fn emoji_joiners_and_selectors_stay_for_the_operator_only() {
        for emoji in ["👩‍💻", "👩🏽‍💻", "❤️", "⚠️ careful", "1️⃣", "🏳️‍🌈", "👨‍👩‍👧"]
        {
            assert!(!has_hidden(emoji), "{emoji:?}: {:?}", hidden(emoji));
            assert!(strip(emoji).chars().all(|c| !is_invisible(c)), "{emoji:?}");
        }
        // Outside an emoji they are hidden text like any other.
        for text in [
            "a\u{200D}b",
            "a\u{FE0F}",
            "😀\u{200D}",
            "\u{200D}😀",
            "😀\u{200D}\u{200D}😀",
        ] {
            assert!(has_hidden(text), "{text:?}");
        }
        // A flag's tag sequence is shown: tags are what spells hidden ASCII.
        assert!(has_hidden(
            "🏴\u{E0067}\u{E0062}\u{E0065}\u{E006E}\u{E0067}\u{E007F}"
        ));
    }

    #[test]
    fn values_are_scanned_and_stripped_keys_included() {
        let schema = serde_json::json!({"type": "object", "properties": {
            "k\u{200B}": {"type": "string", "description": "fine"}}});
        assert!(value_has_hidden(&schema));
        let clean = strip_value(&schema);
        assert!(!value_has_hidden(&clean));
        assert!(clean["properties"].get("k").is_some());
        assert!(!value_has_hidden(
            &serde_json::json!({"d": "ok 👩‍💻", "n": 1})
        ));
    }
}
