//! The integration tests, one module per area, in one test binary: one link
//! instead of two dozen. `tests/memory.rs` stays a binary of its own because it
//! reads its own process's high-water mark, which other tests running in the same
//! process would raise.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report

mod common;
mod fixtures;

mod agent;
mod call;
mod check;
mod conformance;
mod connect_errors;
mod elicitation;
mod failures;
mod fuzz_seeds;
mod hidden_text;
mod http;
mod import;
mod interop;
mod interrupt;
mod lifecycle;
mod list_changed;
mod logs_and_limits;
mod misbehaving;
mod one_face;
mod orphans;
mod private_text;
mod progress;
mod provider_anthropic;
mod provider_openai;
mod results;
mod run;
mod tool_search;
mod tui_backend;
mod tui_e2e;
mod tui_exits;
mod ui_reducer;
mod ui_snapshots;
