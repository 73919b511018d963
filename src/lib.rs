//! mcp-harness: a terminal agent harness that connects MCP servers by local alias,
//! with local policy as the hard boundary.
#![deny(unsafe_code)]

pub mod mcp;
pub mod sanitize;
pub mod config;
