//! The agent: the Lead's loop, its tools, subagents and teammates, and the model
//! providers. It knows MCP only through the registry snapshot and the hub.

pub mod compaction;
pub mod conversation;
pub mod events;
pub mod image;
pub mod lead;
pub mod model;
pub mod prompts;
pub mod runner;
pub mod search;
pub mod subagent;
pub mod toolbox;
pub mod tools;
