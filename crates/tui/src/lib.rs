//! mcp-harness's TUI (`ui`). It sees the rest of the harness only through the
//! two crates below it, re-exported here under the names its modules use.

pub use mcp_harness_protocol as protocol;
pub use mcp_harness_sanitize as sanitize;

pub mod ui;
