//! Overlays other than help: a tool's detail (server claims marked as such), the
//! write-policy confirmation, and the arguments editor of a hand-made call.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::Line;
use ratatui::widgets::{Block, Borders, Clear, Paragraph};

use crate::ui::content::{detail_lines, explain_lines, resources_lines, rules_lines};
use crate::ui::keymap::Scope;
use crate::ui::keymap::keys_of;
use crate::ui::layout::{centered, max_scroll, overlay_area};
use crate::ui::sanitize::{line, wrapped};
use crate::ui::state::{AppState, CallEditor, Overlay};
use crate::ui::text::fit_lines;
use crate::ui::theme;
use crate::ui::theme::fitted_block;

pub fn draw(frame: &mut Frame, state: &AppState, overlay: &Overlay) {
    let area = overlay_area(frame.area());
    let (title, lines, scroll) = match overlay {
        Overlay::ToolDetail {
            alias,
            tool,
            scroll,
        } => {
            let width = area.width.saturating_sub(2) as usize;
            let lines = detail_lines(state, alias, tool, width);
            let max = max_scroll(area, lines.len());
            (format!("Tool · {alias}"), lines, (*scroll).min(max))
        }
        Overlay::WritePolicy { alias } => (
            format!("Write policy · {alias}"),
            write_policy(state, alias, area.width.saturating_sub(2) as usize),
            0,
        ),
        Overlay::PinDiff {
            alias,
            scroll,
            confirming,
        } => {
            let width = area.width.saturating_sub(2) as usize;
            let height = area.height.saturating_sub(2) as usize;
            let lines = crate::ui::pins::diff_lines(state, alias, *confirming, width, height);
            let max = max_scroll(area, lines.len());
            (
                format!("Changed definitions · {alias}"),
                lines,
                (*scroll).min(max),
            )
        }
        Overlay::CallTool(editor) => return call_editor(frame, area, editor),
        Overlay::ConfirmKill { alias, .. } => return confirm_kill(frame, state, alias),
        Overlay::Rules { selected, saving } => (
            format!(
                "Rules · {} session grant{}",
                state.grants.len(),
                if state.grants.len() == 1 { "" } else { "s" }
            ),
            rules_lines(
                state,
                *selected,
                *saving,
                area.width.saturating_sub(2) as usize,
            ),
            0,
        ),
        Overlay::Explain { view, scroll, .. } => {
            let width = area.width.saturating_sub(2) as usize;
            let lines = explain_lines(view.as_ref(), width);
            let max = max_scroll(area, lines.len());
            (
                "How this call was decided".to_string(),
                lines,
                (*scroll).min(max),
            )
        }
        Overlay::Resources {
            alias,
            view,
            scroll,
            selected,
        } => {
            let width = area.width.saturating_sub(2) as usize;
            let lines = resources_lines(view.as_ref(), *selected, width);
            let max = max_scroll(area, lines.len());
            (format!("Resources · {alias}"), lines, (*scroll).min(max))
        }
        Overlay::SignIn(window) => return super::sign_in::draw(frame, area, window),
        Overlay::Help { .. } => return,
    };
    let block = fitted_block(&title, true, area.width);
    let inner = block.inner(area);
    frame.render_widget(Clear, area);
    frame.render_widget(block, area);
    let lines = fit_lines(lines, inner.width as usize);
    frame.render_widget(Paragraph::new(lines).scroll((scroll, 0)), inner);
}

/// "Kill this server?" — small, centered, armed like an approval prompt.
fn confirm_kill(frame: &mut Frame, state: &AppState, alias: &str) {
    let width = 64.min(frame.area().width);
    let inner_width = width.saturating_sub(2) as usize;
    let pid = state
        .servers
        .iter()
        .find(|s| s.alias == alias)
        .and_then(|s| s.health.as_ref())
        .and_then(|h| h.pid);
    let mut lines: Vec<Line<'static>> = wrapped(
        &format!(
            "Send SIGKILL to `{alias}`'s processes{}? Nothing closes it politely: the watchdog \
             notices the death and revokes its tools — watch them struck out in the registry.",
            pid.map(|p| format!(" (pid {p})")).unwrap_or_default()
        ),
        inner_width,
    )
    .into_iter()
    .map(Line::raw)
    .collect();
    lines.push(Line::raw(""));
    let armed = state.kill_armed();
    if !armed {
        lines.push(Line::styled(
            "arming: pause a second before you answer",
            theme::warn(),
        ));
    }
    lines.push(Line::styled(
        keys_of(Scope::ConfirmKill),
        if armed { theme::accent() } else { theme::dim() },
    ));
    let area = centered(frame.area(), width, lines.len() as u16 + 2);
    let block = fitted_block(&format!("Kill {alias}?"), true, area.width);
    let inner = block.inner(area);
    frame.render_widget(Clear, area);
    frame.render_widget(block, area);
    frame.render_widget(Paragraph::new(fit_lines(lines, inner_width)), inner);
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
            "Entries for tools it still publishes keep their effect. The tools it lists that have \
             no pin yet are pinned as they are published now (a changed definition keeps its pin \
             and its own review, v). Then it reconnects."
                .into(),
        ));
    }
    lines.push(Line::styled(
        keys_of(state.write_policy_scope()),
        theme::accent(),
    ));
    lines
}

/// The arguments editor: a text area between its explanation and its verdict.
fn call_editor(frame: &mut Frame, area: Rect, editor: &CallEditor) {
    let block = fitted_block(
        &format!("Call {}", line(&editor.tool, 80)),
        true,
        area.width,
    );
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
    // Said before Ctrl-S: the policy asks for every `confirm` call, the
    // operator's own too, and the prompt that follows is not someone else's.
    below.extend(
        wrapped(
            "The same pipeline as the Lead's calls: policy, schema, timeout. A confirm \
             tool then asks you to approve your own call (y); the audit log names you \
             as requester and approver.",
            width,
        )
        .into_iter()
        .map(|l| Line::styled(l, theme::dim())),
    );
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
    // Drawn from the state (a copy would carry the undo history), its left
    // rule drawn around it.
    let rule = Block::default()
        .borders(Borders::LEFT)
        .border_style(theme::dim());
    let inside = rule.inner(text);
    frame.render_widget(rule, text);
    frame.render_widget(&editor.area, inside);
    frame.render_widget(Paragraph::new(below), foot);
}
