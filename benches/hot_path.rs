//! Hot-path micro-benchmarks (divan): taking a snapshot, resolving an exposed
//! name, validating typical arguments, building the tool list of a model request,
//! and rendering a frame of the main screen — each at 1,000 and 10,000 tools (and
//! as many conversation cells), to show how the cost grows.
//!
//! `cargo bench --bench hot_path`

#![allow(clippy::unwrap_used, clippy::expect_used)] // a benchmark: a panic is the report

use std::path::PathBuf;
use std::sync::{Arc, OnceLock};
use std::time::Instant;

use divan::{Bencher, black_box};
use mcp_harness::agent::lead::LeadTools;
use mcp_harness::agent::subagent::{AgentSettings, Crew};
use mcp_harness::agent::toolbox::ToolBox;
use mcp_harness::config::{self, ConfigSource};
use mcp_harness::mcp::{EventSink, FlagApprover, Hub, Vars, schema};
use mcp_harness::protocol::{AliasStatus, PolicyEffect, Requester, ServerView, Target, ToolView};
use mcp_harness_tui::ui::panes;
use mcp_harness_tui::ui::state::{AppState, CallStatus, Cell, Focus, ToolCallCell};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use serde_json::json;

const BIN: &str = env!("CARGO_BIN_EXE_mcp-harness");

fn main() {
    divan::main();
}

struct World {
    runtime: tokio::runtime::Runtime,
    /// (exposed tools, the hub, the Lead's tool box over it)
    sizes: Vec<(usize, Hub, LeadTools)>,
}

impl World {
    fn at(&self, tools: usize) -> (&Hub, &LeadTools) {
        let (_, hub, lead) = self
            .sizes
            .iter()
            .find(|(n, _, _)| *n == tools)
            .expect("a size the world was built with");
        (hub, lead)
    }
}

/// Tool counts the scaling benchmarks run at.
const SIZES: [usize; 2] = [1_000, 10_000];

/// Hubs with one connected demo server publishing 1,000 and 10,000 tools (once per run).
fn world() -> &'static World {
    static WORLD: OnceLock<World> = OnceLock::new();
    WORLD.get_or_init(|| {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()
            .expect("runtime");
        let sizes = SIZES
            .iter()
            .map(|&n| {
                let (hub, tools) = runtime.block_on(connected(n));
                (n, hub, tools)
            })
            .collect();
        World { runtime, sizes }
    })
}

async fn connected(n: usize) -> (Hub, LeadTools) {
    // Every tool in every request: these benchmarks measure the full list.
    connected_with(n, 1_000_000).await
}

async fn connected_with(n: usize, max_in_request: usize) -> (Hub, LeadTools) {
    let policy: String = (0..n)
        .map(|i| format!("tool_{i:05} = \"allow\"\n"))
        .collect();
    let text = format!(
        "[limits]\nmax_tools = 20000\nconnect_timeout_ms = 60000\nmax_tools_in_request = {max_in_request}\nmax_tool_tokens_in_request = {}\n[servers.big]\ncommand = \"{BIN}\"\nargs = [\"demo-server\", \"alpha\", \"--tools\", \"{n}\", \"--page-size\", \"100\"]\n[servers.big.tools]\n{policy}",
        max_in_request.max(20_000),
    );
    let config = config::parse(&text, ConfigSource::Embedded).expect("config");
    let hub = Hub::builder(
        config.servers,
        config.limits,
        Vars::new(PathBuf::from(BIN)),
        EventSink::discard(),
    )
    .build();
    hub.connect("big")
        .await
        .expect("connect")
        .outcome
        .expect("exposed");
    let model = mcp_harness::agent::model::select::select(
        None,
        mcp_harness::agent::model::select::Fallback::Demo,
        &|_| None,
    )
    .expect("scripted")
    .provider;
    let workspace = mcp_harness::agent::tools::readonly::Workspace::new(&std::env::temp_dir())
        .expect("workspace");
    let settings = AgentSettings {
        max_tokens: 1024,
        context_tokens: 100_000,
        max_steps: 10,
    };
    let crew = Arc::new(Crew::new(
        model,
        Arc::new(FlagApprover { approve: true }),
        mcp_harness::agent::events::AgentEvents::discard(),
        Arc::new(mcp_harness::agent::runner::NoJournal),
        &Default::default(),
        workspace,
        settings,
        Vec::new(),
    ));
    let tools = LeadTools::new(hub.clone(), crew, &Default::default());
    (hub, tools)
}

/// 2,000 tools, the tool section of one request built with tool search (the
/// default `max_tools_in_request = 64`) and without (every tool).
fn search_world() -> &'static (tokio::runtime::Runtime, [(Hub, LeadTools); 2]) {
    static WORLD: OnceLock<(tokio::runtime::Runtime, [(Hub, LeadTools); 2])> = OnceLock::new();
    WORLD.get_or_init(|| {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()
            .expect("runtime");
        let with = runtime.block_on(connected_with(2_000, 64));
        // A steady state: 64 tools used lately, which the requests carry.
        for i in 0..64 {
            with.1.remember(&format!("mcp__big__tool_{:05}", i * 31));
        }
        let without = runtime.block_on(connected_with(2_000, 1_000_000));
        for (label, (hub, lead)) in [("with tool search", &with), ("without", &without)] {
            let tools = lead.definitions(&hub.snapshot());
            let bytes = serde_json::to_string(&tools).expect("json").len();
            eprintln!(
                "2,000 tools, {label}: {} tools in the request, tool section {bytes} bytes",
                tools.len()
            );
        }
        (runtime, [with, without])
    })
}

#[divan::bench(args = ["with tool search", "without"])]
fn tool_section_at_2000_tools(bencher: Bencher, mode: &str) {
    let (_, worlds) = search_world();
    let (hub, lead) = &worlds[usize::from(mode == "without")];
    let snapshot = hub.snapshot();
    bencher.bench(|| black_box(lead.definitions(&snapshot)).len());
}

#[divan::bench(args = SIZES)]
fn take_snapshot(bencher: Bencher, tools: usize) {
    let (hub, _) = world().at(tools);
    bencher.bench(|| black_box(hub.snapshot()));
}

#[divan::bench(args = SIZES)]
fn resolve_exposed_name(bencher: Bencher, tools: usize) {
    let snapshot = world().at(tools).0.snapshot();
    bencher.bench(|| black_box(snapshot.resolve(black_box("mcp__big__tool_00500"))).is_some());
}

#[divan::bench]
fn validate_typical_arguments(bencher: Bencher) {
    let snapshot = world().at(1_000).0.snapshot();
    let tool = snapshot.resolve("mcp__big__tool_00500").expect("tool");
    let arguments = json!({"key": "apple", "count": 3});
    bencher
        .bench(|| black_box(schema::validate(&tool.validator, black_box(&arguments))).is_empty());
}

/// The tool list of one model request: every exposed tool (plus the built-ins).
#[divan::bench(args = SIZES)]
fn tool_list_for_a_request(bencher: Bencher, tools: usize) {
    let (hub, lead) = world().at(tools);
    let snapshot = hub.snapshot();
    bencher.bench(|| black_box(lead.definitions(&snapshot)).len());
}

/// The main screen at 120×40 with N tools in the registry and N conversation cells.
#[divan::bench(args = SIZES)]
fn render_main_screen_tools_and_cells(bencher: Bencher, n: usize) {
    let _ = &world().runtime;
    let mut state = big_state(n, n);
    let mut terminal = Terminal::new(TestBackend::new(120, 40)).expect("terminal");
    bencher.bench_local(|| {
        terminal
            .draw(|f| panes::draw(f, black_box(&state)))
            .expect("draw");
    });
    state.focus = Focus::Input;
}

fn big_state(tools: usize, cells: usize) -> AppState {
    let now = Instant::now();
    let mut state = AppState::new(now);
    let schema = Arc::new(json!({"type": "object", "properties": {"key": {"type": "string"}}}));
    let published: Arc<[ToolView]> = (0..tools)
        .map(|i| ToolView {
            name: format!("tool_{i:05}"),
            title: None,
            description: Some(format!("Generated tool {i}.")),
            annotations: None,
            input_schema: Arc::clone(&schema),
            exposed_as: Some(format!("mcp__big__tool_{i:05}")),
            effect: Some(PolicyEffect::Allow),
            why_not: None,
            check: None,
            pin: mcp_harness::protocol::PinStatus::Pinned,
            hidden_text: false,
            suspicious: Vec::new(),
        })
        .collect();
    state.servers = Arc::from(vec![ServerView {
        alias: "big".into(),
        state: AliasStatus::Ready,
        detail: None,
        code: None,
        transport: "stdio: big".into(),
        exposed: tools,
        published,
        policy_missing: Vec::new(),
        policy_extra: Vec::new(),
        sign_in: Default::default(),
        pin_changes: Arc::from(Vec::new()),
        pins_at: String::new(),
        pins_refused: false,
        health: None,
        server_output: Vec::new(),
        config_changed: false,
        insecure_http: false,
    }]);
    state.registry_all = true;
    state.selected_tool = tools / 2;
    for cell in (0..cells).map(|i| match i % 3 {
        0 => Cell::User(format!(
            "question {i}: what does tool {i} return for apple?"
        )),
        1 => Cell::Assistant {
            agent: Requester::Lead,
            text: format!("Calling tool {i} to find out. ").repeat(4),
            streaming: false,
        },
        _ => Cell::ToolCall(Box::new(ToolCallCell {
            id: format!("c{i}").into(),
            by: Requester::Lead,
            name: format!("mcp__big__tool_{:05}", i % tools.max(1)),
            target: Target::Mcp {
                alias: "big".into(),
                remote_name: format!("tool_{i:05}"),
            },
            effect: Some(PolicyEffect::Allow),
            arguments: json!({"key": "apple"}),
            status: CallStatus::Ok { elapsed_ms: 3 },
            result: Some("apple = red\n".repeat(5)),
            server_output: None,
            progress: None,
            task: None,
            dropped_nulls: Vec::new(),
            expanded: false,
            decided: Some(mcp_harness::protocol::Decided::AllowedByPolicy),
            flow: None,
        })),
    }) {
        state.cells.push(cell);
    }
    state.focus = Focus::Registry;
    state
}

/// A keystroke in the registry's filter and the frame after it, with N tools
/// (typing one more character, then taking it back: two keystrokes).
#[divan::bench(args = SIZES)]
fn registry_filter_keystroke_and_frame(bencher: Bencher, n: usize) {
    use crossterm::event::{KeyCode, KeyEvent};
    use mcp_harness_tui::ui::msg::Msg;
    use mcp_harness_tui::ui::update::update;
    let mut state = big_state(n, 0);
    state.area = ratatui::layout::Rect::new(0, 0, 120, 40);
    let mut terminal = Terminal::new(TestBackend::new(120, 40)).expect("terminal");
    let key = |code| Msg::Key(KeyEvent::from(code));
    update(&mut state, key(KeyCode::Char('/')));
    for c in "tool_0".chars() {
        update(&mut state, key(KeyCode::Char(c)));
    }
    bencher.bench_local(|| {
        update(&mut state, key(KeyCode::Char('9')));
        terminal.draw(|f| panes::draw(f, &state)).expect("draw");
        update(&mut state, key(KeyCode::Backspace));
        terminal.draw(|f| panes::draw(f, &state)).expect("draw");
    });
}
