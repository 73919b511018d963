//! The command line: the TUI (default) and the headless commands. Each command is
//! thin: parse → MCP layer → print.

mod bench;
mod call;
mod call_progress;
mod check;
mod import;
pub mod json;
mod login;
mod offerings;
mod out;
mod pin;
mod policy;
mod progress;
mod render;
mod run;
mod serve;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

use crate::config::{self, Config};
use crate::interrupt::{interrupted, interruptible};
use crate::mcp::{EventSink, Hub, HubBuilder, Vars};
use mcp_harness_demo::{DemoServerArgs, FixtureCommand};

/// Exit statuses shared by every command.
pub mod exit {
    /// Something the user asked for failed (a server was rejected, a call errored).
    pub const FAILURE: u8 = 1;
    /// The command line or the config is wrong.
    pub const USAGE: u8 = 2;
}

#[derive(Debug, Parser)]
#[command(
    name = "mcp-harness",
    version,
    about = "A terminal agent harness for MCP servers, with local policy as the hard boundary"
)]
pub struct Cli {
    /// Config file [default: ~/.config/mcp-harness/config.toml if it exists, else the embedded demo config]
    #[arg(long, global = true, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// TUI: continue an earlier session (the newest one, or ID); MCP connections are not restored
    #[arg(long, value_name = "ID", num_args = 0..=1, default_missing_value = "")]
    pub resume: Option<String>,
    /// TUI: serve MCP at http://ADDR/mcp too, as the control room where you approve outside clients' calls [default ADDR: [serve] listen]
    #[arg(long, value_name = "ADDR", num_args = 0..=1, default_missing_value = "")]
    pub serve: Option<String>,
    /// Trust on first use in this config's lock file even for aliases pinned in another lock the harness knows (the default config's): for a copied config you mean to pin afresh
    #[arg(long, global = true)]
    pub accept_new_lock: bool,
    #[command(subcommand)]
    pub command: Option<Command>,
}

/// `--accept-new-lock`, set once from the command line before any config is loaded.
static ACCEPT_NEW_LOCK: std::sync::OnceLock<bool> = std::sync::OnceLock::new();

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Connect every configured server and report, per alias, what it publishes and what is exposed
    Check(check::CheckArgs),
    /// Call one tool through the full pipeline (schema check, policy, timeout, error envelope)
    Call(call::CallArgs),
    /// Load-test one tool through the full pipeline: latency percentiles, calls/s, errors by code
    Bench(bench::BenchArgs),
    /// Print the [servers.ALIAS.tools] policy block for what the server publishes (every tool "confirm")
    Policy(policy::PolicyArgs),
    /// Sign in to an HTTP server with OAuth (prints the URL; opens a browser when there is one)
    Login(login::LoginArgs),
    /// Sign out of an HTTP server: revoke its token where the server supports it, and delete it
    Logout(login::LogoutArgs),
    /// Accept what the server publishes now: pin its tools' definitions in mcp-harness.lock (prints the diff)
    Pin(pin::PinArgs),
    /// List a connected server's resources and templates, or read one (--read URI)
    Resources(offerings::ResourcesArgs),
    /// List a server's prompts, or get one's messages (--get NAME key=value …)
    Prompts(offerings::PromptsArgs),
    /// Import servers configured in another host (Claude Desktop, Claude Code, Cursor, VS Code, Codex, Gemini CLI); secrets are never copied
    Import(import::ImportArgs),
    /// Run the Lead agent headless on one prompt (events as text, or JSON lines)
    Run(run::RunArgs),
    /// The gateway: offer the exposed tools to outside hosts (Claude Code, Cursor, …) over Streamable HTTP, every call through the local policy
    Serve(serve::ServeArgs),
    /// Run a demo MCP server (stdio by default)
    DemoServer(Box<DemoServerArgs>),
    /// The test fixtures' commands (test builds only; none in the installed binary)
    #[command(flatten)]
    Fixture(FixtureCommand),
}

/// Runs a headless command (or the TUI) on the current runtime, then flushes
/// telemetry, when it is on.
pub async fn run(cli: Cli) -> ExitCode {
    let code = dispatch(cli).await;
    if let Some(delivery) = crate::telemetry::flush().await {
        report_delivery(&delivery);
    }
    code
}

/// Says on stderr (after the command's own output) what telemetry could not deliver.
fn report_delivery(d: &crate::telemetry::Delivery) {
    if d.dropped() == 0 {
        return;
    }
    let mut why = Vec::new();
    if d.failed > 0 {
        let error = d.last_error.as_deref().unwrap_or("export failed");
        why.push(crate::sanitize::inert_line(error, 300));
    }
    if d.unsent() > 0 {
        why.push(format!(
            "{} dropped unsent (more than {} waiting, or no time left at exit)",
            d.unsent(),
            crate::telemetry::QUEUE
        ));
    }
    let why = if why.is_empty() {
        String::new()
    } else {
        format!(": {}", why.join("; "))
    };
    eprintln!(
        "mcp-harness: telemetry: {} of {} spans and {} of {} events did not reach {}{why}",
        d.spans - d.spans_sent.min(d.spans),
        d.spans,
        d.events - d.events_sent.min(d.events),
        d.events,
        d.endpoint
    );
}

async fn dispatch(cli: Cli) -> ExitCode {
    let _ = ACCEPT_NEW_LOCK.set(cli.accept_new_lock);
    match cli.command {
        Some(Command::Check(args)) => check::run(cli.config, args).await,
        Some(Command::Call(args)) => call::run(cli.config, args).await,
        Some(Command::Bench(args)) => bench::run(cli.config, args).await,
        Some(Command::Policy(args)) => policy::run(cli.config, args).await,
        Some(Command::Login(args)) => login::login(cli.config, args).await,
        Some(Command::Logout(args)) => login::logout(cli.config, args).await,
        Some(Command::Pin(args)) => pin::run(cli.config, args).await,
        Some(Command::Run(args)) => run::run(cli.config, args).await,
        Some(Command::Serve(args)) => serve::run(cli.config, args).await,
        Some(Command::Import(args)) => import::run(cli.config, args).await,
        Some(Command::Resources(args)) => offerings::resources(cli.config, args).await,
        Some(Command::Prompts(args)) => offerings::prompts(cli.config, args).await,
        Some(Command::Fixture(command)) => mcp_harness_demo::run_fixture(command).await,
        Some(Command::DemoServer(args)) => match mcp_harness_demo::run(*args).await {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("demo-server: {e:#}");
                ExitCode::from(exit::FAILURE)
            }
        },
        None => tui(cli.config, cli.resume, cli.serve).await,
    }
}

/// The full-screen TUI.
async fn tui(config: Option<PathBuf>, resume: Option<String>, serve: Option<String>) -> ExitCode {
    let config = match load_config(config) {
        Ok(c) => c,
        Err(code) => return code,
    };
    // `--serve` alone: the config's `[serve] listen`.
    let serve = match serve.as_deref() {
        None => None,
        Some("") => match config.serve.listen {
            Some(addr) => Some(addr),
            None => {
                eprintln!(
                    "mcp-harness: --serve needs an address (--serve 127.0.0.1:PORT) or [serve] listen in the config"
                );
                return ExitCode::from(exit::USAGE);
            }
        },
        Some(text) => match text.parse::<std::net::SocketAddr>() {
            Ok(addr) if addr.ip().is_loopback() => Some(addr),
            Ok(addr) => {
                eprintln!(
                    "mcp-harness: {}",
                    crate::mcp::gateway::GatewayError::NotLoopback(addr)
                );
                return ExitCode::from(exit::USAGE);
            }
            Err(_) => {
                eprintln!(
                    "mcp-harness: --serve {text}: not an address: give IP:PORT, e.g. 127.0.0.1:8765"
                );
                return ExitCode::from(exit::USAGE);
            }
        },
    };
    let options = crate::session::SessionOptions {
        resume: resume.map(|id| (!id.is_empty()).then_some(id)),
        persist: true,
        workspace: None,
        data_dir: None,
    };
    let backend = match crate::backend::spawn_with(config, options, serve) {
        Ok(b) => b,
        Err(e) => {
            eprintln!("mcp-harness: {e}");
            return ExitCode::from(exit::USAGE);
        }
    };
    let result = crate::ui::run_terminal(crate::ui::Channels {
        commands: backend.commands.clone(),
        events: backend.events,
        views: backend.views,
    })
    .await;
    // Whatever ended the UI, make sure every server is closed before exiting.
    let _ = backend.commands.send(crate::protocol::Command::Quit);
    let ended = tokio::time::timeout(std::time::Duration::from_secs(15), backend.task).await;
    // A panicked backend unwound (closing every server) and closed the UI's
    // channel: say what it was, rather than only that the backend went away.
    if let Ok(Err(e)) = ended
        && e.is_panic()
    {
        let payload = e.into_panic();
        let message = payload
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| payload.downcast_ref::<&str>().copied())
            .unwrap_or("no message");
        eprintln!(
            "mcp-harness: the backend task panicked ({message}); every server was closed, and the log file says where"
        );
        return ExitCode::from(exit::FAILURE);
    }
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("mcp-harness: {e}");
            ExitCode::from(exit::FAILURE)
        }
    }
}

/// The `--args` of `call` and `bench`, or why not (the caller exits with status 2).
fn arguments_json(text: &str) -> Result<serde_json::Value, ExitCode> {
    serde_json::from_str(text).map_err(|e| {
        eprintln!("mcp-harness: --args is not valid JSON: {e}");
        ExitCode::from(exit::USAGE)
    })
}

/// Loads the config (and starts telemetry when it says so), or prints why not
/// (the caller exits with status 2).
fn load_config(explicit: Option<PathBuf>) -> Result<Config, ExitCode> {
    let mut config = config::load(config::locate(explicit.as_deref())).map_err(|e| {
        eprintln!("mcp-harness: {e}");
        ExitCode::from(exit::USAGE)
    })?;
    config.accept_new_lock = ACCEPT_NEW_LOCK.get().copied().unwrap_or(false);
    if let Some(telemetry) = &config.telemetry {
        crate::telemetry::install(telemetry, &Vars::from_process()).map_err(|e| {
            eprintln!("mcp-harness: {e}");
            ExitCode::from(exit::USAGE)
        })?;
    }
    Ok(config)
}

/// A hub for a headless command (nobody listens to its events), with the
/// config's lock file.
fn hub_for(config: &Config) -> Hub {
    hub_builder(config, EventSink::discard()).build()
}

/// [`hub_for`]'s hub, still to be built, whose MCP events also go to `events`.
fn hub_builder(config: &Config, events: EventSink) -> HubBuilder {
    Hub::builder(
        config.servers.clone(),
        config.limits.clone(),
        Vars::from_process(),
        events.observed_by(crate::telemetry::observer()),
    )
    .pin_book(config.pin_book())
    .flows(config.flows)
}
