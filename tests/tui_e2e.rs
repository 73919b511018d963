//! The real binary in tmux, used as a person uses it: connect `demo_alpha` from the
//! side panel, see its tools exposed, kill its process, see them revoked, quit —
//! and the exit paths (Ctrl-C, SIGTERM, a panic) leave no process and a restored
//! terminal.

mod common;

use std::process::{Command, Output};
use std::time::{Duration, Instant};

use common::{BIN, TestEnv};

const POLICY: &str = "lookup = \"allow\"\nset = \"confirm\"\nreset = \"confirm\"\nfail = \"allow\"\nslow = \"allow\"\n";

/// A tmux server of this test's own, so a developer's sessions are never touched.
struct Tmux {
    socket: String,
}

impl Tmux {
    fn available() -> bool {
        Command::new("tmux")
            .arg("-V")
            .output()
            .is_ok_and(|o| o.status.success())
    }

    fn run(&self, args: &[&str]) -> Output {
        Command::new("tmux")
            .arg("-L")
            .arg(&self.socket)
            .args(args)
            .output()
            .expect("tmux")
    }

    /// Starts `shell_command` in a fresh session of `width`×`height`.
    fn start(env: &TestEnv, shell_command: &str, width: u16, height: u16) -> Self {
        // Not the tag itself: the leak detector looks for processes carrying the tag.
        let tmux = Tmux {
            socket: format!("tui-{}", env.tag),
        };
        let out = tmux.run(&[
            "new-session",
            "-d",
            "-s",
            "t",
            "-x",
            &width.to_string(),
            "-y",
            &height.to_string(),
            shell_command,
        ]);
        assert!(
            out.status.success(),
            "tmux: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        tmux
    }

    fn screen(&self) -> String {
        String::from_utf8_lossy(&self.run(&["capture-pane", "-p", "-t", "t"]).stdout).into_owned()
    }

    fn keys(&self, keys: &[&str]) {
        let mut args = vec!["send-keys", "-t", "t"];
        args.extend_from_slice(keys);
        self.run(&args);
    }

    /// Waits (generously) for the screen to satisfy `pred`.
    fn wait(&self, what: &str, pred: impl Fn(&str) -> bool) -> String {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let screen = self.screen();
            if pred(&screen) {
                return screen;
            }
            assert!(
                Instant::now() < deadline,
                "timed out waiting for {what}; the screen:\n{screen}"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    fn alive(&self) -> bool {
        self.run(&["has-session", "-t", "t"]).status.success()
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        self.run(&["kill-server"]);
    }
}

fn setup(env: &TestEnv) -> String {
    let config = env.config(&format!(
        "[model]\nprovider = \"scripted\"\n{}[servers.demo_alpha.tools]\n{POLICY}{}[servers.demo_beta.tools]\n{POLICY}",
        env.demo("demo_alpha", "alpha", &[]),
        env.demo("demo_beta", "beta", &[])
    ));
    let dir = env.dir.path().display();
    format!(
        "env XDG_CONFIG_HOME={dir}/xdg-config XDG_DATA_HOME={dir}/xdg-data HOME={dir} TERM=xterm-256color {BIN} --config {}",
        config.display()
    )
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
    // Health counts the connection's age by itself (no key pressed meanwhile).
    let up = |s: &str| {
        s.lines()
            .find_map(|l| l.split("│up").nth(1).map(|r| r.trim().to_string()))
            .unwrap_or_default()
    };
    let before = up(&screen);
    tmux.wait("the age to move on", |s| {
        !up(s).is_empty() && up(s) != before
    });
    // K kills the server's processes; the watchdog notices and revokes.
    tmux.keys(&["K"]);
    // (At 120 columns a revoked row shows its name's tail beside the cause.)
    let screen = tmux.wait("the revocation", |s| {
        s.contains("lost") && s.contains("lookup revoked:")
    });
    assert!(screen.contains("killed by signal 9"), "{screen}");
    assert!(screen.contains("Registry v2"), "{screen}");
    // The struck-out tools leave after a moment.
    tmux.wait("the revoked tools to go", |s| {
        !s.contains("lookup revoked:")
    });
    // Ctrl-C while idle quits, closing everything.
    tmux.keys(&["C-c"]);
    let deadline = Instant::now() + Duration::from_secs(30);
    while tmux.alive() {
        assert!(
            Instant::now() < deadline,
            "the TUI did not quit:\n{}",
            tmux.screen()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    env.assert_no_leaks();
}

#[test]
fn keys_typed_as_a_prompt_opens_do_not_decide_it_and_pasted_lines_stay_lines() {
    if !Tmux::available() {
        eprintln!("SKIPPED: tmux is not installed");
        return;
    }
    let env = TestEnv::new();
    let tmux = Tmux::start(&env, &setup(&env), 80, 24);
    tmux.wait("the main screen", |s| s.contains("Chat"));
    // A bracketed paste of two lines (tmux sends the line break as CR).
    tmux.run(&["set-buffer", "-b", "p", "first line\nsecond line"]);
    tmux.run(&["paste-buffer", "-p", "-b", "p", "-t", "t"]);
    tmux.wait("two lines in the input box", |s| {
        s.contains("│first line") && s.contains("│second line")
    });
    // Servers tab: connect demo_alpha; Registry tab: call `set` by hand.
    tmux.keys(&["Tab", "Tab", "c"]);
    tmux.wait("demo_alpha ready", |s| s.contains("ready 5 tools"));
    tmux.keys(&["Tab", "Down", "x"]);
    tmux.wait("the editor", |s| s.contains("Call mcp__demo_alpha__set"));
    tmux.keys(&["C-s"]);
    tmux.wait("the prompt", |s| s.contains("Approval needed"));
    // Keys that arrive while it opens go where they were going.
    tmux.keys(&["y", "y", "a", "n"]);
    let screen = tmux.wait("the arming note", |s| s.contains("arming: keys go to the"));
    assert!(screen.contains("Approval needed"), "{screen}");
    std::thread::sleep(Duration::from_millis(1500));
    let screen = tmux.screen();
    assert!(!screen.contains("arming:"), "armed after a pause: {screen}");
    tmux.keys(&["y"]);
    let screen = tmux.wait("the approved call", |s| {
        s.contains("operator → mcp__demo_alpha__set") && s.contains(" ok ")
    });
    assert!(!screen.contains("Approval needed"), "{screen}");
    // The stray keys were typed into the input box (typing in a list pane
    // goes there), after the pasted text.
    tmux.wait("the typed keys in the input box", |s| {
        s.contains("second lineyyan")
    });
    tmux.keys(&["C-q"]);
    let deadline = Instant::now() + Duration::from_secs(30);
    while tmux.alive() {
        assert!(Instant::now() < deadline, "the TUI did not quit");
        std::thread::sleep(Duration::from_millis(100));
    }
    env.assert_no_leaks();
}

/// Runs the TUI inside a shell that reports how it ended, then checks the
/// shell's screen (the alternate screen was left) and the processes.
fn exit_path(trigger: impl Fn(&Tmux, &TestEnv), expected: &str, extra_env: &str) {
    let env = TestEnv::new();
    let command = format!(
        "sh -c '{extra_env} {}; echo EXITED:$?; sleep 60'",
        setup(&env)
    );
    let tmux = Tmux::start(&env, &command, 120, 40);
    tmux.wait("the main screen", |s| s.contains("Servers"));
    tmux.keys(&["Tab", "Tab", "c"]);
    tmux.wait("a connected server", |s| s.contains("ready 5 tools"));
    trigger(&tmux, &env);
    let screen = tmux.wait("the harness to exit", |s| s.contains("EXITED:"));
    assert!(screen.contains(expected), "{screen}");
    assert!(
        !screen.contains("┌ Servers"),
        "the TUI's screen is gone: {screen}"
    );
    env.assert_no_leaks();
}

#[test]
fn sigterm_restores_the_terminal_and_closes_every_server() {
    if !Tmux::available() {
        eprintln!("SKIPPED: tmux is not installed");
        return;
    }
    exit_path(
        |_, env| {
            let pids = harness_pids(env);
            assert!(!pids.is_empty(), "harness not found");
            for pid in pids {
                Command::new("kill")
                    .args(["-TERM", &pid.to_string()])
                    .status()
                    .unwrap();
            }
        },
        "EXITED:0",
        "",
    );
}

#[test]
fn a_panic_restores_the_terminal_and_leaves_no_server() {
    if !Tmux::available() {
        eprintln!("SKIPPED: tmux is not installed");
        return;
    }
    // A hidden test hook makes the backend task panic on `Refresh` (Health pane: u).
    exit_path(
        |tmux, _| tmux.keys(&["Tab", "Tab", "u"]),
        "EXITED:134",
        "MCP_HARNESS_TEST_PANIC=backend",
    );
}

/// The harness processes of this test (their command line names its config).
fn harness_pids(env: &TestEnv) -> Vec<u32> {
    let config = env.path("config.toml").display().to_string();
    let mut pids = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(cmdline) = std::fs::read(entry.path().join("cmdline")) else {
            continue;
        };
        let args: Vec<&[u8]> = cmdline.split(|b| *b == 0).collect();
        if args.first().is_some_and(|a| a.ends_with(b"mcp-harness"))
            && args.contains(&config.as_bytes())
        {
            pids.push(pid);
        }
    }
    pids
}
