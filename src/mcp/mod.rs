//! Everything MCP. The only module that imports `rmcp`.
pub mod demo_server;
