//! The real binary in tmux, used as a person uses it: connect `demo_alpha` from the
//! side panel, see its tools exposed, kill its process, see them revoked, quit.
//! (Every way of ending the TUI is in tui_exits.rs.)

mod common;

use common::TestEnv;
use common::tmux::{Tmux, tui_command};

const POLICY: &str = "lookup = \"allow\"\nset = \"confirm\"\nreset = \"confirm\"\nfail = \"allow\"\nslow = \"allow\"\n";

fn setup(env: &TestEnv) -> String {
    env.config(&format!(
        "[model]\nprovider = \"scripted\"\n{}[servers.demo_alpha.tools]\n{POLICY}{}[servers.demo_beta.tools]\n{POLICY}",
        env.demo("demo_alpha", "alpha", &[]),
        env.demo("demo_beta", "beta", &[])
    ));
    tui_command(env)
}

#[test]
fn connect_from_the_side_panel_then_kill_and_watch_the_revocation() {
    if !Tmux::available() {
        eprintln!("SKIPPED: tmux is not installed; install tmux to run the end-to-end TUI test");
        return;
    }
    let env = TestEnv::new();
    let tmux = Tmux::start(&env, &setup(&env), 120, 40);
    tmux.wait("the main screen", |s| {
        s.contains("Servers") && s.contains("demo_alpha")
    });
    // Input → Conversation → Servers; demo_alpha is selected; c connects it.
    tmux.keys(&["Tab", "Tab"]);
    tmux.keys(&["c"]);
    let screen = tmux.wait("demo_alpha's tools in the registry", |s| {
        s.contains("mcp__demo_alpha__lookup") && s.contains("ready")
    });
    assert!(screen.contains("Registry v1"), "{screen}");
    assert!(
        screen.contains("set → mcp__demo_alpha__set confirm"),
        "{screen}"
    );
    // K kills the server's processes; the watchdog notices and revokes.
    tmux.keys(&["K"]);
    let screen = tmux.wait("the revocation", |s| {
        s.contains("lost") && s.contains("__lookup revoked:")
    });
    assert!(screen.contains("killed by signal 9"), "{screen}");
    assert!(screen.contains("Registry v2"), "{screen}");
    // The struck-out tools leave after a moment.
    tmux.wait("the revoked tools to go", |s| {
        !s.contains("__lookup revoked:")
    });
    // Ctrl-C while idle quits, closing everything.
    tmux.keys(&["C-c"]);
    tmux.wait_gone();
    env.assert_no_leaks();
}
