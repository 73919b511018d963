//! Screens of the fixes: the status bar's own message rows, an ended
//! connection's post-mortem in Health, a WebSocket server in Servers and Health, a running hand-made call with its
//! progress, write-policy with and without a config file, help scrolled to
//! its end.

use std::time::Duration;

use crossterm::event::{KeyCode, KeyEvent};
use mcp_harness::protocol::{BackendEvent, Requester, ToolCallView, TransportKind};
use mcp_harness::ui::msg::Msg;
use mcp_harness::ui::state::{Focus, Overlay};
use mcp_harness::ui::update::update;

use super::{backend, screen_text, session, snapshot};
use crate::fixtures::{call_started, servers_after_a_kill};

#[test]
fn a_status_message_gets_rows_of_its_own() {
    let mut s = session();
    backend(
        &mut s,
        BackendEvent::Status(
            "the embedded default config cannot be edited: create /home/op/.config/mcp-harness/config.toml (start from config.example.toml)".into(),
        ),
    );
    snapshot("status_message", &mut s);
    let text = screen_text(&mut s, (80, 24));
    assert!(text.contains("cannot be edited: create"), "{text}");
    assert!(text.contains("config.example.toml)"), "{text}");
}

#[test]
fn the_control_room_says_where_it_serves_and_how_many_clients_are_in() {
    let mut s = session();
    let serving = |sessions| mcp_harness::protocol::ServingView {
        addr: "127.0.0.1:8765".parse().unwrap(),
        sessions,
    };
    s.serving = Some(serving(2));
    snapshot("status_serving", &mut s);
    let wide = screen_text(&mut s, (120, 40));
    assert!(wide.contains("serving :8765 · 2 clients"), "{wide}");
    let narrow = screen_text(&mut s, (80, 24));
    assert!(narrow.contains("serving :8765 (2)"), "{narrow}");
    s.serving = Some(serving(1));
    let one = screen_text(&mut s, (120, 40));
    assert!(one.contains("serving :8765 · 1 client "), "{one}");
}

#[test]
fn footers_fit_the_width_and_always_say_how_to_get_help() {
    let mut s = session();
    s.focus = Focus::Servers;
    // The rejected demo_beta: its footer offers what fits it (p, not K).
    s.selected_server = 1;
    for size in [(80, 24), (120, 40)] {
        let text = screen_text(&mut s, size);
        let footer = text.lines().last().unwrap_or_default().trim_end();
        assert!(footer.ends_with("? help"), "{footer:?}");
        assert!(footer.contains("p write policy"), "{footer:?}");
        assert!(!footer.contains("K kill"), "{footer:?}");
    }
    // In a window over the panes, only its own keys.
    s.overlay = Some(Overlay::Help { scroll: 0 });
    let text = screen_text(&mut s, (120, 40));
    let footer = text.lines().last().unwrap_or_default();
    assert!(
        !footer.contains("Tab") && !footer.contains("Ctrl-C"),
        "{footer:?}"
    );
}

#[test]
fn health_keeps_an_ended_connection_for_the_post_mortem() {
    let mut s = session();
    let opened = s.now - Duration::from_secs(61);
    update(&mut s, crate::fixtures::views(servers_after_a_kill(opened)));
    s.focus = Focus::Health;
    snapshot("health_ended", &mut s);
    let text = screen_text(&mut s, (120, 40));
    assert!(text.contains("ended    12:05:00 UTC"), "{text}");
    assert!(text.contains("lasted   5m 00s"), "{text}");
    assert!(text.contains("4242"), "the pid stays: {text}");
}

#[test]
fn a_websocket_server_says_so_in_servers_and_health() {
    let mut s = session();
    let opened = s.now - Duration::from_secs(61);
    let mut servers = crate::fixtures::servers_at(opened);
    servers[0].transport = "ws: ws://127.0.0.1:8790/mcp".into();
    if let Some(health) = servers[0].health.as_mut() {
        health.transport = TransportKind::WebSocket;
        health.pid = None;
        health.stderr_tail = Vec::new();
    }
    update(&mut s, crate::fixtures::views(servers));
    s.focus = Focus::Health;
    snapshot("health_websocket", &mut s);
    let text = screen_text(&mut s, (120, 40));
    assert!(text.contains("ws: ws://127.0.0.1:8790/mcp"), "{text}");
    assert!(text.contains("via      WebSocket"), "{text}");
    assert!(!text.contains("· pid"), "no process over WebSocket: {text}");
}

#[test]
fn a_running_hand_made_call_shows_progress_and_counts_as_running() {
    let mut s = session();
    let hand = ToolCallView {
        by: Requester::Operator,
        ..call_started("operator-1", "mcp__demo_alpha__slow")
    };
    backend(&mut s, BackendEvent::ToolCallStarted(hand));
    backend(
        &mut s,
        BackendEvent::CallProgress {
            id: "operator-1".into(),
            progress: 3.0,
            total: Some(5.0),
            message: Some("step 3 of 5\u{1b}[2J".into()),
        },
    );
    snapshot("hand_call_running", &mut s);
    let text = screen_text(&mut s, (120, 40));
    assert!(text.contains("progress 3/5 · step 3 of 5"), "{text}");
    assert!(text.contains("hand call running"), "{text}");
}

#[test]
fn write_policy_with_a_config_file_and_without_one() {
    let mut s = session();
    s.overlay = Some(Overlay::WritePolicy {
        alias: "demo_beta".into(),
    });
    // The session runs the embedded default: nothing to write into (the
    // `write_policy` snapshot of the main file shows this window).
    let text = screen_text(&mut s, (80, 24));
    assert!(text.contains("no config file"), "{text}");
    assert!(!text.contains("y write it"), "{text}");
    s.session.config_file = Some("/home/op/.config/mcp-harness/config.toml".into());
    snapshot("write_policy_file", &mut s);
    assert!(screen_text(&mut s, (80, 24)).contains("y write it"));
}

#[test]
fn help_scrolls_to_its_last_line_and_no_further() {
    let mut s = session();
    s.area = ratatui::layout::Rect::new(0, 0, 80, 24);
    update(&mut s, Msg::Key(KeyEvent::from(KeyCode::F(1))));
    for _ in 0..200 {
        update(&mut s, Msg::Key(KeyEvent::from(KeyCode::Down)));
    }
    let Some(Overlay::Help { scroll }) = s.overlay else {
        panic!("{:?}", s.overlay)
    };
    assert!(scroll > 0 && scroll < 200, "{scroll}");
    let text = screen_text(&mut s, (80, 24));
    assert!(
        text.contains("the wheel scrolls"),
        "the last line shows: {text}"
    );
    update(&mut s, Msg::Key(KeyEvent::from(KeyCode::Up)));
    assert_eq!(
        s.overlay,
        Some(Overlay::Help { scroll: scroll - 1 }),
        "Up moves at once after scrolling past the end"
    );
}

#[test]
fn a_prompt_behind_the_call_editor_is_a_badge_and_comes_back_when_it_closes() {
    let mut s = session();
    s.focus = Focus::Registry;
    update(&mut s, Msg::Key(KeyEvent::from(KeyCode::Char('x'))));
    backend(
        &mut s,
        BackendEvent::ApprovalRequested(crate::fixtures::approval(1, "mcp__demo_alpha__set")),
    );
    // The editor keeps the screen and its keys; the status bar and the footer
    // say what waits and how to bring it back.
    snapshot("prompt_behind_a_window", &mut s);
    for size in [(80, 24), (120, 40)] {
        let text = screen_text(&mut s, size);
        assert!(!text.contains("Approval needed"), "{text}");
        let rows: Vec<&str> = text.lines().collect();
        let footer = rows[rows.len() - 1];
        assert!(footer.starts_with("F3 1 approval waiting"), "{footer}");
        assert!(footer.contains("Esc cancel"), "{footer}");
        assert!(
            rows[rows.len() - 2].contains("1 approval waiting: F3"),
            "{text}"
        );
    }
    // Esc closes the editor: the prompt is back, arming, and says the panes
    // under it get no keys.
    update(&mut s, Msg::Key(KeyEvent::from(KeyCode::Esc)));
    let text = screen_text(&mut s, (120, 40));
    assert!(text.contains("Approval needed"), "{text}");
    assert!(
        text.contains("arming: its keys work after a second with no keys"),
        "{text}"
    );
}
