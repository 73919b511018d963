//! Text to a width, by display columns: a cut always ends with `…`, so the
//! operator can tell a short text from a shortened one.

use ratatui::text::{Line, Span};
use unicode_width::UnicodeWidthChar;

/// A size in bytes as people read it (`512 B`, `1.5 kB`, `3.0 MB`).
pub fn bytes(n: u64) -> String {
    match n {
        n if n < 1024 => format!("{n} B"),
        n if n < 1024 * 1024 => format!("{:.1} kB", n as f64 / 1024.0),
        n => format!("{:.1} MB", n as f64 / (1024.0 * 1024.0)),
    }
}

/// The columns `text` takes.
pub fn width(text: &str) -> usize {
    text.chars().map(|c| c.width().unwrap_or(0)).sum()
}

/// `text` in at most `max` columns; cut with a trailing `…` when longer.
pub fn fit(text: &str, max: usize) -> String {
    if width(text) <= max {
        return text.to_string();
    }
    if max == 0 {
        return String::new();
    }
    let mut out = take(text, max - 1);
    out.push('…');
    out
}

/// `text` fitted to exactly `columns` columns (cut with `…`, or padded).
pub fn pad(text: &str, columns: usize) -> String {
    padded(fit(text, columns), columns)
}

/// A name in at most `max` columns, cut in the middle (`get-reso…ce-links`):
/// both ends stay, so names that share a start (`get-resource-links`,
/// `get-resource-reference`) or an end still read apart.
pub fn fit_middle(text: &str, max: usize) -> String {
    if width(text) <= max {
        return text.to_string();
    }
    if max == 0 {
        return String::new();
    }
    let room = max - 1;
    // The end tells names apart as often as the start does: it gets the odd column.
    let head = room / 2;
    let mut out = take(text, head);
    out.push('…');
    out.push_str(&take_end(text, room - head));
    out
}

/// `ALIAS/NAME` in at most `max` columns: the alias yields first, to a short
/// start (`eve…/`, the same in every row, so the names stay aligned), then
/// the name, in its middle — the name is what tells one server's rows apart.
pub fn fit_qualified(alias: &str, name: &str, max: usize) -> String {
    /// What a cut alias keeps: a start and its `…`.
    const ALIAS_CUT: usize = 4;
    if width(alias) + 1 + width(name) <= max {
        return format!("{alias}/{name}");
    }
    let alias = fit(alias, ALIAS_CUT);
    let alias_w = width(&alias);
    if alias_w + 2 >= max {
        return fit_middle(&format!("{alias}/{name}"), max);
    }
    format!("{alias}/{}", fit_middle(name, max - alias_w - 1))
}

/// [`fit_middle`] padded to exactly `columns` columns.
pub fn pad_middle(text: &str, columns: usize) -> String {
    padded(fit_middle(text, columns), columns)
}

fn padded(mut out: String, columns: usize) -> String {
    let used = width(&out);
    out.extend(std::iter::repeat_n(' ', columns.saturating_sub(used)));
    out
}

/// A line cut to `max` columns, ending with `…` in the style of the span
/// where it was cut. A line that fits is returned as it is.
pub fn fit_line(line: Line<'static>, max: usize) -> Line<'static> {
    let total: usize = line.spans.iter().map(|s| width(&s.content)).sum();
    if total <= max || max == 0 {
        return line;
    }
    let limit = max - 1;
    let mut spans = Vec::new();
    let mut used = 0;
    for span in line.spans {
        let w = width(&span.content);
        if used + w <= limit {
            used += w;
            spans.push(span);
            continue;
        }
        let mut cut = take(&span.content, limit - used);
        cut.push('…');
        spans.push(Span::styled(cut, span.style));
        break;
    }
    Line {
        spans,
        style: line.style,
        alignment: line.alignment,
    }
}

/// The longest start of `text` that fits in `columns` columns.
fn take(text: &str, columns: usize) -> String {
    let mut out = String::new();
    let mut used = 0;
    for c in text.chars() {
        let w = c.width().unwrap_or(0);
        if used + w > columns {
            break;
        }
        out.push(c);
        used += w;
    }
    out
}

/// The longest end of `text` that fits in `columns` columns.
fn take_end(text: &str, columns: usize) -> String {
    let mut used = 0;
    let mut start = text.len();
    for (at, c) in text.char_indices().rev() {
        let w = c.width().unwrap_or(0);
        if used + w > columns {
            break;
        }
        used += w;
        start = at;
    }
    text[start..].to_string()
}

/// Every line of a pane fitted to its width.
pub fn fit_lines(lines: Vec<Line<'static>>, max: usize) -> Vec<Line<'static>> {
    lines.into_iter().map(|l| fit_line(l, max)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cuts_end_with_an_ellipsis_and_count_columns() {
        assert_eq!(fit("lookup", 6), "lookup");
        assert_eq!(fit("lookup", 5), "look…");
        assert_eq!(fit("日本語", 4), "日…");
        assert_eq!(pad("ab", 4), "ab  ");
        let line = Line::from(vec![Span::raw("abc"), Span::raw("defgh")]);
        let cut = fit_line(line, 6);
        let text: String = cut.spans.iter().map(|s| s.content.to_string()).collect();
        assert_eq!(text, "abcde…");
    }

    #[test]
    fn a_middle_cut_keeps_both_ends() {
        assert_eq!(fit_middle("get-resource-links", 18), "get-resource-links");
        assert_eq!(fit_middle("get-resource-links", 14), "get-re…e-links");
        assert_ne!(
            fit_middle("get-resource-links", 14),
            fit_middle("get-resource-reference", 14)
        );
        assert_eq!(fit_middle("日本語です", 6), "日…す");
        assert_eq!(fit_middle("abc", 0), "");
        assert_eq!(fit_middle("abcdef", 1), "…");
        assert_eq!(pad_middle("abcdefgh", 5), "ab…gh");
        assert_eq!(pad_middle("ab", 4), "ab  ");
    }

    #[test]
    fn a_qualified_name_cuts_its_alias_first() {
        assert_eq!(fit_qualified("every", "echo", 10), "every/echo");
        assert_eq!(
            fit_qualified("everything", "get-resource-links", 23),
            "eve…/get-resource-links"
        );
        assert_eq!(
            fit_qualified("everything", "get-resource-links", 22),
            "eve…/get-reso…ce-links"
        );
        assert_eq!(fit_qualified("everything", "get-resource-links", 4), "e…ks");
    }
}
