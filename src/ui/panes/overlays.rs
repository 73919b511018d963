//! Overlays other than help: a tool's detail (server claims marked as such), the
//! write-policy confirmation, and the arguments editor of a hand-made call.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Margin, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph};

use super::{centered, keys_of, pane_block};
use crate::protocol::ToolView;
use crate::ui::keymap::Scope;
use crate::ui::sanitize::{line, wrapped};
use crate::ui::state::{AppState, CallEditor, Overlay};
use crate::ui::theme;

/// Where an overlay is drawn on a screen this big.
fn area(screen: Rect) -> Rect {
    centered(screen, 100, screen.height.saturating_sub(4))
}

/// The detail view's lines at this width.
fn detail_lines(state: &AppState, alias: &str, tool: &str, width: usize) -> Vec<Line<'static>> {
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

/// How far the detail view of `alias`'s `tool` can scroll (its last line at
/// the bottom) on a screen this big.
pub fn detail_max_scroll(screen: Rect, state: &AppState, alias: &str, tool: &str) -> u16 {
    let inner = area(screen).inner(Margin::new(1, 1));
    let total = detail_lines(state, alias, tool, inner.width as usize).len();
    u16::try_from(total.saturating_sub(inner.height as usize)).unwrap_or(u16::MAX)
}

pub fn draw(frame: &mut Frame, state: &AppState, overlay: &Overlay) {
    let area = area(frame.area());
    let (title, lines, scroll) = match overlay {
        Overlay::ToolDetail {
            alias,
            tool,
            scroll,
        } => {
            let width = area.width.saturating_sub(2) as usize;
            let max = detail_max_scroll(frame.area(), state, alias, tool);
            (
                format!("Tool · {alias}"),
                detail_lines(state, alias, tool, width),
                (*scroll).min(max),
            )
        }
        Overlay::WritePolicy { alias } => (
            format!("Write policy · {alias}"),
            write_policy(state, alias, area.width.saturating_sub(2) as usize),
            0,
        ),
        Overlay::CallTool(editor) => return call_editor(frame, area, editor),
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
    let schema = serde_json::to_string_pretty(&tool.input_schema).unwrap_or_default();
    lines.extend(
        wrapped(&schema, width.saturating_sub(2))
            .into_iter()
            .map(|l| Line::raw(format!("  {l}"))),
    );
    lines.push(Line::raw(""));
    lines.push(Line::styled(keys_of(Scope::Detail), theme::accent()));
    lines
}

fn write_policy(state: &AppState, alias: &str, width: usize) -> Vec<Line<'static>> {
    let Some(server) = state.servers.iter().find(|s| s.alias == alias) else {
        return Vec::new();
    };
    let para = |text: String| -> Vec<Line<'static>> {
        wrapped(&text, width).into_iter().map(Line::raw).collect()
    };
    let mut lines = match &state.session.config_file {
        Some(path) => para(format!(
            "Write [servers.{alias}.tools] into {path} so it lists exactly what the server \
             publishes. Comments and layout of the file are kept."
        )),
        // The embedded default has no file: say how to make one, not "y".
        None => para(format!(
            "There is no config file to write into: this session runs the embedded default config. \
             To keep a policy for `{alias}`, create {} (start from config.example.toml), run \
             `mcp-harness policy {alias}` to print the block for what it publishes, and paste it there.",
            state
                .session
                .config_default_path
                .as_deref()
                .unwrap_or("a config file and pass it with --config")
        )),
    };
    lines.push(Line::raw(""));
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
    if state.session.config_file.is_some() {
        lines.extend(para(
            "Entries for tools it still publishes keep their effect. Then it reconnects.".into(),
        ));
    }
    lines.push(Line::styled(
        keys_of(crate::ui::overlay::write_policy_scope(state)),
        theme::accent(),
    ));
    lines
}

/// The arguments editor: a text area between its explanation and its verdict.
fn call_editor(frame: &mut Frame, area: Rect, editor: &CallEditor) {
    let block = pane_block(&format!("Call {}", line(&editor.tool, 80)), true);
    let inner = block.inner(area);
    frame.render_widget(Clear, area);
    frame.render_widget(block, area);
    let width = inner.width as usize;
    let mut below: Vec<Line<'static>> = vec![Line::raw("")];
    match &editor.problem {
        Some(problem) => below.extend(
            wrapped(problem, width)
                .into_iter()
                .take(4)
                .map(|l| Line::styled(l, theme::error())),
        ),
        None => below.push(Line::styled("valid against the tool's schema", theme::ok())),
    }
    below.push(Line::styled(
        "It goes through the same pipeline: policy, approval, timeout, envelope.",
        theme::dim(),
    ));
    below.push(Line::styled(keys_of(Scope::CallTool), theme::accent()));
    let [head, text, foot] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Min(3),
        Constraint::Length(below.len() as u16),
    ])
    .areas(inner);
    frame.render_widget(
        Line::styled(
            "Arguments (JSON), prefilled from the schema's defaults and required keys:",
            theme::dim(),
        ),
        head,
    );
    let mut area = editor.area.clone();
    area.set_cursor_line_style(ratatui::style::Style::new());
    area.set_block(
        Block::default()
            .borders(Borders::LEFT)
            .border_style(theme::dim()),
    );
    frame.render_widget(&area, text);
    frame.render_widget(Paragraph::new(below), foot);
}
