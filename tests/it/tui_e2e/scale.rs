//! The real binary in tmux, issue 13's walks: the demo waits between its parts
//! until Enter; the filter finds one tool among 2,000; quitting with servers
//! connected takes a second Ctrl-C; a burst of 500 Downs in one write is
//! taken whole.

use std::time::Duration;

use crate::common::TestEnv;
use crate::common::tmux::{Tmux, tui_command};

const POLICY: &str = "lookup = \"allow\"\nset = \"confirm\"\nreset = \"confirm\"\nfail = \"allow\"\nslow = \"allow\"\n";

fn demo(env: &TestEnv) -> String {
    env.config(&format!(
        "[model]\nprovider = \"scripted\"\n{}[servers.demo_alpha.tools]\n{POLICY}{}[servers.demo_beta.tools]\n{POLICY}",
        env.demo("demo_alpha", "alpha", &[]),
        env.demo("demo_beta", "beta", &[])
    ));
    tui_command(env)
}

/// One server publishing 2,000 tools (`tool_00000`…), every one allowed.
fn big(env: &TestEnv) -> String {
    let policy: String = (0..2_000)
        .map(|i| format!("tool_{i:05} = \"allow\"\n"))
        .collect();
    env.config(&format!(
        "[model]\nprovider = \"scripted\"\n[limits]\nconnect_timeout_ms = 60000\n{}[servers.big.tools]\n{policy}",
        env.demo("big", "alpha", &["--tools", "2000", "--page-size", "200"])
    ));
    tui_command(env)
}

/// Starts the big server's TUI, connects it and shows its registry.
fn big_registry(env: &TestEnv) -> Tmux {
    let tmux = Tmux::start(env, &big(env), 120, 40);
    tmux.wait("the main screen", |s| s.contains("big"));
    // Input → Conversation → Servers: c connects; Tab to the registry.
    tmux.keys(&["Tab", "Tab", "c"]);
    tmux.wait("2,000 tools", |s| s.contains("ready 2000 tools"));
    tmux.keys(&["Tab"]);
    tmux.wait("the registry's rows", |s| s.contains("tool_00000"));
    tmux
}

#[cfg_attr(
    mcph_no_tmux,
    ignore = "tmux is not installed: install it (apt-get install tmux) to run the TUI tests"
)]
#[test]
fn the_demo_waits_between_its_parts_and_enter_goes_on() {
    let env = TestEnv::new();
    let tmux = Tmux::start(&env, &demo(&env), 120, 40);
    tmux.wait("the main screen", |s| s.contains("demo_alpha"));
    tmux.keys(&["go", "Enter"]);
    // The first words of the next part: on one line at any width.
    let next_part = "Now both are in my tool set";
    let screen = tmux.wait("the first pause", |s| {
        s.contains("replay paused: Enter goes on")
    });
    assert!(screen.contains("servers 2/2 ready"), "{screen}");
    assert!(!screen.contains(next_part), "{screen}");
    // It waits (up to ten seconds; a person reads meanwhile).
    std::thread::sleep(Duration::from_millis(2_000));
    let screen = tmux.screen();
    assert!(screen.contains("replay paused"), "still waiting: {screen}");
    assert!(!screen.contains(next_part), "{screen}");
    // Enter on the empty input box goes on.
    tmux.keys(&["Enter"]);
    tmux.wait("the next part", |s| s.contains(next_part));
    tmux.wait("the next pause", |s| s.contains("replay paused"));
    tmux.keys(&["Enter"]);
    // Both in one capture: tmux can catch a frame halfway drawn (the modal's
    // title before its body).
    tmux.wait("the first approval, with the model's words", |s| {
        s.contains("Approval needed") && s.contains("the model's words")
    });
    tmux.keys(&["C-q"]);
    tmux.wait_gone();
    env.assert_no_leaks();
}

#[cfg_attr(
    mcph_no_tmux,
    ignore = "tmux is not installed: install it (apt-get install tmux) to run the TUI tests"
)]
#[test]
fn the_filter_finds_one_tool_among_two_thousand() {
    let env = TestEnv::new();
    let tmux = big_registry(&env);
    tmux.keys(&["/"]);
    tmux.keys(&["-l", "01999"]);
    let screen = tmux.wait("the match", |s| s.contains("/01999▏ 1/2000"));
    assert!(screen.contains("tool_01999"), "{screen}");
    assert!(!screen.contains("tool_00000"), "{screen}");
    // Enter keeps it (the title keeps the query), Esc clears it.
    tmux.keys(&["Enter"]);
    tmux.wait("the kept filter", |s| s.contains("/01999 1/2000"));
    tmux.keys(&["Escape"]);
    let screen = tmux.wait("every row again", |s| s.contains("tool_00000"));
    assert!(!screen.contains("/01999"), "{screen}");
    tmux.keys(&["C-q"]);
    tmux.wait_gone();
    env.assert_no_leaks();
}

#[cfg_attr(
    mcph_no_tmux,
    ignore = "tmux is not installed: install it (apt-get install tmux) to run the TUI tests"
)]
#[test]
fn quitting_with_servers_connected_takes_a_second_ctrl_c() {
    let env = TestEnv::new();
    let tmux = Tmux::start(&env, &demo(&env), 80, 24);
    tmux.wait("the main screen", |s| s.contains("Chat"));
    tmux.keys(&["Tab", "Tab", "c"]);
    tmux.wait("demo_alpha ready", |s| s.contains("ready 5 tools"));
    tmux.keys(&["C-c"]);
    tmux.wait("the question", |s| s.contains("press Ctrl-C again"));
    // Later than a second: still running.
    std::thread::sleep(Duration::from_millis(1_500));
    assert!(tmux.alive(), "{}", tmux.screen());
    // Two within a second (one write): it quits, closing every server.
    tmux.keys(&["C-c", "C-c"]);
    tmux.wait_gone();
    env.assert_no_leaks();
}

#[cfg_attr(
    mcph_no_tmux,
    ignore = "tmux is not installed: install it (apt-get install tmux) to run the TUI tests"
)]
#[test]
fn a_burst_of_500_downs_in_one_write_selects_row_500() {
    let env = TestEnv::new();
    let tmux = big_registry(&env);
    let downs = vec!["Down"; 500];
    tmux.keys(&downs);
    // The selected row is drawn reversed (tmux re-encodes it as SGR 7), and
    // only while the registry has the focus.
    let selected = |styled: &str| {
        styled
            .lines()
            .find(|l| l.contains("tool_00500"))
            .is_some_and(|l| l.contains("\u{1b}[7m"))
    };
    let deadline = std::time::Instant::now() + crate::common::tmux::PATIENCE;
    while !selected(&tmux.styled_screen()) {
        assert!(
            std::time::Instant::now() < deadline,
            "row 500 never selected:\n{}",
            tmux.screen()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    // (Only the focused registry draws its selection: every key was a Down, none
    // a split escape sequence taken for an Esc, which sends the focus away.)
    tmux.keys(&["C-q"]);
    tmux.wait_gone();
    env.assert_no_leaks();
}
