//! Minimal dispatcher for now: only the `demo-server` subcommand.

use std::{process::ExitCode, time::Duration};

use clap::{Parser, Subcommand};
use mcp_harness::mcp::demo_server::{self, DemoServerArgs};

#[derive(Parser, Debug)]
#[command(name = "mcp-harness", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Run a built-in demo MCP server (to try the harness out, and for tests).
    DemoServer(DemoServerArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("mcp-harness: cannot start the tokio runtime: {error}");
            return ExitCode::FAILURE;
        }
    };
    let result = runtime.block_on(async move {
        match cli.command {
            Command::DemoServer(args) => demo_server::run(args).await,
        }
    });
    // Don't wait on blocking threads (e.g. a stdin read) once the server is done.
    runtime.shutdown_timeout(Duration::from_millis(100));
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("mcp-harness: {error:#}");
            ExitCode::FAILURE
        }
    }
}
