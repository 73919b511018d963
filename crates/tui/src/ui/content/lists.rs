//! The servers pane's lines and the registry's header and empty state.

use ratatui::text::{Line, Span};

use crate::protocol::{AliasStatus, SignInStatus};
use crate::ui::rows::EFFECT_WIDTH;
use crate::ui::sanitize::{inert_text, wrapped};
use crate::ui::state::{AppState, Focus};
use crate::ui::text::{fit, pad};
use crate::ui::theme;

/// The servers pane: every alias with its state, then the selected one's facts.
pub fn servers_lines(state: &AppState, width: usize) -> Vec<Line<'static>> {
    let focused = state.focus == Focus::Servers;
    let mut lines: Vec<Line<'static>> = Vec::new();
    if state.servers.is_empty() {
        lines.push(Line::styled("no servers configured", theme::dim()));
        lines.push(Line::raw(""));
        // The way in for someone whose servers live in another host's config.
        let hint = "bring yours from another host: quit, then run `mcp-harness import --from HOST` \
                    (claude-desktop, claude-code, cursor, vscode, codex or gemini) and start again";
        lines.extend(wrapped(hint, width).into_iter().map(Line::raw));
    }
    for (i, server) in state.servers.iter().enumerate() {
        let marker = match server.state {
            AliasStatus::Ready => "●",
            AliasStatus::Connecting => "◌",
            AliasStatus::Disconnected => "○",
            _ => "✗",
        };
        let label = server.state.label();
        let tools = if server.state == AliasStatus::Ready {
            format!(" {} tools", server.exposed)
        } else {
            String::new()
        };
        let name_width = width.saturating_sub(label.len() + tools.len() + 3).max(4);
        let mut row = Line::from(vec![
            Span::styled(format!("{marker} "), theme::state(server.state)),
            // A long alias is cut with `…` and keeps a space before its state.
            Span::raw(format!(
                "{} ",
                pad(&inert_text(&server.alias), name_width.saturating_sub(1))
            )),
            Span::styled(label, theme::state(server.state)),
            Span::styled(tools, theme::dim()),
        ]);
        if i == state.selected_server && focused {
            row = row.style(theme::selected());
        } else if i == state.selected_server {
            row = row.style(theme::strong());
        }
        lines.push(row);
    }
    if let Some(server) = state.selected_server() {
        lines.push(Line::raw(""));
        lines.extend(
            wrapped(&server.transport, width)
                .into_iter()
                .map(|l| Line::styled(l, theme::dim())),
        );
        if server.insecure_http {
            // Allowed by the config, never by default: everything it is sent
            // (arguments, headers, tokens) crosses the network readable.
            lines.extend(
                wrapped("insecure http: plaintext to a remote host", width)
                    .into_iter()
                    .map(|l| Line::styled(l, theme::warn())),
            );
        }
        if server.config_changed {
            // Runs as it was launched; the new settings wait for a reconnect.
            lines.extend(
                wrapped("config changed: r reconnects", width)
                    .into_iter()
                    .map(|l| Line::styled(l, theme::warn())),
            );
        }
        if let Some(detail) = &server.detail {
            let code = server
                .code
                .as_deref()
                .map(|c| format!("{c}: "))
                .unwrap_or_default();
            lines.extend(
                wrapped(&format!("{code}{detail}"), width)
                    .into_iter()
                    .map(|l| Line::styled(l, theme::error())),
            );
        }
        if !server.server_output.is_empty() {
            // The server's words (a failed connect's error text, its stderr):
            // marked as theirs, the last few lines only.
            lines.push(Line::styled(
                fit(
                    "server output (untrusted, never shown to the model):",
                    width,
                ),
                theme::untrusted(),
            ));
            let shown = &server.server_output[server.server_output.len().saturating_sub(4)..];
            for said in shown {
                lines.extend(
                    wrapped(said, width.saturating_sub(2))
                        .into_iter()
                        .take(3)
                        .map(|l| Line::styled(format!("│ {l}"), theme::untrusted())),
                );
            }
        }
        if !server.policy_missing.is_empty() || !server.policy_extra.is_empty() {
            lines.extend(
                wrapped("p: write a policy for what it publishes", width)
                    .into_iter()
                    .map(|l| Line::styled(l, theme::warn())),
            );
        }
        if server.pins_refused {
            lines.extend(
                wrapped("v: review the changed definitions, and accept them", width)
                    .into_iter()
                    .map(|l| Line::styled(l, theme::warn())),
            );
        }
        let sign_in = match server.sign_in {
            SignInStatus::Needed => Some(("s: sign in (it asks for authorization)", theme::warn())),
            SignInStatus::SignedIn => Some(("signed in · o: sign out", theme::dim())),
            SignInStatus::NotUsed | SignInStatus::Possible => None,
        };
        if let Some((text, style)) = sign_in {
            lines.extend(
                wrapped(text, width)
                    .into_iter()
                    .map(|l| Line::styled(l, style)),
            );
        }
    }
    lines
}

/// The lines above the registry's rows: for a server in trouble the whole
/// reason first, then the column header.
pub fn registry_header(state: &AppState, width: usize, compact: bool) -> Vec<Line<'static>> {
    let mut lines = Vec::new();
    if let Some(server) = state.selected_server().filter(|_| !state.registry_all)
        && let Some(detail) = &server.detail
    {
        let code = server
            .code
            .as_deref()
            .map(|c| format!("{c}: "))
            .unwrap_or_default();
        let reason = wrapped(&format!("{} — {code}{detail}", server.state), width);
        let shown = reason.len().min(8);
        lines.extend(
            reason
                .into_iter()
                .take(shown)
                .map(|l| Line::styled(l, theme::error())),
        );
        if !server.policy_missing.is_empty() || !server.policy_extra.is_empty() {
            let hint = wrapped(
                "In Servers (2), p writes a policy for what it publishes.",
                width,
            );
            lines.extend(hint.into_iter().map(|l| Line::styled(l, theme::warn())));
        }
        if server.pins_refused {
            let text = if server.code.as_deref() == Some("definition_suspicious") {
                "v shows why its new tools are suspicious, and accepts them."
            } else {
                "v shows what changed since its tools were pinned (≠), and accepts it."
            };
            let hint = wrapped(text, width);
            lines.extend(hint.into_iter().map(|l| Line::styled(l, theme::warn())));
        }
        lines.push(Line::raw(""));
    }
    let rows = state.rows();
    if rows.refs.is_empty() {
        // No column to head: the empty state says what to do.
        return lines;
    }
    let effect = format!("{:>EFFECT_WIDTH$}", "effect");
    let room = width.saturating_sub(EFFECT_WIDTH + 1);
    let columns = if compact {
        let alias = match state.selected_server() {
            Some(s) if !state.registry_all => s.alias.as_str(),
            _ => "ALIAS",
        };
        let left = format!("published → mcp__{alias}__…");
        format!("{} {effect}", pad(&left, room))
    } else {
        // The same columns as the rows: the labels give way to the names.
        let name_col = rows.name_column(width, false);
        let label = if name_col >= "published".len() {
            "published"
        } else {
            "tool"
        };
        let left = format!(
            "{} → {}",
            pad(label, name_col.max(label.len())),
            "exposed as"
        );
        format!("{} {effect}", pad(&left, room))
    };
    lines.push(Line::styled(fit(&columns, width), theme::dim()));
    lines
}

/// What the registry says when it has no row to show: what to do now, never
/// contradicting the reason above it.
pub fn registry_empty(state: &AppState) -> String {
    let rows = state.rows();
    if let Some(filter) = &state.filter
        && rows.total > 0
    {
        return format!(
            "no tool matches /{} (of {}) — Esc clears the filter",
            filter.query, rows.total
        );
    }
    if state.registry_all {
        return "no server has tools yet — connect one in Servers (2) with c".into();
    }
    let Some(server) = state.selected_server() else {
        return "no server configured: add one under [servers] in the config file".into();
    };
    if server.sign_in == SignInStatus::Needed && server.state != AliasStatus::Ready {
        return "it needs a sign-in — press s in Servers (2) to sign in".into();
    }
    match server.state {
        AliasStatus::Ready => "it publishes no tools".into(),
        AliasStatus::Connecting => "connecting…".into(),
        AliasStatus::Disconnected => "not connected — press c in Servers (2) to connect it".into(),
        AliasStatus::Lost => {
            "its connection ended (why is above) — press c in Servers (2) to connect again".into()
        }
        AliasStatus::Failed => {
            "nothing was listed — fix what is said above, then press c in Servers (2) to try again"
                .into()
        }
        AliasStatus::Rejected => {
            "it listed no tools — fix what is said above, then press c in Servers (2) to try again"
                .into()
        }
    }
}
