//! mcp-harness: a terminal agent harness that connects MCP servers by local alias,
//! with local policy as the hard boundary.
//!
//! `mcp/` knows nothing of the UI or the model; `config` builds the MCP layer's
//! specs from the file. The binary (`main.rs`, with the headless commands in
//! `cli/`) puts them together with the TUI crate. Lints (no unsafe outside two
//! modules, no unwrap outside tests) are in Cargo.toml.

pub mod agent;
pub mod backend;
pub mod config;
#[doc(hidden)]
pub mod fuzz_checks;
pub mod interrupt;
pub mod logging;
pub mod mcp;
pub mod private_dir;
pub mod session;
pub mod store;
pub mod telemetry;

// The leaf crates, under the names the modules use (`crate::protocol::…`).
pub use mcp_harness_protocol as protocol;
pub use mcp_harness_sanitize as sanitize;
