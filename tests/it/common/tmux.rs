//! The real binary in a terminal: a tmux server of the test's own, so a
//! developer's sessions are never touched, with helpers to type keys, read the
//! screen (as text, or with tmux's own SGR styling) and record the raw bytes
//! the program writes to its terminal.

use std::path::Path;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use super::{BIN, TestEnv};

/// How long any wait on the screen may take: generous, for a loaded machine.
pub const PATIENCE: Duration = Duration::from_secs(30);

pub struct Tmux {
    socket: String,
}

impl Tmux {
    /// tmux must run: a test that needs it is ignored at build time when it is
    /// missing (see build.rs), so reaching here without it is a failure, never
    /// a silent pass (`MCP_HARNESS_TMUX=required`, or a tool removed since).
    fn require() {
        let runs = Command::new("tmux")
            .arg("-V")
            .output()
            .is_ok_and(|o| o.status.success());
        assert!(
            runs,
            "this test needs tmux, which does not run here (MCP_HARNESS_TMUX=required, or it \
             went missing after the build): install it (apt-get install tmux)"
        );
    }

    pub fn run(&self, args: &[&str]) -> Output {
        Command::new("tmux")
            .arg("-L")
            .arg(&self.socket)
            .args(args)
            .output()
            .expect("tmux")
    }

    /// Starts `shell_command` in a fresh session of `width`×`height`.
    pub fn start(env: &TestEnv, shell_command: &str, width: u16, height: u16) -> Self {
        Self::require();
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

    /// The screen as plain text.
    pub fn screen(&self) -> String {
        String::from_utf8_lossy(&self.run(&["capture-pane", "-p", "-t", "t"]).stdout).into_owned()
    }

    /// The screen with its styling, as tmux re-encodes it (SGR sequences only).
    pub fn styled_screen(&self) -> String {
        String::from_utf8_lossy(&self.run(&["capture-pane", "-p", "-e", "-t", "t"]).stdout)
            .into_owned()
    }

    /// Appends every byte the pane's program writes from now on to `file`.
    pub fn record_output(&self, file: &Path) {
        let out = self.run(&[
            "pipe-pane",
            "-o",
            "-t",
            "t",
            &format!("cat >> '{}'", file.display()),
        ]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    pub fn pane_title(&self) -> String {
        let out = self.run(&["display-message", "-p", "-t", "t", "#{pane_title}"]);
        String::from_utf8_lossy(&out.stdout).trim().to_owned()
    }

    pub fn keys(&self, keys: &[&str]) {
        let mut args = vec!["send-keys", "-t", "t"];
        args.extend_from_slice(keys);
        self.run(&args);
    }

    /// Waits (generously) for the screen to satisfy `pred`.
    pub fn wait(&self, what: &str, pred: impl Fn(&str) -> bool) -> String {
        let deadline = Instant::now() + PATIENCE;
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

    pub fn alive(&self) -> bool {
        self.run(&["has-session", "-t", "t"]).status.success()
    }

    /// Waits (generously) for the session to end.
    pub fn wait_gone(&self) {
        let deadline = Instant::now() + PATIENCE;
        while self.alive() {
            assert!(
                Instant::now() < deadline,
                "the TUI did not quit:\n{}",
                self.screen()
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        self.run(&["kill-server"]);
    }
}

/// The shell command that runs the TUI on `env`'s config, with isolated dirs.
pub fn tui_command(env: &TestEnv) -> String {
    let dir = env.dir.path().display();
    format!(
        "env XDG_CONFIG_HOME={dir}/xdg-config XDG_DATA_HOME={dir}/xdg-data XDG_RUNTIME_DIR={dir}/xdg-run HOME={dir} TERM=xterm-256color {BIN} --config {}",
        env.path("config.toml").display()
    )
}

/// The harness processes of this test (their command line names its config);
/// not the shims, which run `__shim`.
pub fn harness_pids(env: &TestEnv) -> Vec<u32> {
    let config = env.path("config.toml").display().to_string();
    let mut pids = Vec::new();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return pids;
    };
    for entry in entries.flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(cmdline) = std::fs::read(entry.path().join("cmdline")) else {
            continue;
        };
        let args: Vec<&[u8]> = cmdline.split(|b| *b == 0).collect();
        if args.first().is_some_and(|a| a.ends_with(b"mcp-harness"))
            && args.get(1).is_some_and(|a| *a == b"--config")
            && args.contains(&config.as_bytes())
        {
            pids.push(pid);
        }
    }
    pids
}

/// Sends `signal` (e.g. `-TERM`) to every harness process of this test.
pub fn signal_harness(env: &TestEnv, signal: &str) {
    let pids = harness_pids(env);
    assert!(!pids.is_empty(), "harness not found");
    for pid in pids {
        let status = Command::new("kill")
            .args([signal, &pid.to_string()])
            .status()
            .expect("kill");
        assert!(status.success(), "kill {signal} {pid}");
    }
}
