//! Text both sides need: the panes draw these lines, the reducer and the layout
//! count them (how far help scrolls, how tall the servers pane grows, where the
//! registry's rows start). One builder each, so the two can never disagree.
//! Here: help, a modal's keys and the tool detail; the panes' lists in
//! `lists.rs`; the rules and the explanation in `windows.rs`.

mod lists;
mod windows;

use ratatui::text::{Line, Span};

use super::keymap::{BINDINGS, Scope, keys_of, listed};
use super::sanitize::{line, name, wrapped};
use super::state::AppState;
use super::theme;
use crate::protocol::{PinStatus, ToolView};

pub use lists::{registry_empty, registry_header, servers_lines};
pub use windows::{RESOURCE_ROWS_FROM, explain_lines, resources_lines, rules_lines};

/// The scopes in the order help lists them.
const HELP_ORDER: [Scope; 19] = [
    Scope::Global,
    Scope::Input,
    Scope::Lists,
    Scope::Conversation,
    Scope::Servers,
    Scope::Registry,
    Scope::Filter,
    Scope::Health,
    Scope::Approval,
    Scope::Elicitation,
    Scope::ConfirmKill,
    Scope::Rules,
    Scope::Explain,
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
        Span::raw(name(&tool.name, width)),
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
    for why in &tool.suspicious {
        // The rule and its reason are the harness's words; the phrase the server's.
        lines.extend(
            wrapped(
                &format!(
                    "suspicious: {} — {} (in {}): \"{}\"",
                    why.rule,
                    why.reason,
                    line(&why.field, 80),
                    line(&why.phrase, 200)
                ),
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
