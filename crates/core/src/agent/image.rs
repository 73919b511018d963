//! Which images may go to the model. A provider that refuses an image fails the
//! whole request — and since the image stays in the conversation, every request
//! after it — so anything doubtful becomes a text placeholder instead.

use crate::sanitize::inert_line;

/// The media types the Messages API accepts (OpenAI's vision input takes the same).
pub const MEDIA_TYPES: &[&str] = &["image/png", "image/jpeg", "image/gif", "image/webp"];

/// The Messages API refuses an image whose base64 text exceeds 5 MiB. Measured
/// on the text, as the API does, so the check needs no decoding.
pub const MAX_BASE64_BYTES: usize = 5 * 1024 * 1024;

/// Why this image cannot go to the model, or `None` when it can.
pub fn problem(media_type: &str, data: &str) -> Option<&'static str> {
    if data.is_empty() {
        Some("no data")
    } else if !MEDIA_TYPES.contains(&media_type) {
        Some("unsupported type (png, jpeg, gif and webp are supported)")
    } else if data.len() > MAX_BASE64_BYTES {
        Some("over the 5 MiB of base64 a model request may carry")
    } else if !is_base64(data) {
        Some("not valid base64")
    } else {
        None
    }
}

/// The text that stands in for an image the model does not get.
pub fn placeholder(media_type: &str, data: &str, reason: &str) -> String {
    format!(
        "[image: {}, {} bytes of base64, not shown: {reason}]",
        inert_line(media_type, 60),
        data.len()
    )
}

/// Standard base64 with padding: the alphabet, whole 4-symbol groups, and `=`
/// only as the last one or two symbols.
fn is_base64(data: &str) -> bool {
    let bytes = data.as_bytes();
    if !bytes.len().is_multiple_of(4) {
        return false;
    }
    let body = data.trim_end_matches('=');
    bytes.len() - body.len() <= 2
        && body
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'+' || b == b'/')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_supported_well_formed_images_of_bounded_size_pass() {
        assert_eq!(problem("image/png", "iVBORw0KGgo="), None);
        assert_eq!(problem("image/webp", "AAAA"), None);
        assert_eq!(problem("image/png", ""), Some("no data"));
        assert!(
            problem("image/svg+xml", "AAAA")
                .unwrap()
                .contains("unsupported")
        );
        assert!(problem("text/html", "AAAA").is_some());
        for bad in ["AAA", "AA=A", "A===", "AA AA==", "AA\nA", "AA-_"] {
            assert_eq!(
                problem("image/png", bad),
                Some("not valid base64"),
                "{bad:?}"
            );
        }
        let big = "A".repeat(MAX_BASE64_BYTES + 4);
        assert!(problem("image/png", &big).unwrap().contains("5 MiB"));
        assert_eq!(problem("image/png", &big[..MAX_BASE64_BYTES]), None);
    }

    #[test]
    fn the_placeholder_names_type_size_and_reason_inertly() {
        assert_eq!(
            placeholder("image/\u{1b}[2Jx", "AAAA", "why"),
            format!(
                "[image: {}, 4 bytes of base64, not shown: why]",
                inert_line("image/\u{1b}[2Jx", 60)
            )
        );
        assert!(!placeholder("image/\u{1b}[2Jx", "AAAA", "why").contains('\u{1b}'));
    }
}
