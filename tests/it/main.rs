//! The integration tests, one module per area, in one test binary: one link
//! instead of two dozen. `tests/memory.rs` stays a binary of its own because it
//! reads its own process's high-water mark, which other tests running in the same
//! process would raise.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report

mod common;

mod agent;
mod bench;
mod call;
mod check;
mod conformance;
mod conformance_auth;
mod conformance_next;
mod connect_errors;
mod definitions;
mod docs;
mod elicitation;
mod elicitation_calls;
mod eras;
mod failures;
mod flows;
mod fuzz_seeds;
mod hidden_text;
mod host_claude_code;
mod host_codex;
mod http;
mod identity;
mod import;
mod input_rounds;
mod insecure_http;
mod interop;
mod interop_fetch;
mod interop_stateless;
mod interrupt;
mod lifecycle;
mod list_changed;
mod list_freshness;
mod logs_and_limits;
mod misbehaving;
mod oauth;
mod oauth_tui;
mod offerings;
mod one_face;
mod orphans;
mod owner_only;
mod pins;
mod pins_elsewhere;
mod pins_lock;
mod pins_session;
mod pins_tui;
mod private_text;
mod progress;
mod provider_anthropic;
mod provider_openai;
mod results;
mod run;
mod screen;
mod secrets;
mod serve;
mod serve_complete;
mod serve_conformance;
mod serve_elicit;
mod serve_listen;
mod serve_listen_resources;
mod serve_offerings;
mod serve_stdio;
mod serve_subscribe;
mod serve_upstreams;
mod shim;
mod tasks;
mod telemetry;
mod tool_search;
mod tui_backend;
mod tui_e2e;
mod tui_exits;
mod typos;
mod undeclared;
mod websocket;
