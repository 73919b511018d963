//! The demo MCP servers (placeholder).
