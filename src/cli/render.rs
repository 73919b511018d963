//! Human output of the headless commands. Every server-controlled string goes
//! through `sanitize` here.

use std::fmt::Write as _;

use serde_json::Value;

use crate::mcp::ConnectError;
use crate::sanitize::{inert, inert_line};

/// Says that a connect pinned tools (trust on first use), for stderr.
pub fn pinned_note(alias: &str, pins: &crate::mcp::pins::PinSummary) -> String {
    match pins.created.len() {
        0 => String::new(),
        n => format!(
            "mcp-harness: pinned {n} new tool definition{} of `{alias}` in {} (trust on first use)\n",
            if n == 1 { "" } else { "s" },
            pins.location
        ),
    }
}

/// Lines of server output shown under an error.
const SERVER_OUTPUT_LINES: usize = 8;

/// A connect error: what happened, what to do, and what the server said.
pub fn connect_error(alias: &str, e: &ConnectError) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "{alias}: {} ({})", kind_label(e), e.code);
    let _ = writeln!(out, "  {}", inert_line(&e.message, 2000));
    let _ = writeln!(out, "  what to do: {}", e.hint);
    out.push_str(&definition_changes(e.changes()));
    out.push_str(&server_output(&e.server_output.join("\n")));
    out
}

/// Each changed definition as a diff (already inert, hidden characters
/// visible), indented under the error.
pub fn definition_changes(changes: &[crate::mcp::DefinitionChange]) -> String {
    let mut out = String::new();
    for change in changes {
        let tool = inert_line(&change.tool, 80);
        let _ = match &change.renamed_from {
            Some(from) => writeln!(
                out,
                "  `{tool}` is `{}` renamed (sha256 {} → {}):",
                inert_line(from, 80),
                short(&change.old_sha256),
                short(&change.new_sha256)
            ),
            None if change.old_sha256.is_empty() => writeln!(
                out,
                "  `{tool}` is new, not pinned (sha256 {}):",
                short(&change.new_sha256)
            ),
            None => writeln!(
                out,
                "  `{tool}` changed (sha256 {} → {}):",
                short(&change.old_sha256),
                short(&change.new_sha256)
            ),
        };
        // The rule and its reason are the harness's words; the phrase the server's.
        for why in &change.suspicious {
            let _ = writeln!(
                out,
                "    suspicious: {} — {} (in {}): \"{}\"",
                why.rule,
                why.reason,
                inert_line(&why.field, 120),
                inert_line(&why.phrase, 200)
            );
        }
        let diff = crate::protocol::diff::narrowed(&change.diff, crate::mcp::pins::diff::CONTEXT);
        for line in diff.lines() {
            let _ = writeln!(out, "    {line}");
        }
    }
    out
}

fn short(sha: &str) -> &str {
    sha.get(..12).unwrap_or(sha)
}

pub fn kind_label(e: &ConnectError) -> &'static str {
    match e.kind() {
        crate::mcp::FailureKind::Rejected => "rejected",
        crate::mcp::FailureKind::Failed => "failed",
    }
}

/// Server output, marked as such and made inert (the last lines only).
pub fn server_output(text: &str) -> String {
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    if lines.is_empty() {
        return String::new();
    }
    let mut out = String::from("  server output (untrusted, never shown to the model):\n");
    for line in &lines[lines.len().saturating_sub(SERVER_OUTPUT_LINES)..] {
        let _ = writeln!(out, "  │ {}", inert_line(line, 200));
    }
    out
}

/// A tool result's content blocks for a terminal, each as the model sees it:
/// text as text, an embedded resource's text under a header naming it, and
/// every other block as one line (images and audio with their type and size,
/// never their base64; resource links with their URI). `--json` keeps the blocks.
pub fn content(blocks: &[Value]) -> String {
    use crate::mcp::content::{Block, resource_header, summary_line};
    let mut out = String::new();
    let mut text = |t: &str| {
        out.push_str(&inert(t, true));
        if !t.ends_with('\n') {
            out.push('\n');
        }
    };
    for block in blocks {
        match Block::of(block) {
            Block::Text(t) => text(t),
            Block::Resource {
                uri,
                mime,
                text: Some(body),
                ..
            } => {
                text(&inert_line(&resource_header(uri, mime), 500));
                text(body);
            }
            other => text(&inert_line(&summary_line(&other).unwrap_or_default(), 500)),
        }
    }
    out
}
