//! Hot-path micro-benchmarks (divan): taking a snapshot, resolving an exposed
//! name, validating typical arguments, building the tool list of a model request
//! with 1,000 exposed tools, and rendering a frame of the main screen with 10,000
//! tools and 10,000 conversation cells.
//!
//! `cargo bench --bench hot_path`

use std::path::PathBuf;
use std::sync::{Arc, OnceLock};
use std::time::Instant;

use divan::{Bencher, black_box};
use mcp_harness::agent::lead::LeadTools;
use mcp_harness::agent::subagent::{AgentSettings, Crew};
use mcp_harness::agent::toolbox::ToolBox;
use mcp_harness::config::{self, ConfigSource};
use mcp_harness::mcp::{EventSink, FlagApprover, Hub, Vars, schema};
use mcp_harness::protocol::{OriginView, ServerView, ToolView};
use mcp_harness::ui::panes;
use mcp_harness::ui::state::{AppState, CallStatus, Cell, Focus, ToolCallCell};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use serde_json::json;

const BIN: &str = env!("CARGO_BIN_EXE_mcp-harness");

fn main() {
    divan::main();
}

struct World {
    runtime: tokio::runtime::Runtime,
    hub: Hub,
    tools: LeadTools,
}

/// A hub with one connected demo server publishing 1,000 tools (once per run).
fn world() -> &'static World {
    static WORLD: OnceLock<World> = OnceLock::new();
    WORLD.get_or_init(|| {
        let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("runtime");
        let policy: String = (0..1000).map(|i| format!("tool_{i:05} = \"allow\"\n")).collect();
        let text = format!(
            "[limits]\nmax_tools = 2000\n[servers.big]\ncommand = \"{BIN}\"\nargs = [\"demo-server\", \"alpha\", \"--tools\", \"1000\", \"--page-size\", \"100\"]\n[servers.big.tools]\n{policy}"
        );
        let config = config::parse(&text, ConfigSource::Embedded).expect("config");
        let hub = Hub::new(config.servers, config.limits, Vars::new(PathBuf::from(BIN)), Vec::new(), EventSink::discard());
        runtime.block_on(hub.connect("big")).expect("connect").outcome.expect("exposed");
        let model = mcp_harness::agent::model::select::select(None, &|_| None).expect("scripted").provider;
        let workspace = mcp_harness::agent::tools::readonly::Workspace::new(&std::env::temp_dir()).expect("workspace");
        let settings = AgentSettings { max_tokens: 1024, context_tokens: 100_000, max_steps: 10 };
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
        World { runtime, hub, tools }
    })
}

#[divan::bench]
fn take_snapshot(bencher: Bencher) {
    let hub = &world().hub;
    bencher.bench(|| black_box(hub.snapshot()));
}

#[divan::bench]
fn resolve_exposed_name(bencher: Bencher) {
    let snapshot = world().hub.snapshot();
    bencher.bench(|| black_box(snapshot.resolve(black_box("mcp__big__tool_00500"))).is_some());
}

#[divan::bench]
fn validate_typical_arguments(bencher: Bencher) {
    let snapshot = world().hub.snapshot();
    let tool = snapshot.resolve("mcp__big__tool_00500").expect("tool");
    let arguments = json!({"key": "apple", "count": 3});
    bencher
        .bench(|| black_box(schema::validate(&tool.validator, black_box(&arguments))).is_empty());
}

#[divan::bench]
fn tool_list_for_a_request_1000_tools(bencher: Bencher) {
    let w = world();
    let snapshot = w.hub.snapshot();
    bencher.bench(|| black_box(w.tools.definitions(&snapshot)).len());
}

/// The main screen at 120×40 with 10,000 tools in the registry and 10,000 cells.
#[divan::bench]
fn render_main_screen_10k_tools_10k_cells(bencher: Bencher) {
    let _ = &world().runtime;
    let mut state = big_state(10_000, 10_000);
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
    let published = (0..tools)
        .map(|i| ToolView {
            name: format!("tool_{i:05}"),
            title: None,
            description: Some(format!("Generated tool {i}.")),
            annotations: None,
            input_schema: json!({"type": "object", "properties": {"key": {"type": "string"}}}),
            exposed_as: Some(format!("mcp__big__tool_{i:05}")),
            effect: Some("allow".into()),
            why_not: None,
        })
        .collect();
    state.servers = vec![ServerView {
        alias: "big".into(),
        state: "ready".into(),
        detail: None,
        code: None,
        transport: "stdio: big".into(),
        exposed: tools,
        published,
        policy_missing: Vec::new(),
        policy_extra: Vec::new(),
        health: None,
    }];
    state.registry_all = true;
    state.selected_tool = tools / 2;
    state.cells = (0..cells)
        .map(|i| match i % 3 {
            0 => Cell::User(format!(
                "question {i}: what does tool {i} return for apple?"
            )),
            1 => Cell::Assistant {
                agent: "lead".into(),
                text: format!("Calling tool {i} to find out. ").repeat(4),
                streaming: false,
            },
            _ => Cell::ToolCall(Box::new(ToolCallCell {
                id: format!("c{i}"),
                agent: "lead".into(),
                name: format!("mcp__big__tool_{:05}", i % tools.max(1)),
                origin: OriginView::Mcp {
                    alias: "big".into(),
                    remote_name: format!("tool_{i:05}"),
                },
                effect: Some("allow".into()),
                arguments: json!({"key": "apple"}),
                status: CallStatus::Ok { elapsed_ms: 3 },
                result: Some("apple = red\n".repeat(5)),
                server_output: None,
                progress: None,
                expanded: false,
            })),
        })
        .collect();
    state.focus = Focus::Registry;
    state
}
