//! The real binary in tmux with a config of one's own: without a model it says
//! so (status bar, the conversation's first notice, a refused message) and the
//! servers still connect and take calls by hand.

use crate::common::TestEnv;
use crate::common::tmux::{Tmux, tui_command};

use super::POLICY;

#[cfg_attr(
    mcph_no_tmux,
    ignore = "tmux is not installed: install it (apt-get install tmux) to run the TUI tests"
)]
#[test]
fn without_a_model_the_tui_says_so_and_the_servers_still_work() {
    let env = TestEnv::new();
    env.config(&format!(
        "{}[servers.demo_alpha.tools]\n{POLICY}",
        env.demo("demo_alpha", "alpha", &[])
    ));
    let command = format!(
        "env -u ANTHROPIC_API_KEY -u OPENAI_API_KEY {}",
        tui_command(&env)
    );
    let tmux = Tmux::start(&env, &command, 120, 40);
    let screen = tmux.wait("the main screen", |s| s.contains("demo_alpha"));
    assert!(
        screen.contains("· no model configured: set ANTHROPIC_API_KEY"),
        "the first notice: {screen}"
    );
    assert!(
        screen
            .lines()
            .any(|l| l.starts_with("no model configured │")),
        "the status bar: {screen}"
    );
    assert!(!screen.contains("replay"), "no demo replay: {screen}");
    // A message is refused, kept in the box, and says why.
    tmux.keys(&["h", "i"]);
    tmux.wait("the text", |s| s.contains("│hi"));
    tmux.keys(&["Enter"]);
    let screen = tmux.wait("the refusal", |s| {
        s.lines()
            .rev()
            .take(4)
            .any(|l| l.starts_with("no model configured: set ANTHROPIC_API_KEY"))
    });
    assert!(screen.contains("│hi"), "the text stays: {screen}");
    assert!(!screen.contains("working"), "{screen}");
    // Connect from the side panel and call lookup by hand.
    tmux.keys(&["C-u", "Tab", "Tab", "c"]);
    tmux.wait("demo_alpha connected", |s| s.contains("ready 5 tools"));
    tmux.keys(&["Tab", "x"]);
    tmux.wait("the editor", |s| s.contains("Call mcp__demo_alpha__lookup"));
    tmux.keys(&["C-s"]);
    tmux.wait("the lookup result", |s| s.contains("no entry for"));
    tmux.keys(&["C-q"]);
    tmux.wait_gone();
    env.assert_no_leaks();
}
