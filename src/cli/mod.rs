//! The command line: the TUI (default) and the headless commands. Each command is
//! thin: parse → MCP layer → print.

mod call;
mod call_progress;
mod check;
pub mod conformance;
mod import;
pub mod json;
mod out;
mod policy;
mod render;
mod run;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

use crate::config::{self, Config};
use crate::mcp::demo_server::DemoServerArgs;
use crate::mcp::{EventSink, Hub, Vars};

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
    #[command(subcommand)]
    pub command: Option<Command>,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Connect every configured server and report, per alias, what it publishes and what is exposed
    Check(check::CheckArgs),
    /// Call one tool through the full pipeline (schema check, policy, timeout, error envelope)
    Call(call::CallArgs),
    /// Print the [servers.ALIAS.tools] policy block for what the server publishes (every tool "confirm")
    Policy(policy::PolicyArgs),
    /// Import servers configured in another host (Claude Desktop, Claude Code, Cursor, VS Code, Codex, Gemini CLI); secrets are never copied
    Import(import::ImportArgs),
    /// Run the Lead agent headless on one prompt (events as text, or JSON lines)
    Run(run::RunArgs),
    /// Run a demo MCP server (stdio by default)
    DemoServer(DemoServerArgs),
    /// The client side of the official MCP conformance suite (scenario from
    /// MCP_CONFORMANCE_SCENARIO); test only
    #[command(hide = true)]
    ConformanceClient(conformance::ConformanceArgs),
}

/// Runs a headless command on the current runtime.
pub async fn run(cli: Cli) -> ExitCode {
    match cli.command {
        Some(Command::Check(args)) => check::run(cli.config, args).await,
        Some(Command::Call(args)) => call::run(cli.config, args).await,
        Some(Command::Policy(args)) => policy::run(cli.config, args).await,
        Some(Command::Run(args)) => run::run(cli.config, args).await,
        Some(Command::Import(args)) => import::run(cli.config, args).await,
        Some(Command::ConformanceClient(args)) => conformance::run(args).await,
        Some(Command::DemoServer(args)) => match crate::mcp::demo_server::run(args).await {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("demo-server: {e:#}");
                ExitCode::from(exit::FAILURE)
            }
        },
        None => tui(cli.config, cli.resume).await,
    }
}

/// The full-screen TUI.
async fn tui(config: Option<PathBuf>, resume: Option<String>) -> ExitCode {
    let config = match load_config(config) {
        Ok(c) => c,
        Err(code) => return code,
    };
    let options = crate::session::SessionOptions {
        resume: resume.map(|id| (!id.is_empty()).then_some(id)),
        persist: true,
        workspace: None,
    };
    let backend = match crate::backend::spawn(config, options) {
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
    let _ = tokio::time::timeout(std::time::Duration::from_secs(15), backend.task).await;
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("mcp-harness: {e}");
            ExitCode::from(exit::FAILURE)
        }
    }
}

/// Loads the config or prints why not (the caller exits with status 2).
fn load_config(explicit: Option<PathBuf>) -> Result<Config, ExitCode> {
    config::load(config::locate(explicit.as_deref())).map_err(|e| {
        eprintln!("mcp-harness: {e}");
        ExitCode::from(exit::USAGE)
    })
}

/// Runs `work` until it finishes, or until Ctrl-C / SIGTERM: then every
/// connection is closed (no server outlives the command) and the exit status
/// is 128 + the signal number, as shells expect.
async fn interruptible(hub: &Hub, work: impl Future<Output = ExitCode>) -> ExitCode {
    let code = tokio::select! {
        code = work => code,
        signal = interrupted() => ExitCode::from(128 + signal),
    };
    hub.shutdown().await;
    code
}

async fn interrupted() -> u8 {
    use tokio::signal::unix::{SignalKind, signal};
    let Ok(mut term) = signal(SignalKind::terminate()) else {
        let _ = tokio::signal::ctrl_c().await;
        return 2;
    };
    tokio::select! {
        _ = tokio::signal::ctrl_c() => 2,
        _ = term.recv() => 15,
    }
}

/// A hub for a headless command (nobody listens to its events).
fn hub_for(config: &Config) -> Hub {
    Hub::new(
        config.servers.clone(),
        config.limits.clone(),
        Vars::from_process(),
        Vec::new(),
        EventSink::discard(),
    )
}
