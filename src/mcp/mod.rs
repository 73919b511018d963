//! Everything MCP, and the only module that imports `rmcp` (its API changed across
//! 1.x, 2.x and 3.x; keeping it here keeps upgrades local).
//!
//! Layers, bottom up: `process` (the child), `connection` + `watchdog` (a live
//! session and who notices its end), `listing` (bounded `tools/list`),
//! `names`/`schema`/`policy` → `exposure` (published → exposed, all-or-nothing),
//! `registry` (snapshots, revocation by identity), `hub` (aliases, connect,
//! disconnect), `revoke` (a connection ending) and `call` (the call path with its
//! error envelope). Beside them:
//! `shim` (the per-server subreaper that makes sure nothing outlives the harness),
//! `relist` (coalesced re-listing after `tools/list_changed`), `elicit` (servers
//! asking the operator for input) and `linecap` (the size cap of one message).

pub mod approver;
mod attempt;
pub mod call;
mod client;
pub mod connection;
pub mod content;
pub mod demo_server;
pub mod elicit;
pub mod envelope;
pub mod error;
pub mod events;
pub mod exposure;
pub mod hub;
mod initfail;
pub mod linecap;
pub mod listing;
pub mod names;
mod open;
pub mod policy;
pub mod process;
pub mod published;
pub mod registry;
mod relist;
mod result;
pub mod results;
mod revoke;
pub mod schema;
pub mod shim;
pub mod spec;
pub mod spill;
mod tail;
pub mod validators;
pub mod vars;
pub mod watchdog;

pub use approver::{ApprovalDecision, ApprovalRequest, Approver, FlagApprover};
pub use call::{CallOutcome, ToolOutput};
pub use connection::{Connection, ServerIdentity};
pub use elicit::{
    DecliningElicitor, DefaultsElicitor, ElicitationRequest, ElicitationResponse, Elicitor,
};
pub use envelope::{ToolError, ToolErrorCode};
pub use error::{ConnectError, ConnectErrorCode, FailureKind, HubError};
pub use events::{AliasState, ConnectionId, EventSink, McpEvent, RevokeCause, ToolChanges};
pub use hub::{ConnectReport, Hub};
pub use names::ServerAlias;
pub use policy::{Effect, ToolPolicy};
pub use published::PublishedTool;
pub use registry::{ExposedTool, Snapshot};
pub use relist::RELIST_INTERVAL;
pub use spec::{Limits, ServerSpec, TransportSpec};
pub use vars::Vars;
