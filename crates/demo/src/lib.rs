//! `demo-server`: small, deterministic MCP servers to try the harness on and to test it against.
//!
//! `alpha` and `beta` are real rmcp servers with the same tool names and different data, so
//! tests can tell which server answered. `hostile` speaks hand-written JSON-RPC that breaks the
//! protocol on purpose, and `sleeper` only exists to be a grandchild the harness must reap.
//! Hidden flags inject faults; they stay out of the user-facing help.
//!
//! Everything the tests need beyond the two demo servers is behind the
//! `test-fixtures` feature: faults, recording, the hostile servers and the
//! client side of the conformance suite ([`FixtureCommand`]).

#[cfg(feature = "test-fixtures")]
mod conformance;
mod extras;
mod faults;
#[cfg(feature = "test-fixtures")]
mod fixtures;
mod handler;
#[cfg(feature = "test-fixtures")]
mod hostile;
#[cfg(feature = "test-fixtures")]
mod hostile_eras;
mod http;
mod kind;
// Only the test fixtures turn the gate on; the installed demo never does.
#[cfg_attr(not(feature = "test-fixtures"), allow(dead_code))]
mod oauth_gate;
mod offerings;
mod record;
mod service;
mod taint;
mod tasks;
#[cfg(test)]
mod tests;
mod tools;
mod toolsets;
mod ws;

use std::process::ExitCode;
use std::{net::SocketAddr, sync::OnceLock};

use anyhow::Context;
use rmcp::{ServiceExt, service::ServerInitializeError};

#[cfg(feature = "test-fixtures")]
pub use faults::Fault;
#[cfg(feature = "test-fixtures")]
pub use hostile::Scenario;
pub use kind::DemoProtocol;
pub use toolsets::Toolset;

use faults::Faults;
use kind::Flavor;
use record::Recorder;
use service::DemoService;
use tools::DemoHandler;

/// Arguments of the `demo-server` subcommand.
#[derive(clap::Args, Debug, Clone)]
pub struct DemoServerArgs {
    /// Which demo server to run.
    #[arg(value_enum, value_name = "NAME")]
    pub name: DemoName,

    /// Serve Streamable HTTP at http://ADDR/mcp (loopback only, e.g. 127.0.0.1:0) instead of stdio.
    #[arg(long, value_name = "ADDR")]
    pub http: Option<SocketAddr>,

    /// Serve WebSocket at ws://ADDR/mcp, subprotocol `mcp` (loopback only, e.g. 127.0.0.1:0) instead of stdio
    /// (with --http too: one server on both, each printing its `listening on` line).
    #[arg(long, value_name = "ADDR")]
    pub ws: Option<SocketAddr>,

    /// Which protocol revisions to speak: both (2026-07-28 and the handshake
    /// revisions), only 2026-07-28 (refuses `initialize`), or only 2025-11-25
    /// and older (no `server/discover`).
    #[arg(long, value_enum, value_name = "REVISION", default_value_t = DemoProtocol::Both)]
    pub protocol: DemoProtocol,

    /// Also publish `research` (runs as a task) and `guarded_set` (asks the
    /// operator to confirm before it stores a value).
    #[arg(long)]
    pub extras: bool,

    /// Faults, recording, generated tool sets, the OAuth gate: test builds only.
    #[cfg(feature = "test-fixtures")]
    #[command(flatten)]
    pub fixtures: fixtures::FixtureArgs,
}

/// The demo servers. `hostile` and `sleeper` are test fixtures: hidden from
/// help, and only in test builds.
#[derive(clap::ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum DemoName {
    /// Fruit → colour table (server name demo-alpha).
    Alpha,
    /// City → country table (server name demo-beta).
    Beta,
    #[cfg(feature = "test-fixtures")]
    #[value(hide = true)]
    Hostile,
    #[cfg(feature = "test-fixtures")]
    #[value(hide = true)]
    Sleeper,
    /// What the server side of the official conformance suite asks for.
    #[cfg(feature = "test-fixtures")]
    #[value(hide = true)]
    Conformance,
}

/// The binary's commands that only test builds have (flattened into its
/// subcommands); without `test-fixtures` there are none.
#[derive(clap::Subcommand, Debug)]
pub enum FixtureCommand {
    /// The client side of the official MCP conformance suite (scenario from
    /// MCP_CONFORMANCE_SCENARIO)
    #[cfg(feature = "test-fixtures")]
    #[command(hide = true)]
    ConformanceClient(conformance::ConformanceArgs),
}

/// Runs a fixture command.
pub async fn run_fixture(command: FixtureCommand) -> ExitCode {
    match command {
        #[cfg(feature = "test-fixtures")]
        FixtureCommand::ConformanceClient(args) => conformance::run(args).await,
    }
}

/// What an alpha or beta server runs with.
struct Setup {
    tool_set: toolsets::ToolSet,
    page_size: Option<usize>,
    faults: Faults,
    recorder: Option<Recorder>,
    /// OAuth bearer tokens required over HTTP (a test fixture).
    gate: Option<oauth_gate::Gate>,
}

impl Setup {
    /// The demo as users get it: the standard tools, no fault, no recording.
    #[cfg(not(feature = "test-fixtures"))]
    fn plain(flavor: Flavor) -> Self {
        init_log(flavor.server_name(), false);
        Self {
            tool_set: toolsets::build(flavor, None, None, false, false, false),
            page_size: None,
            faults: Faults::default(),
            recorder: None,
            gate: None,
        }
    }
}

/// Runs the selected demo server until its client goes away (or, for HTTP, until a signal).
pub async fn run(args: DemoServerArgs) -> anyhow::Result<()> {
    match args.name {
        #[cfg(feature = "test-fixtures")]
        DemoName::Sleeper => fixtures::sleeper(args.fixtures.setsid).await,
        #[cfg(feature = "test-fixtures")]
        DemoName::Hostile => fixtures::hostile(&args.fixtures, args.http.is_some()).await,
        #[cfg(feature = "test-fixtures")]
        DemoName::Conformance => conformance::serve_upstream(args.http, args.protocol).await,
        DemoName::Alpha => serve_demo(Flavor::Alpha, args).await,
        DemoName::Beta => serve_demo(Flavor::Beta, args).await,
    }
}

async fn serve_demo(flavor: Flavor, args: DemoServerArgs) -> anyhow::Result<()> {
    #[cfg(feature = "test-fixtures")]
    let setup = fixtures::setup(flavor, &args.fixtures)?;
    #[cfg(not(feature = "test-fixtures"))]
    let setup = Setup::plain(flavor);
    let Setup {
        tool_set,
        page_size,
        faults,
        recorder,
        gate,
    } = setup;
    let handler = DemoHandler::new(
        flavor,
        tool_set,
        page_size,
        faults.clone(),
        recorder,
        args.protocol,
        args.extras,
    );
    match (args.http, args.ws) {
        (Some(http), Some(ws)) => {
            let ws = ws::serve(handler.clone(), ws, faults.clone());
            tokio::try_join!(http::serve(handler, http, faults.ignore_term, gate), ws).map(|_| ())
        }
        (Some(addr), None) => http::serve(handler, addr, faults.ignore_term, gate).await,
        (None, Some(addr)) => ws::serve(handler, addr, faults).await,
        (None, None) => serve_stdio(handler, &faults).await,
    }
}

async fn serve_stdio(handler: DemoHandler, faults: &Faults) -> anyhow::Result<()> {
    if faults.stdout_noise {
        faults::write_stdout_noise().context("writing stdout noise")?;
    }
    log(format_args!("ready on stdio (pid {})", std::process::id()));
    // stdio_pipes: non-blocking when stdin/stdout are pipes (as under a harness), so shutting
    // the runtime down never waits on a blocked stdin read.
    match DemoService(handler)
        .serve(rmcp::transport::stdio_pipes())
        .await
    {
        Ok(service) => {
            let reason = service.waiting().await;
            log(format_args!("session ended ({reason:?})"));
        }
        Err(ServerInitializeError::ConnectionClosed(_)) => {
            log("stdin closed before initialize");
        }
        Err(error) => return Err(error).context("MCP handshake failed"),
    }
    if faults.ignore_term {
        log("ignore-term: staying alive after stdin EOF");
        std::future::pending::<()>().await;
    }
    Ok(())
}

/// Stderr log prefix, plus the escape payload under the `escapes` fault.
struct LogStyle {
    prefix: String,
    suffix: &'static str,
}

static LOG_STYLE: OnceLock<LogStyle> = OnceLock::new();

fn init_log(server_name: &str, escapes: bool) {
    let style = LogStyle {
        prefix: format!("{server_name}:"),
        suffix: if escapes { faults::ESCAPES } else { "" },
    };
    // A second init (never happens in one process) keeps the first style.
    let _ = LOG_STYLE.set(style);
}

/// One log line on stderr; stdout belongs to the MCP channel. Write errors are
/// ignored (`eprintln!` would panic once the reader is gone), so a server whose
/// harness died keeps running: the harness, not a broken pipe, must end it.
fn log(message: impl std::fmt::Display) {
    use std::io::Write as _;
    let mut err = std::io::stderr().lock();
    let _ = match LOG_STYLE.get() {
        Some(style) => writeln!(err, "{} {message}{}", style.prefix, style.suffix),
        None => writeln!(err, "demo-server: {message}"),
    };
}

/// The prefix alone, for writers that format their own lines (the stderr flood).
#[cfg_attr(not(feature = "test-fixtures"), allow(dead_code))]
fn log_prefix() -> &'static str {
    LOG_STYLE
        .get()
        .map_or("demo-server:", |style| style.prefix.as_str())
}
