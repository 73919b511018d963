//! `mcp-harness`: the TUI and the headless commands (see `cli`).

use std::process::ExitCode;
use std::time::Duration;

use clap::Parser;
use mcp_harness::cli::{self, Cli, Command};

fn main() -> ExitCode {
    let cli = Cli::parse();
    if !matches!(cli.command, Some(Command::DemoServer(_))) {
        // Demo servers log to their own stderr (the harness captures it); the
        // harness itself logs to a file, never to the terminal it owns.
        mcp_harness::logging::init();
    }
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("mcp-harness: cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let code = runtime.block_on(cli::run(cli));
    // Do not wait on blocked threads (a demo server's stdin read) once done; tasks
    // still running are dropped, and dropping a server process kills its group.
    runtime.shutdown_timeout(Duration::from_millis(100));
    code
}
