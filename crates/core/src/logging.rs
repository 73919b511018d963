//! `tracing` to a file in the data dir (`~/.local/share/mcp-harness/mcp-harness.log`
//! on Linux, owner-only like everything in the data dir), never to the terminal. `MCP_HARNESS_LOG` sets the filter (default `info`).

use std::path::PathBuf;
use std::sync::Mutex;

use tracing_subscriber::EnvFilter;

/// The data dir: transcripts, the audit log and the log file live here.
pub fn data_dir() -> Option<PathBuf> {
    directories::ProjectDirs::from("", "", "mcp-harness").map(|d| d.data_dir().to_path_buf())
}

/// Best effort: a harness that cannot write its log still runs.
pub fn init() {
    let Some(dir) = data_dir() else { return };
    if crate::private_dir::create_dir(&dir).is_err() {
        return;
    }
    let Ok(file) = crate::private_dir::append(&dir.join("mcp-harness.log")) else {
        return;
    };
    let filter =
        EnvFilter::try_from_env("MCP_HARNESS_LOG").unwrap_or_else(|_| EnvFilter::new("info"));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(false)
        .with_writer(Mutex::new(file))
        .try_init();
    // Sessions written by an older harness (0644 in 0755 folders) become
    // owner-only, like everything written from now on.
    crate::private_dir::tighten_tree(&dir);
}
