//! End-to-end figures of the TUI, with 10,000 exposed tools connected (a demo
//! server publishing them, the backend over its channels, the reducer, and a
//! real render of the whole 120×40 screen with the registry showing every
//! server's tools):
//! - a tool call's result event → its frame drawn (median; target ≤ 2 ms);
//! - a keystroke in the registry's filter → its frame (target ≤ 5 ms);
//! - kill from the side panel → the struck-out rows drawn (target ≤ 20 ms);
//!
//! then the real binary in a terminal (tmux) with two demo servers:
//! - idle cost over 10 s (CPU, resident memory);
//! - start-up: process start to the first frame drawn, vs `mcp-harness --version`.
//!
//! `cargo bench --bench tui` (needs tmux).

#![allow(clippy::unwrap_used, clippy::expect_used)] // a benchmark: a panic is the report

use std::process::Command;
use std::time::{Duration, Instant, SystemTime};

use crossterm::event::{KeyCode, KeyEvent};
use mcp_harness::backend::{self, BackendHandle};
use mcp_harness::config::{self, ConfigSource};
use mcp_harness::protocol::{BackendEvent, Command as UiCommand};
use mcp_harness::session::SessionOptions;
use mcp_harness::ui::msg::Msg;
use mcp_harness::ui::panes;
use mcp_harness::ui::state::{AppState, Focus};
use mcp_harness::ui::update::update;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use serde_json::json;

const BIN: &str = env!("CARGO_BIN_EXE_mcp-harness");
const POLICY: &str = "lookup = \"allow\"\nset = \"confirm\"\nreset = \"confirm\"\nfail = \"allow\"\nslow = \"allow\"\n";
/// Exposed tools of the big server.
const TOOLS: usize = 10_000;

fn demo_config() -> String {
    format!(
        "[model]\nprovider = \"scripted\"\n[servers.demo_alpha]\ncommand = \"{BIN}\"\nargs = [\"demo-server\", \"alpha\"]\n[servers.demo_alpha.tools]\n{POLICY}[servers.demo_beta]\ncommand = \"{BIN}\"\nargs = [\"demo-server\", \"beta\"]\n[servers.demo_beta.tools]\n{POLICY}"
    )
}

/// demo_alpha (5 tools) and zbig (10,000; sorted after it, so alpha's rows
/// are the first the all-servers registry shows).
fn big_config() -> String {
    let policy: String = (0..TOOLS)
        .map(|i| format!("tool_{i:05} = \"allow\"\n"))
        .collect();
    format!(
        "[model]\nprovider = \"scripted\"\n[limits]\nmax_tools = 20000\nconnect_timeout_ms = 120000\n\
         [servers.demo_alpha]\ncommand = \"{BIN}\"\nargs = [\"demo-server\", \"alpha\"]\n[servers.demo_alpha.tools]\n{POLICY}\
         [servers.zbig]\ncommand = \"{BIN}\"\nargs = [\"demo-server\", \"alpha\", \"--tools\", \"{TOOLS}\", \"--page-size\", \"500\"]\n[servers.zbig.tools]\n{policy}"
    )
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn ms(d: Duration) -> String {
    format!("{:.2} ms", d.as_secs_f64() * 1e3)
}

fn screen(terminal: &Terminal<TestBackend>) -> String {
    let buffer = terminal.backend().buffer();
    buffer.content().iter().map(|c| c.symbol()).collect()
}

/// The UI's side of the bench: its state and a real 120×40 render.
struct Ui {
    state: AppState,
    terminal: Terminal<TestBackend>,
}

impl Ui {
    fn new() -> Self {
        let mut state = AppState::new(Instant::now());
        state.area = ratatui::layout::Rect::new(0, 0, 120, 40);
        Self {
            state,
            terminal: Terminal::new(TestBackend::new(120, 40)).expect("terminal"),
        }
    }

    fn apply(&mut self, msg: Msg) {
        self.state.now = Instant::now();
        update(&mut self.state, msg);
    }

    fn draw(&mut self) {
        let state = &self.state;
        self.terminal.draw(|f| panes::draw(f, state)).expect("draw");
    }

    /// As the loop does: this message, everything already pending, one frame.
    fn frame(&mut self, first: Msg, handle: &mut BackendHandle) {
        self.apply(first);
        while let Ok(event) = handle.events.try_recv() {
            self.apply(Msg::Backend(event));
        }
        if handle.views.has_changed().unwrap_or(false) {
            let views = handle.views.borrow_and_update().clone();
            self.apply(Msg::Views(views));
        }
        self.draw();
    }

    /// Frames until `done` holds after one.
    async fn until(&mut self, handle: &mut BackendHandle, done: impl Fn(&Ui) -> bool) {
        let deadline = Instant::now() + Duration::from_secs(120);
        while !done(self) {
            assert!(Instant::now() < deadline, "timed out");
            let first = next_msg(handle).await;
            self.frame(first, handle);
        }
    }
}

/// The next backend event or fresh views, as the UI loop would see them.
async fn next_msg(handle: &mut BackendHandle) -> Msg {
    tokio::select! {
        event = handle.events.recv() => Msg::Backend(event.expect("event")),
        _ = handle.views.changed() => Msg::Views(handle.views.borrow_and_update().clone()),
    }
}

fn key(code: KeyCode) -> Msg {
    Msg::Key(KeyEvent::from(code))
}

async fn with_ten_thousand_tools() {
    // A config file of its own: the pins' lock file goes beside it.
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("config.toml");
    std::fs::write(&path, big_config()).expect("config");
    let config = config::parse(&big_config(), ConfigSource::File(path)).expect("config");
    let mut handle = backend::spawn(config, SessionOptions::default()).expect("backend");
    let mut ui = Ui::new();
    for alias in ["zbig", "demo_alpha"] {
        handle
            .commands
            .send(UiCommand::Connect(alias.into()))
            .expect("send");
    }
    ui.state.focus = Focus::Registry;
    ui.state.registry_all = true;
    ui.until(&mut handle, |ui| {
        ui.state.servers.iter().map(|s| s.exposed).sum::<usize>() == TOOLS + 5
    })
    .await;
    println!(
        "with {} exposed tools connected (120×40, the registry showing every server's)",
        TOOLS + 5
    );

    // A tool call's result: from its event to its frame.
    let mut samples = Vec::new();
    for i in 0..200 {
        handle
            .commands
            .send(UiCommand::CallTool {
                name: format!("mcp__zbig__tool_{:05}", i % TOOLS),
                arguments: json!({"key": "apple"}),
            })
            .expect("send");
        loop {
            let msg = next_msg(&mut handle).await;
            let result = matches!(msg, Msg::Backend(BackendEvent::ToolCallFinished(_)));
            let t0 = Instant::now();
            ui.frame(msg, &mut handle);
            if result {
                samples.push(t0.elapsed());
                break;
            }
        }
    }
    println!(
        "  a call's result event → frame drawn: median {} of 200  (target ≤ 2 ms)",
        ms(median(samples))
    );

    // A keystroke in the filter: typing a query and taking it back.
    ui.apply(key(KeyCode::Char('/')));
    let mut samples = Vec::new();
    for _ in 0..5 {
        for c in "tool_09999".chars() {
            let t0 = Instant::now();
            ui.apply(key(KeyCode::Char(c)));
            ui.draw();
            samples.push(t0.elapsed());
        }
        for _ in 0..10 {
            let t0 = Instant::now();
            ui.apply(key(KeyCode::Backspace));
            ui.draw();
            samples.push(t0.elapsed());
        }
    }
    ui.apply(key(KeyCode::Esc));
    println!(
        "  a keystroke in the registry's filter → frame drawn: median {} of {}  (target ≤ 5 ms)",
        ms(median(samples.clone())),
        samples.len()
    );

    // Kill demo_alpha from the side panel: until its rows are drawn struck out
    // (while zbig's 10,000 stay).
    let mut samples = Vec::new();
    for _ in 0..10 {
        ui.state.struck.clear();
        ui.state.struck_gen += 1;
        let t0 = Instant::now();
        handle
            .commands
            .send(UiCommand::KillServer("demo_alpha".into()))
            .expect("send");
        ui.until(&mut handle, |ui| {
            !ui.state.struck.is_empty() && screen(&ui.terminal).contains("demo_alpha/lookup")
        })
        .await;
        samples.push(t0.elapsed());
        handle
            .commands
            .send(UiCommand::Connect("demo_alpha".into()))
            .expect("send");
        ui.until(&mut handle, |ui| {
            ui.state
                .servers
                .iter()
                .any(|s| s.alias == "demo_alpha" && s.exposed == 5)
        })
        .await;
    }
    println!(
        "  kill from the side panel → the struck-out rows drawn: median {} of 10  (target ≤ 20 ms)",
        ms(median(samples))
    );
    let _ = handle.commands.send(UiCommand::Quit);
    while let Some(event) = handle.events.recv().await {
        if event == BackendEvent::Stopped {
            break;
        }
    }
}

struct Tmux(String);

impl Tmux {
    fn run(&self, args: &[&str]) -> String {
        let out = Command::new("tmux")
            .arg("-L")
            .arg(&self.0)
            .args(args)
            .output()
            .expect("tmux");
        String::from_utf8_lossy(&out.stdout).into_owned()
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        self.run(&["kill-server"]);
    }
}

fn cpu_ns(pid: u32) -> u64 {
    std::fs::read_dir(format!("/proc/{pid}/task"))
        .map(|tasks| {
            tasks
                .flatten()
                .filter_map(|t| std::fs::read_to_string(t.path().join("schedstat")).ok())
                .filter_map(|s| {
                    s.split_whitespace()
                        .next()
                        .and_then(|n| n.parse::<u64>().ok())
                })
                .sum()
        })
        .unwrap_or(0)
}

fn rss_kb(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmRSS"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        })
        .unwrap_or(0)
}

fn harness_pid() -> Option<u32> {
    std::fs::read_dir("/proc").ok()?.flatten().find_map(|e| {
        let pid: u32 = e.file_name().to_string_lossy().parse().ok()?;
        let cmdline = std::fs::read(e.path().join("cmdline")).ok()?;
        let args: Vec<&[u8]> = cmdline
            .split(|b| *b == 0)
            .filter(|a| !a.is_empty())
            .collect();
        (args.len() == 3 && args[0] == BIN.as_bytes() && args[1] == b"--config").then_some(pid)
    })
}

/// The real binary in tmux: start-up to the first frame, then idle cost.
fn real_terminal() {
    let dir = tempfile::tempdir().expect("tempdir");
    let config = dir.path().join("config.toml");
    std::fs::write(&config, demo_config()).expect("config");
    let data = dir.path().join("data");
    let log = data.join("mcp-harness/mcp-harness.log");
    // Baseline: the same binary doing the least it can (print its version).
    let mut versions = Vec::new();
    for _ in 0..10 {
        let t = Instant::now();
        Command::new(BIN)
            .arg("--version")
            .output()
            .expect("version");
        versions.push(t.elapsed());
    }
    let tmux = Tmux(format!("bench-{}", std::process::id()));
    let command = format!(
        "env XDG_DATA_HOME={} XDG_CONFIG_HOME={} {BIN} --config {}",
        data.display(),
        dir.path().display(),
        config.display()
    );
    let spawned = SystemTime::now();
    tmux.run(&[
        "new-session",
        "-d",
        "-s",
        "b",
        "-x",
        "120",
        "-y",
        "40",
        &command,
    ]);
    let deadline = Instant::now() + Duration::from_secs(30);
    let first_frame = loop {
        let text = std::fs::read_to_string(&log).unwrap_or_default();
        if let Some(line) = text.lines().find(|l| l.contains("first frame drawn")) {
            let stamp = line.split_whitespace().next().unwrap_or_default();
            break chrono::DateTime::parse_from_rfc3339(stamp).ok();
        }
        assert!(Instant::now() < deadline, "no first frame logged");
        std::thread::sleep(Duration::from_millis(5));
    };
    let started = first_frame
        .and_then(|t| SystemTime::from(t).duration_since(spawned).ok())
        .unwrap_or_default();
    println!("start-up: process start to the first frame drawn (tmux, 120×40)");
    println!(
        "  {}  vs `mcp-harness --version` start to exit (median of 10): {}  (target < 100 ms)",
        ms(started),
        ms(median(versions))
    );
    // Connect both servers from the side panel, then stay idle.
    tmux.run(&["send-keys", "-t", "b", "Tab", "Tab", "c", "j", "c"]);
    let deadline = Instant::now() + Duration::from_secs(30);
    while !tmux
        .run(&["capture-pane", "-p", "-t", "b"])
        .contains("servers 2/2 ready")
    {
        assert!(Instant::now() < deadline, "servers did not connect");
        std::thread::sleep(Duration::from_millis(50));
    }
    // Past every status message and arming moment: really idle.
    std::thread::sleep(Duration::from_secs(8));
    let pid = harness_pid().expect("harness pid");
    let before = cpu_ns(pid);
    std::thread::sleep(Duration::from_secs(10));
    let used = cpu_ns(pid) - before;
    println!(
        "idle cost with two connected servers, 10 s (real binary in tmux, the Servers pane focused)"
    );
    println!(
        "  CPU {:.3} ms (target < 50 ms) · resident {} KiB (target < 40 MiB)",
        used as f64 / 1e6,
        rss_kb(pid)
    );
    tmux.run(&["send-keys", "-t", "b", "C-q"]);
    std::thread::sleep(Duration::from_secs(2));
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    runtime.block_on(with_ten_thousand_tools());
    println!();
    real_terminal();
}
