//! The diff view of an alias's changed definitions (rule 14): what the server
//! publishes now against what the operator approved, every hidden character
//! visible; then the one explicit act that accepts it. The pane draws these
//! lines and the reducer counts them (scrolling).

use ratatui::text::{Line, Span};

use super::keymap::Scope;
use super::keymap::keys_of;
use super::sanitize::{line, wrapped};
use super::state::AppState;
use super::theme;
use crate::protocol::{PinStatus, ServerView};

/// Whether `server` has definitions for the operator to review and accept.
pub fn reviewable(server: &ServerView) -> bool {
    server.pins_refused
}

/// Context lines around a change that the window keeps however short it is.
const LEAST_CONTEXT: usize = 3;

/// The diff view of `alias`, at this width, in a window `height` lines high:
/// each definition whole when that fits, else with as much context around
/// each change as fits (never less than [`LEAST_CONTEXT`] lines: then it
/// scrolls).
pub fn diff_lines(
    state: &AppState,
    alias: &str,
    confirming: bool,
    width: usize,
    height: usize,
) -> Vec<Line<'static>> {
    let at = |radius| view_lines(state, alias, confirming, width, radius);
    let whole = at(usize::MAX);
    if whole.len() <= height {
        return whole;
    }
    // The line count grows with the radius: the largest radius that fits.
    let (mut fits, mut over) = (LEAST_CONTEXT, longest_diff(state, alias));
    if at(fits).len() > height {
        return at(fits);
    }
    while over - fits > 1 {
        let mid = fits + (over - fits) / 2;
        if at(mid).len() <= height {
            fits = mid;
        } else {
            over = mid;
        }
    }
    at(fits)
}

/// Lines in the longest diff of `alias`: no context radius needs more.
fn longest_diff(state: &AppState, alias: &str) -> usize {
    state
        .servers
        .iter()
        .find(|s| s.alias == alias)
        .and_then(|s| s.pin_changes.iter().map(|c| c.diff.lines().count()).max())
        .unwrap_or(0)
        .max(LEAST_CONTEXT + 1)
}

fn view_lines(
    state: &AppState,
    alias: &str,
    confirming: bool,
    width: usize,
    radius: usize,
) -> Vec<Line<'static>> {
    let Some(server) = state.servers.iter().find(|s| s.alias == alias) else {
        return vec![Line::styled(
            "this server is no longer configured",
            theme::dim(),
        )];
    };
    if !reviewable(server) {
        return vec![Line::styled(
            "its definitions match their pins now: nothing to review",
            theme::dim(),
        )];
    }
    let para = |text: &str, style| -> Vec<Line<'static>> {
        wrapped(text, width)
            .into_iter()
            .map(|l| Line::styled(l, style))
            .collect()
    };
    let new: Vec<String> = server
        .published
        .iter()
        .filter(|t| t.pin == PinStatus::New)
        .filter(|t| !server.pin_changes.iter().any(|c| c.tool == t.name))
        .map(|t| format!("`{}`", line(&t.name, 60)))
        .collect();
    let first_use = server
        .pin_changes
        .iter()
        .all(|c| c.old_sha256.is_empty() && !c.suspicious.is_empty());
    let intro = if first_use {
        format!(
            "`{alias}` publishes definitions without a pin that read as addressed to the model \
             (the poisoning screen): they are never trusted on first use. Until you accept them \
             (or deny them in the policy), it stays refused. Every invisible character is shown \
             as <U+XXXX>. Text quoted from the server is untrusted."
        )
    } else {
        format!(
            "`{alias}` publishes definitions that differ from what was approved (pinned in {}). \
             Until you accept them, it stays refused. Pinned → published; every invisible \
             character is shown as <U+XXXX>. Text quoted from the server is untrusted.",
            server.pins_at
        )
    };
    let mut lines = para(&intro, theme::strong());
    for change in server.pin_changes.iter() {
        lines.push(Line::raw(""));
        let tool = line(&change.tool, 60);
        let head = match &change.renamed_from {
            Some(from) => format!("`{tool}` is `{}` renamed", line(from, 60)),
            None if change.old_sha256.is_empty() => format!("`{tool}` is new, not pinned"),
            None => format!("`{tool}` changed"),
        };
        lines.push(Line::from(vec![
            Span::styled(head, theme::warn()),
            Span::styled(
                if change.old_sha256.is_empty() {
                    format!("  sha256 {}", short(&change.new_sha256))
                } else {
                    format!(
                        "  sha256 {} → {}",
                        short(&change.old_sha256),
                        short(&change.new_sha256)
                    )
                },
                theme::dim(),
            ),
        ]));
        for why in &change.suspicious {
            // The rule and its reason are the harness's; the phrase the server's.
            let said = format!(
                "  suspicious: {} — {} (in {}): ",
                why.rule,
                why.reason,
                line(&why.field, 80)
            );
            let mut pieces = wrapped(&format!("{said}\"{}\"", line(&why.phrase, 200)), width);
            if let Some(first) = pieces.first_mut() {
                lines.push(Line::styled(std::mem::take(first), theme::warn()));
            }
            lines.extend(
                pieces
                    .into_iter()
                    .skip(1)
                    .map(|l| Line::styled(l, theme::untrusted())),
            );
        }
        let diff = crate::protocol::diff::narrowed(&change.diff, radius);
        for diff_line in diff.lines() {
            let style = match diff_line.chars().next() {
                Some('+') => theme::ok(),
                Some('-') => theme::error(),
                Some('@') => theme::dim(),
                Some('\\') => theme::warn(),
                _ => theme::untrusted(),
            };
            for piece in hard_wrap(&line(diff_line, 100_000), width) {
                lines.push(Line::styled(piece, style));
            }
        }
    }
    if !new.is_empty() {
        lines.push(Line::raw(""));
        lines.extend(para(
            &format!("No pin yet (new): {}", new.join(", ")),
            theme::warn(),
        ));
    }
    lines.push(Line::raw(""));
    if confirming {
        lines.extend(para(
            &format!(
                "Accept these definitions? They are pinned in {} and `{alias}` reconnects: from \
                 then on, what runs is exactly what is shown above.",
                server.pins_at
            ),
            theme::warn(),
        ));
        lines.push(Line::styled(keys_of(Scope::PinConfirm), theme::accent()));
    } else {
        lines.push(Line::styled(keys_of(Scope::PinDiff), theme::accent()));
    }
    lines
}

/// A diff line cut into pieces of `width` characters (the first character
/// says added/removed, so no word wrapping may move it).
fn hard_wrap(text: &str, width: usize) -> Vec<String> {
    let width = width.max(8);
    let chars: Vec<char> = text.chars().collect();
    if chars.is_empty() {
        return vec![String::new()];
    }
    chars
        .chunks(width)
        .map(|piece| piece.iter().collect())
        .collect()
}

fn short(sha: &str) -> &str {
    sha.get(..12).unwrap_or(sha)
}
