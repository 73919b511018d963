//! `demo-server`: small, deterministic MCP servers to try the harness on and to test it against.
//!
//! `alpha` and `beta` are real rmcp servers with the same tool names and different data, so
//! tests can tell which server answered. `hostile` speaks hand-written JSON-RPC that breaks the
//! protocol on purpose, and `sleeper` only exists to be a grandchild the harness must reap.
//! Hidden flags inject faults; they stay out of the user-facing help.

mod faults;
mod handler;
mod hostile;
mod record;
mod taint;
#[cfg(test)]
mod tests;
mod tools;
mod toolsets;

use std::{io::Write, net::SocketAddr, path::PathBuf, sync::Arc, sync::OnceLock, time::Duration};

use anyhow::Context;
use rmcp::{
    ServiceExt,
    service::ServerInitializeError,
    transport::streamable_http_server::{
        StreamableHttpServerConfig, StreamableHttpService, session::local::LocalSessionManager,
    },
};
use tokio::signal::unix::{SignalKind, signal};
use tokio_util::sync::CancellationToken;

pub use faults::Fault;
pub use hostile::Scenario;
pub use toolsets::Toolset;

use faults::Faults;
use record::Recorder;
use tools::{DemoHandler, Flavor};

/// Arguments of the `demo-server` subcommand.
#[derive(clap::Args, Debug, Clone)]
pub struct DemoServerArgs {
    /// Which demo server to run.
    #[arg(value_enum, value_name = "NAME")]
    pub name: DemoName,

    /// Serve Streamable HTTP at http://ADDR/mcp (loopback only, e.g. 127.0.0.1:0) instead of stdio.
    #[arg(long, value_name = "ADDR")]
    pub http: Option<SocketAddr>,

    /// Test only: inject a fault (repeatable).
    #[arg(long = "fault", value_name = "SPEC", hide = true, value_parser = Fault::parse)]
    pub faults: Vec<Fault>,

    /// Test only: append every tools/call and notifications/cancelled received to FILE (JSON lines).
    #[arg(long, value_name = "FILE", hide = true)]
    pub record: Option<PathBuf>,

    /// Test only: ignored; marks the command line so tests can find leaked processes.
    #[arg(long, value_name = "TEXT", hide = true)]
    pub tag: Option<String>,

    /// Test only: publish N generated tools instead of the normal ones.
    #[arg(long, value_name = "N", hide = true, conflicts_with = "toolset")]
    pub tools: Option<usize>,

    /// Test only: paginate tools/list, N tools per page.
    #[arg(long, value_name = "N", hide = true, value_parser = clap::value_parser!(u64).range(1..))]
    pub page_size: Option<u64>,

    /// Test only: with --tools, give every generated tool a different schema.
    #[arg(long, hide = true, requires = "tools")]
    pub distinct_schemas: bool,

    /// Test only: publish a named, deliberately awkward tool set.
    #[arg(long, value_enum, value_name = "NAME", hide = true)]
    pub toolset: Option<Toolset>,

    /// Test only: the protocol violation `hostile` commits.
    #[arg(long, value_enum, value_name = "NAME", hide = true)]
    pub scenario: Option<Scenario>,

    /// Test only: `sleeper` calls setsid() first, escaping its parent's process group.
    #[arg(long, hide = true)]
    pub setsid: bool,
}

/// The demo servers. `hostile` and `sleeper` are test fixtures, hidden from help.
#[derive(clap::ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum DemoName {
    /// Fruit → colour table (server name demo-alpha).
    Alpha,
    /// City → country table (server name demo-beta).
    Beta,
    #[value(hide = true)]
    Hostile,
    #[value(hide = true)]
    Sleeper,
}

/// Runs the selected demo server until its client goes away (or, for HTTP, until a signal).
pub async fn run(args: DemoServerArgs) -> anyhow::Result<()> {
    match args.name {
        DemoName::Sleeper => sleeper(args.setsid).await,
        DemoName::Hostile => {
            init_log("demo-hostile", false);
            anyhow::ensure!(args.http.is_none(), "`hostile` only speaks stdio");
            let scenario = args
                .scenario
                .context("`demo-server hostile` needs --scenario")?;
            hostile::run(scenario, Faults::from_specs(&args.faults).escapes).await
        }
        DemoName::Alpha => serve_demo(Flavor::Alpha, args).await,
        DemoName::Beta => serve_demo(Flavor::Beta, args).await,
    }
}

async fn serve_demo(flavor: Flavor, args: DemoServerArgs) -> anyhow::Result<()> {
    let faults = Faults::from_specs(&args.faults);
    init_log(flavor.server_name(), faults.escapes);
    let tool_set = toolsets::build(
        flavor,
        args.toolset,
        args.tools,
        args.distinct_schemas,
        faults.escapes,
        faults.hidden_text,
    );
    let recorder = match &args.record {
        Some(path) => Some(Recorder::open(path)?),
        None => None,
    };
    let page_size = match args.page_size {
        Some(n) => Some(usize::try_from(n).context("--page-size is too large")?),
        None => None,
    };
    let handler = DemoHandler::new(flavor, tool_set, page_size, faults.clone(), recorder);
    faults::start_background(&faults, args.tag.as_deref())?;
    match args.http {
        Some(addr) => serve_http(handler, addr, faults.ignore_term).await,
        None => serve_stdio(handler, &faults).await,
    }
}

async fn serve_stdio(handler: DemoHandler, faults: &Faults) -> anyhow::Result<()> {
    if faults.stdout_noise {
        faults::write_stdout_noise().context("writing stdout noise")?;
    }
    log(format_args!("ready on stdio (pid {})", std::process::id()));
    // stdio_pipes: non-blocking when stdin/stdout are pipes (as under a harness), so shutting
    // the runtime down never waits on a blocked stdin read.
    match handler.serve(rmcp::transport::stdio_pipes()).await {
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

async fn serve_http(
    handler: DemoHandler,
    addr: SocketAddr,
    ignore_term: bool,
) -> anyhow::Result<()> {
    anyhow::ensure!(
        addr.ip().is_loopback(),
        "--http only serves on loopback addresses, not {addr}"
    );
    let ct = CancellationToken::new();
    let config = StreamableHttpServerConfig::default().with_cancellation_token(ct.child_token());
    let service = StreamableHttpService::new(
        move || Ok(handler.clone()),
        Arc::new(LocalSessionManager::default()),
        config,
    );
    let router = axum::Router::new().nest_service("/mcp", service);
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .with_context(|| format!("binding {addr}"))?;
    let local = listener.local_addr()?;
    // Tests read this exact line to learn the port.
    let mut stdout = std::io::stdout().lock();
    writeln!(stdout, "listening on http://{local}/mcp")?;
    stdout.flush()?;
    drop(stdout);
    log(format_args!(
        "ready on http://{local}/mcp (pid {})",
        std::process::id()
    ));

    let shutdown = {
        let ct = ct.clone();
        async move {
            wait_for_stop_signal(ignore_term).await;
            ct.cancel();
        }
    };
    let serve = axum::serve(listener, router).with_graceful_shutdown(shutdown);
    // Open SSE streams can hold a graceful shutdown open; give them a moment, not forever.
    let deadline = async {
        ct.cancelled().await;
        tokio::time::sleep(Duration::from_secs(2)).await;
    };
    tokio::select! {
        result = serve => result.context("HTTP server failed")?,
        () = deadline => log("shutdown: gave up waiting for open connections"),
    }
    log("stopped");
    Ok(())
}

/// Resolves on SIGTERM or SIGINT; never, under the `ignore-term` fault (which installs its own
/// handlers that swallow them).
async fn wait_for_stop_signal(ignore_term: bool) {
    if ignore_term {
        return std::future::pending().await;
    }
    let (mut term, mut int) = match (
        signal(SignalKind::terminate()),
        signal(SignalKind::interrupt()),
    ) {
        (Ok(term), Ok(int)) => (term, int),
        (Err(error), _) | (_, Err(error)) => {
            log(format_args!(
                "cannot watch signals ({error}); running until killed"
            ));
            return std::future::pending().await;
        }
    };
    tokio::select! {
        _ = term.recv() => log("SIGTERM: shutting down"),
        _ = int.recv() => log("SIGINT: shutting down"),
    }
}

/// A grandchild fixture: does nothing until killed. With `--setsid` it leaves its parent's
/// process group first, like a daemonizing helper would.
async fn sleeper(setsid: bool) -> anyhow::Result<()> {
    init_log("demo-sleeper", false);
    if setsid {
        nix::unistd::setsid().context("setsid")?;
    }
    log(format_args!("sleeping (pid {})", std::process::id()));
    std::future::pending::<()>().await;
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
fn log_prefix() -> &'static str {
    LOG_STYLE
        .get()
        .map_or("demo-server:", |style| style.prefix.as_str())
}
