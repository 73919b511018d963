//! No orphans from the TUI (SPEC rule 12), the exit matrix of orphans.rs for the
//! full-screen TUI: the real binary in tmux, two servers connected from the side
//! panel — one deaf to stdin EOF and SIGTERM with a grandchild in its process
//! group and one that called `setsid()`, the other with a `setsid()` grandchild
//! of its own — then the TUI ends by Ctrl-Q, Ctrl-C while idle, SIGTERM, a panic
//! in the backend task, a panic on the UI thread, or SIGKILL — and a panic in
//! a turn, which the TUI survives (the operator reads that the agent crashed,
//! then quits). After each, no process the harness started (shims, servers,
//! grandchildren) is alive, and — except after SIGKILL, when no code of the
//! harness runs — the terminal is restored: main screen, cursor shown, mouse
//! reporting off, cooked mode.

use crate::common::TestEnv;
use crate::common::tmux::{Tmux, harness_pids, signal_harness, tui_command};

const POLICY: &str = "lookup = \"allow\"\nset = \"confirm\"\nreset = \"confirm\"\nfail = \"allow\"\nslow = \"allow\"\n";

/// Shim + server + two grandchildren for `deaf`; shim + server + one for `kids`.
const PROCESSES: usize = 7;

#[derive(Debug, Clone, Copy, PartialEq)]
enum Exit {
    CtrlQ,
    CtrlC,
    Sigterm,
    /// A panic in the backend task (test hook: `MCP_HARNESS_TEST_PANIC=backend`, then `u`).
    PanicBackend,
    /// A panic in a turn (test hook: `MCP_HARNESS_TEST_PANIC=turn`, then a
    /// message): the TUI says so and stays; then Ctrl-Q.
    PanicTurn,
    /// A panic on the thread that runs the UI loop (test hook: SIGUSR1 under
    /// `MCP_HARNESS_TEST_PANIC_ON_SIGUSR1`; the UI loop runs on the main thread).
    PanicUi,
    /// No cleanup code of the harness runs at all.
    Sigkill,
}

impl Exit {
    /// The shell's `$?` for the harness.
    fn status(self) -> u8 {
        match self {
            // Quitting, however asked for, is a normal end.
            Exit::CtrlQ | Exit::CtrlC | Exit::Sigterm | Exit::PanicTurn => 0,
            // The backend unwinds (closing every server); the UI ends, saying why.
            Exit::PanicBackend => 1,
            // The panic hook restores the terminal, then aborts: 128 + SIGABRT.
            Exit::PanicUi => 134,
            Exit::Sigkill => 137,
        }
    }

    fn env(self) -> &'static str {
        match self {
            Exit::PanicBackend => "MCP_HARNESS_TEST_PANIC=backend",
            Exit::PanicTurn => "MCP_HARNESS_TEST_PANIC=turn",
            Exit::PanicUi => "MCP_HARNESS_TEST_PANIC_ON_SIGUSR1=1",
            _ => "",
        }
    }
}

fn config(env: &TestEnv) {
    let deaf = env.demo("deaf", "alpha", &crate::common::STUBBORN);
    let kids = env.demo("kids", "beta", &["--fault", "grandchild-setsid"]);
    env.config(&format!(
        "[limits]\nclose_grace_ms = 300\n[model]\nprovider = \"scripted\"\n\
         {deaf}[servers.deaf.tools]\n{POLICY}{kids}[servers.kids.tools]\n{POLICY}"
    ));
}

fn exercise(exit: Exit) {
    let env = TestEnv::new();
    config(&env);
    // The shell reports how the harness ended and in which state it left the
    // terminal (cooked mode has `icanon` and `echo`; raw mode `-icanon -echo`).
    // No backtrace: the panic message must fit on the screen.
    let command = format!(
        "sh -c 'RUST_BACKTRACE=0 {} {}; echo EXITED:$?; echo \"TTY: $(stty -a | tr \" ;\" \"\\n\\n\" | grep -E \"^-?(icanon|echo)$\" | tr \"\\n\" \" \")\"; sleep 60'",
        exit.env(),
        tui_command(&env)
    );
    let tmux = Tmux::start(&env, &command, 120, 40);
    tmux.wait("the main screen", |s| {
        s.contains("Servers") && s.contains("kids")
    });
    // Input → Conversation → Servers; `deaf` is selected first.
    tmux.keys(&["Tab", "Tab", "c"]);
    tmux.wait("deaf connected", |s| {
        s.contains("deaf") && s.contains("ready 5 tools")
    });
    tmux.keys(&["Down", "c"]);
    tmux.wait("both connected", |s| s.contains("servers 2/2 ready"));
    wait_for(&env, PROCESSES);
    match exit {
        Exit::CtrlQ => tmux.keys(&["C-q"]),
        // Servers are connected: quitting takes a second Ctrl-C within a second.
        Exit::CtrlC => tmux.keys(&["C-c", "C-c"]),
        Exit::Sigterm => signal_harness(&env, "-TERM"),
        // Servers → Registry → Health, where `u` sends Refresh.
        Exit::PanicBackend => tmux.keys(&["Tab", "Tab", "u"]),
        Exit::PanicTurn => {
            // Servers → the input box; a message starts a turn, which panics.
            tmux.keys(&["i", "hello", "Enter"]);
            let screen = tmux.wait("the crash said", |s| s.contains("the agent crashed"));
            assert!(
                screen.contains("┌ Servers"),
                "the TUI is still there: {screen}"
            );
            tmux.keys(&["C-q"]);
        }
        Exit::PanicUi => signal_harness(&env, "-USR1"),
        Exit::Sigkill => signal_harness(&env, "-KILL"),
    }
    let expected = format!("EXITED:{}", exit.status());
    let screen = tmux.wait("the harness to exit", |s| s.contains("TTY:"));
    assert!(screen.contains(&expected), "{exit:?}: {screen}");
    assert!(
        harness_pids(&env).is_empty(),
        "{exit:?}: the harness is still there"
    );
    match exit {
        // Said once the terminal is restored: what panicked, and its message.
        Exit::PanicBackend => assert!(
            screen.contains("the backend task panicked")
                && screen.contains("a panic in the backend task, on purpose")
                && !screen.contains("thread 'main'"),
            "{screen}"
        ),
        Exit::PanicUi => assert!(
            screen.contains("thread 'main'") && screen.contains("test-only panic"),
            "{screen}"
        ),
        _ => {}
    }
    if exit != Exit::Sigkill {
        assert!(
            !screen.contains("┌ Servers"),
            "{exit:?}: the TUI's screen is gone: {screen}"
        );
        assert!(
            screen.contains("TTY: icanon echo"),
            "{exit:?}: not cooked: {screen}"
        );
        let modes = tmux.run(&[
            "display-message",
            "-p",
            "-t",
            "t",
            "#{alternate_on} #{cursor_flag} #{mouse_any_flag}",
        ]);
        let modes = String::from_utf8_lossy(&modes.stdout).trim().to_owned();
        assert_eq!(
            modes, "0 1 0",
            "{exit:?}: alternate screen, cursor, mouse: {screen}"
        );
    }
    env.assert_no_leaks();
}

/// Waits (generously) until every server and grandchild is up.
fn wait_for(env: &TestEnv, count: usize) {
    let deadline = std::time::Instant::now() + crate::common::tmux::PATIENCE;
    while env.tagged_processes().len() < count {
        assert!(
            std::time::Instant::now() < deadline,
            "not every process started: {:?}",
            env.tagged_processes()
        );
        std::thread::sleep(std::time::Duration::from_millis(25));
    }
}

fn matrix(exits: &[Exit]) {
    for exit in exits {
        exercise(*exit);
    }
}

#[cfg_attr(
    mcph_no_tmux,
    ignore = "tmux is not installed: install it (apt-get install tmux) to run the TUI tests"
)]
#[test]
fn quitting_with_ctrl_q_or_ctrl_c_leaves_no_process_and_a_restored_terminal() {
    matrix(&[Exit::CtrlQ, Exit::CtrlC]);
}

#[cfg_attr(
    mcph_no_tmux,
    ignore = "tmux is not installed: install it (apt-get install tmux) to run the TUI tests"
)]
#[test]
fn sigterm_leaves_no_process_and_a_restored_terminal() {
    matrix(&[Exit::Sigterm]);
}

#[cfg_attr(
    mcph_no_tmux,
    ignore = "tmux is not installed: install it (apt-get install tmux) to run the TUI tests"
)]
#[test]
fn a_panic_in_the_backend_or_on_the_ui_thread_leaves_no_process_and_a_restored_terminal() {
    matrix(&[Exit::PanicBackend, Exit::PanicUi]);
}

#[cfg_attr(
    mcph_no_tmux,
    ignore = "tmux is not installed: install it (apt-get install tmux) to run the TUI tests"
)]
#[test]
fn a_panic_in_a_turn_leaves_the_tui_running() {
    matrix(&[Exit::PanicTurn]);
}

#[cfg_attr(
    mcph_no_tmux,
    ignore = "tmux is not installed: install it (apt-get install tmux) to run the TUI tests"
)]
#[test]
fn sigkill_of_the_harness_leaves_no_process() {
    matrix(&[Exit::Sigkill]);
}
