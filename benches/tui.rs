//! End-to-end figures of the TUI, each with a baseline measured in the same run:
//! - kill from the side panel → the tools gone from the rendered registry
//!   (through the backend, the reducer and a real render), vs the MCP layer's own
//!   revoked event;
//! - idle cost of the real binary in a terminal (tmux) with two connected servers;
//! - start-up: process start to the first frame drawn, vs `mcp-harness --version`.
//!
//! `cargo bench --bench tui` (needs tmux).

#![allow(clippy::unwrap_used, clippy::expect_used)] // a benchmark: a panic is the report

use std::process::Command;
use std::time::{Duration, Instant, SystemTime};

use mcp_harness::backend;
use mcp_harness::config::{self, ConfigSource};
use mcp_harness::protocol::{BackendEvent, Command as UiCommand};
use mcp_harness::session::SessionOptions;
use mcp_harness::ui::msg::Msg;
use mcp_harness::ui::panes;
use mcp_harness::ui::state::{AppState, Focus};
use mcp_harness::ui::update::update;
use ratatui::Terminal;
use ratatui::backend::TestBackend;

const BIN: &str = env!("CARGO_BIN_EXE_mcp-harness");
const POLICY: &str = "lookup = \"allow\"\nset = \"confirm\"\nreset = \"confirm\"\nfail = \"allow\"\nslow = \"allow\"\n";

fn config_text() -> String {
    format!(
        "[model]\nprovider = \"scripted\"\n[servers.demo_alpha]\ncommand = \"{BIN}\"\nargs = [\"demo-server\", \"alpha\"]\n[servers.demo_alpha.tools]\n{POLICY}[servers.demo_beta]\ncommand = \"{BIN}\"\nargs = [\"demo-server\", \"beta\"]\n[servers.demo_beta.tools]\n{POLICY}"
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

/// The next backend event or fresh views, as the UI loop would see them.
async fn next_msg(handle: &mut backend::BackendHandle) -> Msg {
    tokio::select! {
        event = handle.events.recv() => Msg::Backend(event.expect("event")),
        _ = handle.views.changed() => Msg::Views(handle.views.borrow_and_update().clone()),
    }
}

/// Kill from the side panel until the registry pane no longer shows alpha's tools.
async fn kill_to_rendered_revocation() {
    let config = config::parse(&config_text(), ConfigSource::Embedded).expect("config");
    let mut handle = backend::spawn(config, SessionOptions::default()).expect("backend");
    let mut state = AppState::new(Instant::now());
    state.focus = Focus::Registry;
    let mut terminal = Terminal::new(TestBackend::new(120, 40)).expect("terminal");
    let mut samples = Vec::new();
    for _ in 0..30 {
        handle
            .commands
            .send(UiCommand::Connect("demo_alpha".into()))
            .expect("send");
        // Until its tools are drawn.
        loop {
            let msg = next_msg(&mut handle).await;
            state.now = Instant::now();
            update(&mut state, msg);
            terminal.draw(|f| panes::draw(f, &state)).expect("draw");
            if screen(&terminal).contains("lookup → mcp__demo_alpha__lookup") {
                break;
            }
        }
        let t0 = Instant::now();
        handle
            .commands
            .send(UiCommand::KillServer("demo_alpha".into()))
            .expect("send");
        loop {
            let msg = next_msg(&mut handle).await;
            state.now = Instant::now();
            update(&mut state, msg);
            terminal.draw(|f| panes::draw(f, &state)).expect("draw");
            if !screen(&terminal).contains("lookup → mcp__demo_alpha__lookup") {
                break;
            }
        }
        samples.push(t0.elapsed());
        // Let the struck-out rows and the lost state settle before the next round.
        while let Ok(msg) =
            tokio::time::timeout(Duration::from_millis(50), next_msg(&mut handle)).await
        {
            update(&mut state, msg);
        }
    }
    let _ = handle.commands.send(UiCommand::Quit);
    while let Some(event) = handle.events.recv().await {
        if event == BackendEvent::Stopped {
            break;
        }
    }
    println!(
        "kill from the side panel → tools gone from the rendered registry (backend + reducer + render), 30 runs"
    );
    println!("  median {}  (target < 20 ms)", ms(median(samples)));
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
    std::fs::write(&config, config_text()).expect("config");
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
    std::thread::sleep(Duration::from_secs(1));
    let pid = harness_pid().expect("harness pid");
    let before = cpu_ns(pid);
    std::thread::sleep(Duration::from_secs(10));
    let used = cpu_ns(pid) - before;
    println!("idle cost with two connected servers, 10 s (real binary in tmux)");
    println!(
        "  CPU {:.3} ms (target < 50 ms) · resident {} KiB (target < 40 MiB)",
        used as f64 / 1e6,
        rss_kb(pid)
    );
    tmux.run(&["send-keys", "-t", "b", "C-c"]);
    std::thread::sleep(Duration::from_secs(2));
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    runtime.block_on(kill_to_rendered_revocation());
    println!();
    real_terminal();
}
