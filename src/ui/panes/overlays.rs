//! Overlays other than help: a tool's detail (server claims marked as such), the
//! write-policy confirmation, and the arguments editor of a hand-made call.

use ratatui::Frame;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Clear, Paragraph};

use super::{centered, pane_block};
use crate::protocol::ToolView;
use crate::ui::sanitize::{line, wrapped};
use crate::ui::state::{AppState, CallEditor, Overlay};
use crate::ui::theme;

pub fn draw(frame: &mut Frame, state: &AppState, overlay: &Overlay) {
    let area = centered(frame.area(), 100, frame.area().height.saturating_sub(4));
    let (title, lines, scroll) = match overlay {
        Overlay::ToolDetail {
            alias,
            tool,
            scroll,
        } => {
            let found = state
                .servers
                .iter()
                .find(|s| &s.alias == alias)
                .and_then(|s| s.published.iter().find(|t| &t.name == tool));
            let lines = match found {
                Some(tool) => detail(alias, tool, area.width.saturating_sub(2) as usize),
                None => vec![Line::styled(
                    "this tool is no longer published",
                    theme::dim(),
                )],
            };
            (format!("Tool · {alias}"), lines, *scroll)
        }
        Overlay::WritePolicy { alias } => (
            format!("Write policy · {alias}"),
            write_policy(state, alias),
            0,
        ),
        Overlay::CallTool(editor) => (
            format!("Call {}", editor.tool),
            call_editor(editor, area.width.saturating_sub(2) as usize),
            0,
        ),
        Overlay::Help { .. } => return,
    };
    let block = pane_block(&title, true);
    let inner = block.inner(area);
    frame.render_widget(Clear, area);
    frame.render_widget(block, area);
    frame.render_widget(Paragraph::new(lines).scroll((scroll, 0)), inner);
}

fn detail(alias: &str, tool: &ToolView, width: usize) -> Vec<Line<'static>> {
    let mut lines = vec![Line::from(vec![
        Span::styled("published name ", theme::dim()),
        Span::raw(line(&tool.name, width)),
    ])];
    match (&tool.exposed_as, &tool.effect) {
        (Some(exposed), Some(effect)) => {
            lines.push(Line::from(vec![
                Span::styled("exposed as     ", theme::dim()),
                Span::raw(exposed.clone()),
            ]));
            lines.push(Line::from(vec![
                Span::styled("local effect   ", theme::dim()),
                Span::styled(effect.clone(), theme::effect(effect)),
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
    lines.push(Line::raw(""));
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
    let schema = serde_json::to_string_pretty(&tool.input_schema).unwrap_or_default();
    lines.extend(
        wrapped(&schema, width.saturating_sub(2))
            .into_iter()
            .map(|l| Line::raw(format!("  {l}"))),
    );
    lines.push(Line::raw(""));
    lines.push(Line::styled(
        "↑/↓ scroll · x call it by hand · Esc close",
        theme::accent(),
    ));
    lines
}

fn write_policy(state: &AppState, alias: &str) -> Vec<Line<'static>> {
    let Some(server) = state.servers.iter().find(|s| s.alias == alias) else {
        return Vec::new();
    };
    let mut lines = vec![
        Line::raw(format!(
            "Write [servers.{alias}.tools] into {} so it lists exactly what",
            state.session.config
        )),
        Line::raw("the server publishes. Comments and layout of the file are kept."),
        Line::raw(""),
    ];
    for name in &server.policy_missing {
        lines.push(Line::styled(
            format!(
                "  + {} = \"confirm\"   (published, no policy yet)",
                line(name, 60)
            ),
            theme::ok(),
        ));
    }
    for name in &server.policy_extra {
        lines.push(Line::styled(
            format!("  − {}   (in the policy, not published)", line(name, 60)),
            theme::error(),
        ));
    }
    lines.push(Line::raw(""));
    lines.push(Line::raw(
        "Entries for tools it still publishes keep their effect. Then it reconnects.",
    ));
    lines.push(Line::styled("y write it · n/Esc cancel", theme::accent()));
    lines
}

fn call_editor(editor: &CallEditor, width: usize) -> Vec<Line<'static>> {
    let mut lines = vec![Line::styled(
        "Arguments (JSON), prefilled from the schema's defaults and required keys:",
        theme::dim(),
    )];
    lines.extend(
        editor
            .text
            .split('\n')
            .map(|l| Line::raw(format!("  {}", line(l, width.saturating_sub(2))))),
    );
    if let Some(last) = lines.last_mut() {
        last.spans.push(Span::styled("▏", theme::accent()));
    }
    lines.push(Line::raw(""));
    match &editor.problem {
        Some(problem) => lines.extend(
            wrapped(problem, width)
                .into_iter()
                .map(|l| Line::styled(l, theme::error())),
        ),
        None => lines.push(Line::styled("valid against the tool's schema", theme::ok())),
    }
    lines.push(Line::styled(
        "It goes through the same pipeline: policy, approval, timeout, envelope.",
        theme::dim(),
    ));
    lines.push(Line::styled("Ctrl-S call · Esc cancel", theme::accent()));
    lines
}
