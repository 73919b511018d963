//! End-to-end figures of the TUI, with 10,000 exposed tools connected (a demo
//! server publishing them, the backend over its channels, the reducer, and a
//! real render of the whole 120×40 screen with the registry showing every
//! server's tools), each against the same figure with 5 tools in the same run:
//! - a tool call's result event → its frame drawn (median; target ≤ 2 ms);
//! - a keystroke in the registry's filter → its frame (target ≤ 5 ms);
//! - kill from the side panel → the struck-out rows drawn (target ≤ 20 ms);
//! - a keystroke after `@` with 10,000 resources listed → its frame;
//!
//! then the real binary in a terminal (tmux) with two demo servers:
//! - idle cost over 10 s (CPU, resident memory);
//! - start-up: process start to the first frame drawn, vs `mcp-harness --version`.
//!
//! `cargo bench --bench tui` (needs tmux).

#![allow(clippy::unwrap_used, clippy::expect_used)] // a benchmark: a panic is the report

use std::time::{Duration, Instant};

use crossterm::event::{KeyCode, KeyEvent};
use mcp_harness::backend::{self, BackendHandle};
use mcp_harness::config::{self, ConfigSource};
use mcp_harness::protocol::{AliasStatus, BackendEvent, Command as UiCommand};
use mcp_harness::session::SessionOptions;
use mcp_harness_tui::ui::msg::Msg;
use mcp_harness_tui::ui::panes;
use mcp_harness_tui::ui::state::{AppState, Focus};
use mcp_harness_tui::ui::update::update;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use serde_json::json;

pub const BIN: &str = env!("CARGO_BIN_EXE_mcp-harness");
const POLICY: &str = "lookup = \"allow\"\nset = \"confirm\"\nreset = \"confirm\"\nfail = \"allow\"\nslow = \"allow\"\n";
/// Exposed tools of the big server.
const TOOLS: usize = 10_000;

#[path = "tui/completion.rs"]
mod completion;
#[path = "tui/terminal.rs"]
mod terminal;

pub fn demo_config() -> String {
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

pub fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

pub fn ms(d: Duration) -> String {
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
    /// Whether a call's result was among them.
    fn frame(&mut self, first: Msg, handle: &mut BackendHandle) -> bool {
        let finished = |m: &Msg| matches!(m, Msg::Backend(BackendEvent::ToolCallFinished(_)));
        let mut result = finished(&first);
        self.apply(first);
        while let Ok(event) = handle.events.try_recv() {
            let msg = Msg::Backend(event);
            result |= finished(&msg);
            self.apply(msg);
        }
        if handle.views.has_changed().unwrap_or(false) {
            let views = handle.views.borrow_and_update().clone();
            self.apply(Msg::Views(views));
        }
        self.draw();
        result
    }

    /// Frames until `done` holds after one.
    async fn until(&mut self, handle: &mut BackendHandle, done: impl Fn(&Ui) -> bool) {
        let deadline = Instant::now() + Duration::from_secs(120);
        while !done(self) {
            assert!(Instant::now() < deadline, "timed out");
            let left = deadline.saturating_duration_since(Instant::now());
            let first = tokio::time::timeout(left, next_msg(handle))
                .await
                .expect("timed out");
            let _ = self.frame(first, handle);
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

/// The three figures' medians at one size: a call's result event → frame, a
/// keystroke in the filter → frame, kill → struck-out rows drawn.
struct Figures {
    result: Duration,
    filter: Duration,
    kill: Duration,
}

async fn figures(
    ui: &mut Ui,
    handle: &mut BackendHandle,
    tool: &dyn Fn(usize) -> String,
) -> Figures {
    // A tool call's result: from its event to its frame.
    let mut samples = Vec::new();
    for i in 0..200 {
        handle
            .commands
            .send(UiCommand::CallTool {
                name: tool(i),
                arguments: json!({"key": "apple"}),
            })
            .expect("send");
        loop {
            // A fast result is drained with the events before it, into
            // the same frame: the frame that applies it is the one timed.
            let msg = next_msg(handle).await;
            let t0 = Instant::now();
            if ui.frame(msg, handle) {
                samples.push(t0.elapsed());
                break;
            }
        }
    }
    let result = median(samples);

    eprintln!("  results measured");
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
    let filter = median(samples);

    // Kill demo_alpha from the side panel: until its rows are drawn struck out
    // (while zbig's rows, if connected, stay).
    let mut samples = Vec::new();
    for _ in 0..10 {
        ui.state.struck.clear();
        ui.state.struck_gen += 1;
        let t0 = Instant::now();
        handle
            .commands
            .send(UiCommand::KillServer("demo_alpha".into()))
            .expect("send");
        ui.until(handle, |ui| {
            !ui.state.struck.is_empty() && screen(&ui.terminal).contains("demo_alpha/lookup")
        })
        .await;
        samples.push(t0.elapsed());
        // The views say it is gone before it is connected again (a stale
        // view must not pass for the new connection).
        let alpha = |ready: bool| {
            move |ui: &Ui| {
                ui.state.servers.iter().any(|s| {
                    s.alias == "demo_alpha"
                        && (s.state == AliasStatus::Ready && s.exposed == 5) == ready
                })
            }
        };
        ui.until(handle, alpha(false)).await;
        handle
            .commands
            .send(UiCommand::Connect("demo_alpha".into()))
            .expect("send");
        ui.until(handle, alpha(true)).await;
    }
    Figures {
        result,
        filter,
        kill: median(samples),
    }
}

/// Each figure with demo_alpha's 5 tools alone (the baseline), then with
/// zbig's 10,000 connected too, in the same run: the ratio is what scale costs.
async fn with_ten_thousand_tools() {
    // A config file of its own: the pins' lock file goes beside it.
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("config.toml");
    std::fs::write(&path, big_config()).expect("config");
    let config = config::parse(&big_config(), ConfigSource::File(path)).expect("config");
    let mut handle = backend::spawn(config, SessionOptions::default()).expect("backend");
    let mut ui = Ui::new();
    ui.state.focus = Focus::Registry;
    ui.state.registry_all = true;
    let connected =
        |n: usize| move |ui: &Ui| ui.state.servers.iter().map(|s| s.exposed).sum::<usize>() == n;
    handle
        .commands
        .send(UiCommand::Connect("demo_alpha".into()))
        .expect("send");
    eprintln!("connecting demo_alpha (5 tools)…");
    ui.until(&mut handle, connected(5)).await;
    eprintln!("measuring with 5 tools…");
    let small = figures(&mut ui, &mut handle, &|_| "mcp__demo_alpha__lookup".into()).await;
    handle
        .commands
        .send(UiCommand::Connect("zbig".into()))
        .expect("send");
    eprintln!("connecting zbig ({TOOLS} tools)…");
    ui.until(&mut handle, connected(TOOLS + 5)).await;
    eprintln!("measuring with {} tools…", TOOLS + 5);
    let big = figures(&mut ui, &mut handle, &|i| {
        format!("mcp__zbig__tool_{:05}", i % TOOLS)
    })
    .await;
    println!(
        "120×40, the registry showing every server's tools; medians with {} exposed tools vs 5 (demo_alpha alone), same run:",
        TOOLS + 5
    );
    let ratio = |a: Duration, b: Duration| a.as_secs_f64() / b.as_secs_f64().max(1e-9);
    for (what, b, s, target) in [
        (
            "a call's result event → frame drawn (200)",
            big.result,
            small.result,
            "≤ 2 ms",
        ),
        (
            "a keystroke in the filter → frame drawn (100)",
            big.filter,
            small.filter,
            "≤ 5 ms",
        ),
        (
            "kill from the side panel → struck-out rows drawn (10)",
            big.kill,
            small.kill,
            "≤ 20 ms",
        ),
    ] {
        println!(
            "  {what}: {} vs {} — ratio {:.2}  (target {target})",
            ms(b),
            ms(s),
            ratio(b, s)
        );
    }
    for word in ["d", "file-0000"] {
        let (few, many) = (
            completion::keystrokes(&mut ui, 5, word),
            completion::keystrokes(&mut ui, 10_000, word),
        );
        println!(
            "  a keystroke after @{word} → frame drawn (100): 10,000 resources {} vs 5 {} — ratio {:.2}",
            ms(many),
            ms(few),
            ratio(many, few)
        );
    }
    let _ = handle.commands.send(UiCommand::Quit);
    while let Some(event) = handle.events.recv().await {
        if event == BackendEvent::Stopped {
            break;
        }
    }
}

fn main() {
    // Servers run under the real binary's `__shim`, as in the product (its
    // process group is what `K` kills).
    mcp_harness::mcp::process::use_supervisor(std::path::PathBuf::from(BIN));
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    runtime.block_on(with_ten_thousand_tools());
    println!();
    terminal::real_terminal();
}
