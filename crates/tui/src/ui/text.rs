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
    let mut out = fit(text, columns);
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
}
