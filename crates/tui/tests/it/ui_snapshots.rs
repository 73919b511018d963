//! A snapshot of each pane and overlay at 80×24 and 120×40 (ratatui
//! `TestBackend` + insta), plus style checks where the style is the point.

mod config;
mod flows;
mod mentions;
mod more;
mod names;
mod pins;
mod resources;
mod sign_in;
mod views;

use std::time::{Duration, Instant};

use crate::fixtures::{approval, approval_for, call_started, elicitation, long_text, servers_at};
use mcp_harness::protocol::{BackendEvent, Requester, SessionInfo, ToolOutcomeView};
use mcp_harness::ui::msg::Msg;
use mcp_harness::ui::panes;
use mcp_harness::ui::state::{AppState, Cell, Focus, Overlay};
use mcp_harness::ui::update::update;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::style::Modifier;

const SIZES: [(u16, u16); 2] = [(80, 24), (120, 40)];

pub fn backend(state: &mut AppState, event: BackendEvent) {
    update(state, Msg::Backend(event));
}

pub fn finished(
    id: &str,
    ok: bool,
    text: &str,
    code: Option<&str>,
    server_output: Option<&str>,
) -> BackendEvent {
    BackendEvent::ToolCallFinished(ToolOutcomeView {
        id: id.into(),
        ok,
        text: text.into(),
        code: code.map(Into::into),
        server_output: server_output.map(Into::into),
        elapsed_ms: 12,
        decided: None,
        flow: None,
        dropped_nulls: Vec::new(),
    })
}

/// A session in the middle of the demo (alpha connected a minute before).
pub fn session() -> AppState {
    let start = Instant::now();
    let mut s = AppState::new(start);
    let opened = start.checked_sub(Duration::from_secs(60)).unwrap_or(start);
    backend(
        &mut s,
        BackendEvent::Started(SessionInfo {
            provider: "scripted".into(),
            model: "demo scenario".into(),
            replay: true,
            no_model: None,
            config: "the embedded default config".into(),
            config_file: None,
            config_default_path: Some("/home/op/.config/mcp-harness/config.toml".into()),
            session_id: Some("20261130-120000-0001".into()),
            first_run: false,
        }),
    );
    update(&mut s, crate::fixtures::views(servers_at(opened)));
    s.cells.push(Cell::User("show me the demo".into()));
    backend(
        &mut s,
        BackendEvent::AssistantDelta {
            agent: Requester::Lead,
            text: "Both servers publish `lookup`; asking each.".into(),
        },
    );
    backend(
        &mut s,
        BackendEvent::ToolCallStarted(call_started("c1", "mcp__demo_alpha__lookup")),
    );
    backend(
        &mut s,
        finished("c1", true, "apple = red (demo-alpha)", None, None),
    );
    backend(
        &mut s,
        BackendEvent::ToolCallStarted(call_started("c2", "mcp__demo_alpha__fail")),
    );
    let leak = "Traceback (most recent call last):\n  File \"/srv/demo/app.py\", line 87\nsk-demo-0123456789abcdef";
    backend(
        &mut s,
        finished(
            "c2",
            false,
            "`mcp__demo_alpha__fail` reported an error. Its error text is withheld from the model.",
            Some("mcp_remote_error"),
            Some(leak),
        ),
    );
    backend(
        &mut s,
        BackendEvent::Notice("revoked 5 tools of `demo_alpha` (disconnected)".into()),
    );
    backend(&mut s, BackendEvent::Error("the anthropic API kept failing after 4 attempts (last: HTTP 529: overloaded); try again later".into()));
    s.now = start + Duration::from_millis(1500);
    s
}

pub fn render(state: &mut AppState, (width, height): (u16, u16)) -> Terminal<TestBackend> {
    let mut terminal = Terminal::new(TestBackend::new(width, height)).expect("terminal");
    state.area = ratatui::layout::Rect::new(0, 0, width, height);
    terminal.draw(|f| panes::draw(f, state)).expect("draw");
    terminal
}

/// The screen as text, a line per row (for `contains` checks).
pub fn screen_text(state: &mut AppState, size: (u16, u16)) -> String {
    let terminal = render(state, size);
    let buffer = terminal.backend().buffer();
    let width = buffer.area.width as usize;
    buffer
        .content()
        .chunks(width)
        .map(|row| row.iter().map(|c| c.symbol()).collect::<String>())
        .collect::<Vec<_>>()
        .join("\n")
}

pub fn snapshot(name: &str, state: &mut AppState) {
    snapshot_at(name, state, &SIZES);
}

/// One snapshot per size (all in `crates/tui/tests/it/snapshots/`).
pub fn snapshot_at(name: &str, state: &mut AppState, sizes: &[(u16, u16)]) {
    for size in sizes {
        let terminal = render(state, *size);
        insta::assert_snapshot!(format!("{name}_{}x{}", size.0, size.1), terminal.backend());
    }
}

#[test]
fn main_screen() {
    snapshot("main", &mut session());
}

#[test]
fn first_run_banner() {
    let mut s = AppState::new(Instant::now());
    backend(
        &mut s,
        BackendEvent::Started(SessionInfo {
            first_run: true,
            replay: true,
            provider: "scripted".into(),
            model: "demo scenario".into(),
            ..SessionInfo::default()
        }),
    );
    update(
        &mut s,
        crate::fixtures::views_at(crate::fixtures::servers(), 0),
    );
    snapshot("first_run", &mut s);
}

#[test]
fn approval_modal_with_a_queue() {
    let mut s = session();
    backend(
        &mut s,
        BackendEvent::ToolCallStarted(call_started("c3", "mcp__demo_alpha__set")),
    );
    backend(
        &mut s,
        BackendEvent::ApprovalRequested(approval_for(1, "mcp__demo_alpha__set", "c3")),
    );
    backend(
        &mut s,
        BackendEvent::ApprovalRequested(approval(2, "mcp__demo_alpha__reset")),
    );
    // Just opened: it says where keys go until the operator pauses.
    snapshot("approval_arming", &mut s);
    s.now += Duration::from_secs(2);
    snapshot("approval", &mut s);
}

#[test]
fn rejected_alias_with_reasons() {
    let mut s = session();
    s.focus = Focus::Servers;
    s.selected_server = 1;
    snapshot("rejected", &mut s);
    s.focus = Focus::Registry;
    snapshot("rejected_registry", &mut s);
}

#[test]
fn revoked_tools_are_struck_out() {
    let mut s = session();
    let opened = s.now - Duration::from_secs(61);
    backend(
        &mut s,
        BackendEvent::ToolsRevoked {
            alias: "demo_alpha".into(),
            tools: vec![
                "mcp__demo_alpha__lookup".into(),
                "mcp__demo_alpha__set".into(),
                "mcp__demo_alpha__fail".into(),
            ],
            cause: mcp_harness::protocol::EndCause {
                kind: mcp_harness::protocol::EndKind::Killed,
                text: "server process killed by the operator".into(),
            },
        },
    );
    // Then the views, where alpha is lost and has no tools.
    update(
        &mut s,
        crate::fixtures::views(crate::fixtures::servers_after_a_kill(opened)),
    );
    s.focus = Focus::Registry;
    snapshot("revoked", &mut s);
    let terminal = render(&mut s, (120, 40));
    let buffer = terminal.backend().buffer();
    let area = buffer.area;
    let struck = (0..area.height).any(|y| {
        let row: String = (0..area.width)
            .map(|x| buffer[(x, y)].symbol().to_string())
            .collect();
        // In place, reading ALIAS/TOOL, struck out.
        row.contains("demo_alpha/set") && {
            let x = row.find("demo_alpha/set").unwrap_or(0);
            let x = row[..x].chars().count() as u16;
            buffer[(x, y)].modifier.contains(Modifier::CROSSED_OUT)
        }
    });
    assert!(struck, "the revoked tool is drawn struck out");
}

#[test]
fn long_result_collapsed_and_expanded() {
    let mut s = session();
    backend(
        &mut s,
        BackendEvent::ToolCallStarted(call_started("c9", "mcp__demo_alpha__lookup")),
    );
    backend(&mut s, finished("c9", true, &long_text(40), None, None));
    snapshot("long_result_collapsed", &mut s);
    if let Some(Cell::ToolCall(call)) = s.cells.last_mut() {
        call.expanded = true;
    }
    snapshot("long_result_expanded", &mut s);
}

#[test]
fn help_overlay() {
    let mut s = session();
    s.overlay = Some(Overlay::Help { scroll: 0 });
    snapshot("help", &mut s);
}

#[test]
fn tool_detail_call_editor_and_write_policy() {
    let mut s = session();
    s.overlay = Some(Overlay::ToolDetail {
        alias: "demo_alpha".into(),
        tool: "set".into(),
        scroll: 0,
    });
    snapshot("detail", &mut s);
    s.overlay = None;
    s.focus = Focus::Registry;
    update(
        &mut s,
        Msg::Key(crossterm::event::KeyEvent::from(
            crossterm::event::KeyCode::Char('x'),
        )),
    );
    snapshot("call_editor", &mut s);
    s.overlay = Some(Overlay::WritePolicy {
        alias: "demo_beta".into(),
    });
    snapshot("write_policy", &mut s);
}

#[test]
fn health_pane_and_no_raw_control_bytes_anywhere() {
    let mut s = session();
    s.focus = Focus::Health;
    snapshot("health", &mut s);
    // The stderr tail and the server output carry escape sequences: none reaches a cell.
    let terminal = render(&mut s, (120, 40));
    let buffer = terminal.backend().buffer();
    for cell in buffer.content() {
        assert!(
            !cell
                .symbol()
                .chars()
                .any(|c| c.is_control() || ('\u{80}'..='\u{9f}').contains(&c)),
            "{:?}",
            cell.symbol()
        );
    }
}

#[test]
fn elicitation_form() {
    let mut s = session();
    backend(&mut s, BackendEvent::ElicitationRequested(elicitation(1)));
    snapshot("elicitation_arming", &mut s);
    s.now += Duration::from_secs(2);
    snapshot("elicitation", &mut s);
}

/// A question during an outside client's call through the gateway: the form
/// names the client and the call, so the operator knows whom they answer for.
#[test]
fn elicitation_form_names_the_outside_clients_call() {
    let mut s = session();
    let mut form = elicitation(1);
    form.during = Some((
        mcp_harness::protocol::CallId::from("gw-7"),
        Requester::Client("claude".into()),
    ));
    backend(&mut s, BackendEvent::ElicitationRequested(form));
    s.now += Duration::from_secs(2);
    snapshot("elicitation_for_a_client", &mut s);
}

/// A question that came with two calls in flight on a connection that does
/// not say which (a 2025-11-25 server over stdio): the form lists both, and
/// says it cannot tell, rather than name one.
#[test]
fn elicitation_form_lists_the_calls_it_may_have_come_during() {
    let mut s = session();
    let mut form = elicitation(1);
    form.may_be = vec![
        (
            mcp_harness::protocol::CallId::from("gw-7"),
            Requester::Client("claude".into()),
        ),
        (
            mcp_harness::protocol::CallId::from("gw-8"),
            Requester::Client("ci".into()),
        ),
    ];
    backend(&mut s, BackendEvent::ElicitationRequested(form));
    s.now += Duration::from_secs(2);
    snapshot("elicitation_for_one_of_two_calls", &mut s);
}

/// The message box is drawn from the state, so its text area keeps its view
/// from one frame to the next, as an editor does: the cursor moving up inside
/// the six rows shown does not scroll them.
#[test]
fn the_message_box_keeps_its_view_while_the_cursor_stays_in_it() {
    let mut s = session();
    s.focus = Focus::Input;
    let text: Vec<String> = (0..10).map(|i| format!("line {i}")).collect();
    s.input.insert_str(text.join("\n"));
    let screen = screen_text(&mut s, (80, 24));
    assert!(
        screen.contains("line 9") && !screen.contains("line 3"),
        "{screen}"
    );
    for _ in 0..3 {
        s.input.move_cursor(ratatui_textarea::CursorMove::Up);
    }
    let screen = screen_text(&mut s, (80, 24));
    assert!(
        screen.contains("line 9") && !screen.contains("line 3"),
        "{screen}"
    );
}
