//! A definition diff narrowed to the context its reader has room for.
//!
//! The backend sends a change's diff with the whole definition as context
//! ([`crate::PinChangeView::diff`]); who shows it decides how much of that
//! context fits: the diff window as much as its height holds, `check` three
//! lines. The result is a unified diff again, with its hunk headers recounted.

/// `diff` (a unified diff) with only `radius` lines of context around each
/// change; the `---`/`+++` header and `\` comment lines are kept. A diff
/// without changes comes back as it is.
pub fn narrowed(diff: &str, radius: usize) -> String {
    let mut out = String::with_capacity(diff.len());
    let mut body: Vec<Entry> = Vec::new();
    let (mut old, mut new) = (0usize, 0usize);
    let mut in_hunks = false;
    for line in diff.lines() {
        if !in_hunks && (line.starts_with("---") || line.starts_with("+++")) {
            out.push_str(line);
            out.push('\n');
            continue;
        }
        if let Some((old_start, new_start)) = hunk_start(line) {
            // A later hunk: its own numbers, and a gap no context may bridge.
            if !body.is_empty() {
                body.push(Entry::gap());
            }
            (old, new) = (old_start, new_start);
            in_hunks = true;
            continue;
        }
        let kind = match line.chars().next() {
            Some('-') => Kind::Removed,
            Some('+') => Kind::Added,
            Some('\\') => Kind::Comment,
            _ => Kind::Same,
        };
        body.push(Entry {
            kind,
            text: line,
            old,
            new,
        });
        match kind {
            Kind::Removed => old += 1,
            Kind::Added => new += 1,
            Kind::Same => (old, new) = (old + 1, new + 1),
            Kind::Comment | Kind::Gap => {}
        }
    }
    let keep = kept(&body, radius);
    let mut i = 0;
    while i < body.len() {
        if !keep[i] {
            i += 1;
            continue;
        }
        let end = (i..body.len()).find(|&j| !keep[j]).unwrap_or(body.len());
        let hunk = &body[i..end];
        let old_len = hunk
            .iter()
            .filter(|e| matches!(e.kind, Kind::Same | Kind::Removed))
            .count();
        let new_len = hunk
            .iter()
            .filter(|e| matches!(e.kind, Kind::Same | Kind::Added))
            .count();
        out.push_str(&format!(
            "@@ -{} +{} @@\n",
            range(hunk[0].old, old_len),
            range(hunk[0].new, new_len)
        ));
        for entry in hunk {
            out.push_str(entry.text);
            out.push('\n');
        }
        i = end;
    }
    out
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Same,
    Removed,
    Added,
    /// A `\` line: it speaks of the line before it and goes where it goes.
    Comment,
    /// Between two hunks of the input.
    Gap,
}

struct Entry<'a> {
    kind: Kind,
    text: &'a str,
    /// Lines of the old and the new text before this one (0-based).
    old: usize,
    new: usize,
}

impl Entry<'_> {
    fn gap() -> Self {
        Entry {
            kind: Kind::Gap,
            text: "",
            old: 0,
            new: 0,
        }
    }
}

/// Which entries stay: every change, the context within `radius` lines of
/// one (never across a gap), and each comment with the line it follows.
fn kept(body: &[Entry], radius: usize) -> Vec<bool> {
    let mut keep = vec![false; body.len()];
    let changed = |e: &Entry| matches!(e.kind, Kind::Removed | Kind::Added);
    for (i, entry) in body.iter().enumerate() {
        if !changed(entry) {
            continue;
        }
        keep[i] = true;
        for step in [-1isize, 1] {
            let (mut j, mut lines) = (i as isize, 0);
            loop {
                j += step;
                let Some(other) = usize::try_from(j).ok().and_then(|j| body.get(j)) else {
                    break;
                };
                match other.kind {
                    Kind::Gap => break,
                    Kind::Comment => {}
                    Kind::Same if lines == radius => break,
                    Kind::Same => lines += 1,
                    Kind::Removed | Kind::Added => break,
                }
                keep[j as usize] = true;
            }
        }
    }
    // A comment goes with the line before it.
    for i in 1..body.len() {
        if body[i].kind == Kind::Comment {
            keep[i] = keep[i - 1];
        }
    }
    keep
}

/// The start line (0-based) of the old and new side of a hunk header.
fn hunk_start(line: &str) -> Option<(usize, usize)> {
    let rest = line.strip_prefix("@@ -")?;
    let (old, rest) = rest.split_once(" +")?;
    let (new, _) = rest.split_once(" @@")?;
    let start = |range: &str| -> Option<usize> {
        let (start, len) = match range.split_once(',') {
            Some((s, l)) => (s.parse::<usize>().ok()?, l.parse::<usize>().ok()?),
            None => (range.parse().ok()?, 1),
        };
        // An empty range names the line before it.
        Some(if len == 0 {
            start
        } else {
            start.saturating_sub(1)
        })
    };
    Some((start(old)?, start(new)?))
}

/// `start,len` as a unified diff writes it (1-based; an empty range names the
/// line before it; a length of one is left out).
fn range(before: usize, len: usize) -> String {
    match len {
        1 => format!("{}", before + 1),
        0 => format!("{before},0"),
        _ => format!("{},{len}", before + 1),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const FULL: &str = "--- pinned\n+++ published\n@@ -1,9 +1,9 @@\n a\n b\n c\n d\n-e\n+E\n\\ note on E\n f\n g\n h\n i\n";

    #[test]
    fn narrowing_keeps_the_context_it_is_given_room_for() {
        assert_eq!(
            narrowed(FULL, 1),
            "--- pinned\n+++ published\n@@ -4,3 +4,3 @@\n d\n-e\n+E\n\\ note on E\n f\n"
        );
        assert_eq!(
            narrowed(FULL, 0),
            "--- pinned\n+++ published\n@@ -5 +5 @@\n-e\n+E\n\\ note on E\n"
        );
        assert_eq!(narrowed(FULL, 100), FULL);
    }

    #[test]
    fn changes_far_apart_become_two_hunks_and_pure_additions_count_from_the_line_before() {
        let full = "@@ -1,6 +1,6 @@\n a\n+x\n b\n c\n d\n e\n-f\n";
        assert_eq!(
            narrowed(full, 1),
            "@@ -1,2 +1,3 @@\n a\n+x\n b\n@@ -5,2 +6 @@\n e\n-f\n"
        );
        let added = "@@ -0,0 +1,2 @@\n+a\n+b\n";
        assert_eq!(narrowed(added, 3), added);
    }

    #[test]
    fn a_diff_without_changes_keeps_only_its_header() {
        assert_eq!(narrowed("--- a\n+++ b\n", 3), "--- a\n+++ b\n");
        assert_eq!(narrowed("", 3), "");
    }
}
