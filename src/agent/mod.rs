//! The agent: the Lead's loop, its tools, subagents and teammates, and the model
//! providers. It knows MCP only through the registry snapshot and the hub.

pub mod conversation;
pub mod model;
