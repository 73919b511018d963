//! Text both sides need: the panes draw these lines, the reducer and the layout
//! count them (how far help scrolls, how tall the servers pane grows, where the
//! registry's rows start). One builder each, so the two can never disagree.

use ratatui::text::{Line, Span};

use super::keymap::{self, BINDINGS, Scope, listed};
use super::rows::RegistryRow;
use super::sanitize::{line, wrapped};
use super::state::{AppState, Focus};
use super::theme;
use crate::protocol::{AliasStatus, PinStatus, SignInStatus, ToolView};

/// The scopes in the order help lists them.
const HELP_ORDER: [Scope; 14] = [
    Scope::Global,
    Scope::Input,
    Scope::Conversation,
    Scope::Servers,
    Scope::Registry,
    Scope::Health,
    Scope::Approval,
    Scope::Elicitation,
    Scope::Detail,
    Scope::CallTool,
    Scope::WritePolicy,
    Scope::PinDiff,
    Scope::PinConfirm,
    Scope::SignIn,
];

/// Every key, wrapped to `width`.
pub fn help_lines(width: usize) -> Vec<Line<'static>> {
    // The keys' column is as wide as the widest keys.
    let column = BINDINGS
        .iter()
        .map(|b| b.keys.chars().count())
        .max()
        .unwrap_or(0)
        + 3;
    let mut lines = Vec::new();
    for scope in HELP_ORDER {
        lines.push(Line::styled(scope.title(), theme::strong()));
        for b in BINDINGS.iter().filter(|b| b.scope == scope && listed(b)) {
            // Keys in a column of their own; a long description wraps under itself.
            let keys = format!("  {:<width$}", b.keys, width = column - 2);
            let indent = column;
            for (i, part) in wrapped(b.desc, width.saturating_sub(indent))
                .into_iter()
                .enumerate()
            {
                lines.push(Line::from(vec![
                    Span::styled(
                        if i == 0 {
                            keys.clone()
                        } else {
                            " ".repeat(indent)
                        },
                        theme::accent(),
                    ),
                    Span::raw(part),
                ]));
            }
        }
    }
    lines.push(Line::raw(""));
    lines.extend(
        wrapped(
            "Mouse: click a pane to focus it or a row to select it; the wheel scrolls.",
            width,
        )
        .into_iter()
        .map(|l| Line::styled(l, theme::dim())),
    );
    lines
}

/// The keys of a modal window, from the keymap table (so they cannot drift).
pub fn keys_of(scope: Scope) -> String {
    keymap::hints(scope)
        .iter()
        .map(|(k, d)| format!("{k} {d}"))
        .collect::<Vec<_>>()
        .join(" · ")
}

/// The detail view of `alias`'s published `tool`, at this width.
pub fn detail_lines(state: &AppState, alias: &str, tool: &str, width: usize) -> Vec<Line<'static>> {
    let found = state
        .servers
        .iter()
        .find(|s| s.alias == alias)
        .and_then(|s| s.published.iter().find(|t| t.name == tool));
    match found {
        Some(tool) => detail(alias, tool, width),
        None => vec![Line::styled(
            "this tool is no longer published",
            theme::dim(),
        )],
    }
}

fn detail(alias: &str, tool: &ToolView, width: usize) -> Vec<Line<'static>> {
    let mut lines = vec![Line::from(vec![
        Span::styled("published name ", theme::dim()),
        Span::raw(line(&tool.name, width)),
    ])];
    match (&tool.exposed_as, tool.effect) {
        (Some(exposed), Some(effect)) => {
            lines.push(Line::from(vec![
                Span::styled("exposed as     ", theme::dim()),
                Span::raw(exposed.clone()),
            ]));
            lines.push(Line::from(vec![
                Span::styled("local effect   ", theme::dim()),
                Span::styled(effect.label(), theme::effect(effect)),
                Span::styled(
                    format!("  (from [servers.{alias}.tools] in the config)"),
                    theme::dim(),
                ),
            ]));
        }
        _ => lines.push(Line::styled(
            format!("not exposed: {}", tool.why_not.clone().unwrap_or_default()),
            theme::error(),
        )),
    }
    let (pin, pin_style) = match tool.pin {
        PinStatus::Pinned => (
            "pinned: published exactly as approved".to_string(),
            theme::ok(),
        ),
        PinStatus::New => ("new: no pin yet".to_string(), theme::warn()),
        PinStatus::Changed => (
            "changed: not what was approved (v shows the diff)".to_string(),
            theme::error(),
        ),
        PinStatus::Off => (
            "not pinned (pin = \"off\", or deny)".to_string(),
            theme::dim(),
        ),
    };
    lines.push(Line::from(vec![
        Span::styled("definition     ", theme::dim()),
        Span::styled(pin, pin_style),
    ]));
    lines.push(Line::raw(""));
    if tool.hidden_text {
        lines.extend(
            wrapped(
                "hidden text: this definition holds invisible characters, shown as <U+XXXX>; \
                 the model gets them removed.",
                width,
            )
            .into_iter()
            .map(|l| Line::styled(l, theme::warn())),
        );
    }
    lines.push(Line::styled(
        "Server claims (data from the server, never permission):",
        theme::untrusted(),
    ));
    if let Some(title) = &tool.title {
        lines.push(Line::styled(
            format!("  title: {}", line(title, width)),
            theme::untrusted(),
        ));
    }
    if let Some(description) = &tool.description {
        lines.extend(
            wrapped(description, width.saturating_sub(2))
                .into_iter()
                .map(|l| Line::styled(format!("  {l}"), theme::untrusted())),
        );
    }
    if let Some(serde_json::Value::Object(annotations)) = &tool.annotations {
        for (key, value) in annotations {
            lines.push(Line::styled(
                format!("  {}: {}", line(key, 40), line(&value.to_string(), 60)),
                theme::untrusted(),
            ));
        }
    }
    lines.push(Line::raw(""));
    lines.push(Line::styled(
        "Input schema (the execution boundary):",
        theme::dim(),
    ));
    let schema = serde_json::to_string_pretty(&*tool.input_schema).unwrap_or_default();
    lines.extend(
        wrapped(&schema, width.saturating_sub(2))
            .into_iter()
            .map(|l| Line::raw(format!("  {l}"))),
    );
    lines.push(Line::raw(""));
    lines.push(Line::styled(keys_of(Scope::Detail), theme::accent()));
    lines
}

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
            Span::raw(format!("{:<name_width$}", line(&server.alias, name_width))),
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
                line(
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
            _ => None,
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

/// Whether every registry row fits with its full exposed name.
pub fn registry_fits(rows: &[RegistryRow<'_>], width: usize, show_alias: bool) -> bool {
    rows.iter().all(|row| match row {
        RegistryRow::Tool { alias, tool } => {
            // A pin mark (new or changed only), then the alias when all
            // servers are shown.
            let mark = match tool.pin {
                PinStatus::New | PinStatus::Changed => 2,
                PinStatus::Pinned | PinStatus::Off => 0,
            };
            let prefix = mark + if show_alias { alias.len() + 1 } else { 0 };
            let exposed = tool.exposed_as.as_ref().map_or(0, String::len);
            let effect = tool.effect.map_or(0, |e| e.label().len());
            let mark = if tool.hidden_text { 14 } else { 0 };
            prefix + tool.name.chars().count() + mark + 3 + exposed + 1 + effect <= width
        }
        RegistryRow::Revoked { .. } => true,
    })
}

/// The lines above the registry's rows: for a rejected or failed alias the
/// whole reason first, then the column header.
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
        lines.extend(
            reason
                .into_iter()
                .take(8)
                .map(|l| Line::styled(l, theme::error())),
        );
        if !server.policy_missing.is_empty() || !server.policy_extra.is_empty() {
            let hint = wrapped(
                "In Servers, p writes a policy for what it publishes.",
                width,
            );
            lines.extend(hint.into_iter().map(|l| Line::styled(l, theme::warn())));
        }
        if server.pins_refused {
            let hint = wrapped(
                "v shows what changed since its tools were pinned (≠), and accepts it.",
                width,
            );
            lines.extend(hint.into_iter().map(|l| Line::styled(l, theme::warn())));
        }
        lines.push(Line::raw(""));
    }
    let columns = match state.selected_server() {
        Some(s) if compact && !state.registry_all => {
            format!("published → exposed as mcp__{}__… · effect", s.alias)
        }
        _ if compact => "published → exposed as mcp__…__… · effect".to_string(),
        _ => "published → exposed as · effect".to_string(),
    };
    lines.push(Line::styled(line(&columns, width), theme::dim()));
    lines
}
