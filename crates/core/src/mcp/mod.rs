//! Everything MCP, and the only module that imports `rmcp` (its API changed across
//! 1.x, 2.x and 3.x; keeping it here keeps upgrades local).
//!
//! Layers, bottom up: `process` (the child), `connection` (the live session:
//! opening it, its revision, its client handler, its watchdog, its task book),
//! `listing` (bounded `tools/list`),
//! `names`/`schema`/`policy` → `exposure` (published → exposed, all-or-nothing),
//! `registry` (snapshots, revocation by identity), `hub` (aliases, connect,
//! disconnect), `revoke` (a connection ending) and `call` (the call path with its
//! error envelope). Beside them:
//! `shim` (the per-server subreaper that makes sure nothing outlives the harness:
//! the `mcp-harness-shim` crate, re-exported),
//! `relist` (coalesced re-listing after `tools/list_changed`), `elicit` (servers
//! asking the operator for input) and `linecap` (the size cap of one message).
//!
//! # The boundary is a type
//!
//! From outside `mcp/`, the only way to reach a server is [`Hub::call`]: the
//! snapshot, the schema, the policy, the approval. What would go around it is
//! private to this module (the benchmarks get a few stages behind the
//! `bench-internals` feature, see `bench`). Each of these fails to compile:
//!
//! A raw request on a connection (a snapshot hands out connections to look at):
//! ```compile_fail,E0624
//! # async fn f(connection: &mcp_harness::mcp::Connection) {
//! let params = serde_json::json!({"name": "delete_everything", "arguments": {}});
//! let _ = connection.request("tools/call", params, std::time::Duration::from_secs(1)).await;
//! # }
//! ```
//! An exposed tool's connection:
//! ```compile_fail,E0616
//! # fn f(hub: mcp_harness::mcp::Hub) {
//! let snapshot = hub.snapshot();
//! let _ = &snapshot.resolve("mcp__a__lookup").unwrap().connection;
//! # }
//! ```
//! Closing a connection behind the hub's back (its tools would stay registered):
//! ```compile_fail,E0624
//! # fn f(connection: &mcp_harness::mcp::Connection) {
//! connection.close();
//! # }
//! ```
//! The registry, to register or revoke by hand:
//! ```compile_fail,E0599
//! # fn f(hub: mcp_harness::mcp::Hub) {
//! let _ = hub.registry();
//! # }
//! ```
//! The raw rmcp call, which skips every local rule:
//! ```compile_fail,E0599
//! # async fn f(connection: &mcp_harness::mcp::Connection) {
//! let _ = connection.raw_rmcp_call("lookup", Default::default()).await;
//! # }
//! ```
//! …also through the benchmarks' module, which the product is built without:
//! ```compile_fail,E0433
//! # async fn f(connection: &mcp_harness::mcp::Connection) {
//! let _ = mcp_harness::mcp::bench::raw_rmcp_call(connection, "lookup", Default::default()).await;
//! # }
//! ```

pub mod approver;
mod attempt;
pub mod auth;
#[cfg(feature = "bench-internals")]
pub mod bench;
pub mod call;
pub mod connection;
pub mod content;
pub mod elicit;
pub mod envelope;
pub mod error;
pub mod events;
mod exposure;
pub mod flows;
pub mod gateway;
pub mod hub;
pub mod linecap;
mod listing;
mod mcpheader;
pub mod names;
mod nulls;
pub mod observe;
pub mod offerings;
pub mod pins;
pub mod policy;
pub mod process;
pub mod published;
mod rawhttp;
pub mod rawtap;
pub mod registry;
mod relist;
mod result;
pub mod results;
mod revoke;
mod rules_warm;
pub mod schema;
pub mod screen;
pub mod secrets;
pub use mcp_harness_shim as shim;
mod signin;
mod sink;
pub mod spec;
pub mod spill;
mod tail;
pub mod taps;
pub mod undeclared;
pub mod validators;
pub mod vars;

pub use crate::protocol::{CallId, Requester};
pub use approver::{ApprovalDecision, ApprovalRequest, Approver, FlagApprover};
pub use call::{CallIdentity, CallOutcome, ToolOutput};
pub use connection::negotiate::Era;
pub use connection::{Connection, ServerIdentity};
pub use elicit::{
    DecliningElicitor, DefaultsElicitor, ElicitationRequest, ElicitationResponse, Elicitor,
};
pub use envelope::{ToolError, ToolErrorCode};
pub use error::{ConnectError, ConnectErrorCode, FailureKind, HubError};
pub use events::{
    AliasState, ConnectionId, McpEvent, Offering, PinChange, RevokeCause, TaskState, ToolChanges,
};
pub use hub::{ConnectReport, Hub, HubBuilder};
/// The small hyper server under the demo's HTTP mode and the OAuth redirect
/// listener; it lives in the auth crate, whose listener needs it.
pub use mcp_harness_auth::serve;
pub use names::ServerAlias;
pub use observe::{CallRecord, Decision, Observer};
pub use offerings::{Offered, Prompt, PromptMessages, Resource, ResourceList, ResourceTemplate};
pub use pins::{DefinitionChange, PinBook, PinMode, PinState};
pub use policy::{Effect, ToolPolicy};
pub use published::PublishedTool;
pub use registry::{ExposedTool, Snapshot};
pub use relist::RELIST_INTERVAL;
pub use sink::EventSink;
pub use spec::{Limits, ProtocolChoice, ServerSpec, SpecChange, TaskMode, TransportSpec};
pub use vars::Vars;
