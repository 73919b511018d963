//! mcp-harness: a terminal agent harness that connects MCP servers by local alias,
//! with local policy as the hard boundary.
//!
//! `mcp/` knows nothing of the UI or the model; `config` builds the MCP layer's
//! specs from the file; `cli/` holds the thin headless commands. Lints (no
//! unsafe outside two modules, no unwrap outside tests) are in Cargo.toml.

pub mod agent;
pub mod backend;
pub mod cli;
pub mod config;
#[doc(hidden)]
pub mod fuzz_checks;
pub mod logging;
pub mod mcp;
pub mod private_dir;
pub mod protocol;
pub mod sanitize;
pub mod session;
pub mod store;
pub mod telemetry;
pub mod ui;
