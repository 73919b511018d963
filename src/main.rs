//! `mcp-harness`: the TUI and the headless commands (see `cli`).

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::Parser;
// The headless commands and the TUI's start are the binary's own; the rest of
// the harness under the names `cli/` uses (`crate::mcp::…`).
use cli::{Cli, Command};
use mcp_harness::mcp::shim;
use mcp_harness::{
    agent, backend, config, interrupt, logging, mcp, protocol, sanitize, session, store, telemetry,
};
use mcp_harness_tui::ui;

mod cli;

/// Test only: when set, SIGUSR1 makes the harness panic on its main thread, so
/// tests can check that a panicking harness leaves no server process behind.
const TEST_PANIC_VAR: &str = "MCP_HARNESS_TEST_PANIC_ON_SIGUSR1";

fn main() -> ExitCode {
    let mut args = std::env::args_os();
    if args.nth(1).is_some_and(|a| a == shim::SHIM_ARG) {
        // The per-server supervisor: no runtime, no logging, nothing else.
        return shim::main(args.collect());
    }
    let cli = Cli::parse();
    if !matches!(cli.command, Some(Command::DemoServer(_))) {
        // Demo servers log to their own stderr (the harness captures it); the
        // harness itself logs to a file, never to the terminal it owns.
        mcp_harness::logging::init();
        // Every stdio server runs under this binary's `__shim`. /proc/self/exe
        // still works if the binary is replaced on disk while we run.
        mcp_harness::mcp::process::use_supervisor(self_exe());
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
    let code = runtime.block_on(async {
        tokio::select! {
            code = cli::run(cli) => code,
            () = test_panic() => ExitCode::FAILURE,
        }
    });
    // Do not wait on blocked threads (a demo server's stdin read) once done; tasks
    // still running are dropped, and dropping a server process kills its group.
    runtime.shutdown_timeout(Duration::from_millis(100));
    code
}

fn self_exe() -> PathBuf {
    if cfg!(target_os = "linux") {
        PathBuf::from("/proc/self/exe")
    } else {
        std::env::current_exe().unwrap_or_else(|_| PathBuf::from("mcp-harness"))
    }
}

/// Never resolves unless the test-only variable is set and SIGUSR1 arrives.
async fn test_panic() {
    use tokio::signal::unix::{SignalKind, signal};
    let armed = std::env::var_os(TEST_PANIC_VAR).is_some();
    let Some(mut usr1) = armed
        .then(|| signal(SignalKind::user_defined1()).ok())
        .flatten()
    else {
        return std::future::pending().await;
    };
    usr1.recv().await;
    panic!("test-only panic ({TEST_PANIC_VAR})");
}
