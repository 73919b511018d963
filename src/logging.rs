//! `tracing` to a file in the data dir (`~/.local/share/mcp-harness/mcp-harness.log`
//! on Linux), never to the terminal. `MCP_HARNESS_LOG` sets the filter (default `info`).

use std::fs::OpenOptions;
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
    if std::fs::create_dir_all(&dir).is_err() {
        return;
    }
    let Ok(file) = OpenOptions::new()
        .create(true)
        .append(true)
        .open(dir.join("mcp-harness.log"))
    else {
        return;
    };
    let filter =
        EnvFilter::try_from_env("MCP_HARNESS_LOG").unwrap_or_else(|_| EnvFilter::new("info"));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(false)
        .with_writer(Mutex::new(file))
        .try_init();
}
