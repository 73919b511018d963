//! Signing in to remote servers: OAuth 2.1 as the MCP authorization spec says.
//!
//! rmcp 3.11 has an OAuth client behind its `auth` feature; it is not used.
//! As its source reads, its discovery would refuse the 2025-03-26 metadata the
//! conformance suite checks (an issuer with a path, served at the server's
//! origin), it proceeds when an
//! authorization server does not advertise PKCE (the spec says refuse), picks
//! the token endpoint's client authentication from metadata rather than from
//! the registration or the config, signs `private_key_jwt` only through
//! jsonwebtoken on aws-lc-rs (a C build), and reports failures as strings.
//!
//! This crate knows no rmcp and no MCP session: the core puts a
//! [`session::AuthSession`] under rmcp's HTTP transport
//! (`crates/core/src/mcp/auth/transport.rs`), which adds the token to each
//! request and hands the 401/403 challenges back to the session.
//!
//! Layers: `origin` (where traffic may go), `net` (bounded HTTP), `challenge`,
//! `discovery`, `identity` (client ID), `token` (token endpoint), `flow` (the
//! grants), `session` (one connection's tokens), `store` (0600 file),
//! `listener` + `agent` (the browser step), `budget`; `serve` is the small
//! hyper server under the listener.

pub mod agent;
pub mod browser;
pub mod budget;
pub mod challenge;
pub mod crypto;
pub mod discovery;
pub mod dpop;
pub mod error;
pub mod flow;
pub mod identity;
pub mod listener;
mod logout;
mod metadata;
pub mod net;
pub mod origin;
pub mod serve;
pub mod session;
pub mod spec;
pub mod store;
pub mod token;

pub use agent::{AgentKind, Prompt, Unattended, UserAgent};
pub use budget::Budget;
pub use crypto::JwtAlg;
pub use error::{Failure, OAuthError};
pub use listener::{Callback, Listener, parse_pasted};
pub use logout::{LogoutReport, logout};
pub use session::{AuthSession, TokenView};
pub use spec::{AuthMode, AuthSpec, EndpointAuth, Env, Grant, KeySource, Secret, SecretSource};
pub use store::Store;
