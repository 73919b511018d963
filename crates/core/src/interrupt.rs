//! Ctrl-C and SIGTERM for the headless commands: no server outlives a command
//! that is interrupted.

use std::future::Future;
use std::process::ExitCode;

use crate::mcp::Hub;

/// Runs `work` until it finishes, or until Ctrl-C / SIGTERM: then every
/// connection is closed (no server outlives the command) and the exit status
/// is 128 + the signal number, as shells expect.
pub async fn interruptible(hub: &Hub, work: impl Future<Output = ExitCode>) -> ExitCode {
    let code = tokio::select! {
        code = work => code,
        signal = interrupted() => ExitCode::from(128 + signal),
    };
    hub.shutdown().await;
    code
}

/// Waits for Ctrl-C or SIGTERM; returns the signal's number.
pub async fn interrupted() -> u8 {
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
