//! Benchmark-only access to what is private to `mcp/`: the connect pipeline's
//! stages one by one, and the raw rmcp baselines the harness is measured
//! against (which bypass every local rule). Compiled only with the
//! `bench-internals` feature, which only the `mcp_core` benchmark turns on
//! (`required-features` in Cargo.toml): in the product, the validated call path
//! is the only way to reach a server from outside `mcp/`.

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::Value;

use super::connection::{self, Connection};
use super::elicit::DecliningElicitor;
use super::error::ConnectError;
use super::events::ConnectionId;
use super::policy::ToolPolicy;
use super::published::PublishedTool;
use super::registry::ExposedTool;
use super::sink::EventSink;
use super::spec::{Limits, ServerSpec};
use super::validators::{Precompiled, Precompiler};
use super::vars::Vars;

/// Starts the server and runs `initialize` (no listing, nothing registered).
pub async fn open(
    spec: &ServerSpec,
    limits: &Limits,
    vars: &Vars,
) -> Result<Arc<Connection>, ConnectError> {
    let id = ConnectionId::next();
    connection::open::open(connection::open::OpenParams {
        id,
        spec,
        limits,
        vars,
        events: EventSink::discard(),
        elicitor: Arc::new(DecliningElicitor),
        taps: Default::default(),
        known_era: None,
        auth: super::auth::AuthContext::new(Arc::new(super::auth::Store::memory())),
        spill_dir: std::env::temp_dir().join(format!(
            "mcp-harness-bench-{}-{}",
            std::process::id(),
            id.0
        )),
    })
    .await
}

/// The bounded, paginated `tools/list`, feeding each page's schemas to `precompiler`.
pub async fn list_tools(
    conn: &Connection,
    limits: &Limits,
    precompiler: &Precompiler,
) -> Result<Vec<PublishedTool>, ConnectError> {
    super::listing::list_tools(conn, limits, |page| {
        precompiler.submit(page.iter().map(|t| Arc::clone(&t.input_schema)).collect())
    })
    .await
}

/// Names → schema → policy, all or nothing.
pub fn expose(
    conn: &Arc<Connection>,
    published: &[PublishedTool],
    policy: &ToolPolicy,
    precompiled: Precompiled,
) -> Result<Vec<Arc<ExposedTool>>, ConnectError> {
    super::exposure::expose(
        conn,
        published,
        policy,
        Default::default(),
        precompiled,
        &[],
    )
}

/// Closes a connection opened with [`open`].
pub fn close(conn: &Connection) {
    conn.close();
}

/// The connection an exposed tool calls through.
pub fn connection_of(tool: &ExposedTool) -> Arc<Connection> {
    Arc::clone(&tool.connection)
}

/// Why a raw rmcp baseline failed (rmcp's own errors: nothing of the harness
/// runs in a baseline).
#[derive(Debug, thiserror::Error)]
pub enum RawError {
    #[error("{0}")]
    Service(#[from] rmcp::ServiceError),
    #[error("{0}")]
    Spawn(#[from] std::io::Error),
    #[error("stdio not piped")]
    NotPiped,
    /// Boxed: rmcp's initialize error is large, and this is a cold path.
    #[error("{0}")]
    Initialize(Box<rmcp::service::ClientInitializeError>),
}

/// The typed rmcp call, bypassing every local rule: the baseline the harness
/// call path is measured against.
pub async fn raw_rmcp_call(
    conn: &Connection,
    name: &str,
    arguments: serde_json::Map<String, Value>,
) -> Result<(), RawError> {
    let params =
        rmcp::model::CallToolRequestParams::new(name.to_string()).with_arguments(arguments);
    conn.peer
        .call_tool(params)
        .await
        .map(|_| ())
        .map_err(RawError::from)
}

/// The typed rmcp listing (all pages, no local rules).
pub async fn raw_rmcp_list(conn: &Connection) -> Result<usize, RawError> {
    conn.peer
        .list_all_tools()
        .await
        .map(|t| t.len())
        .map_err(RawError::from)
}

/// What a bare rmcp client does to learn a server's tools — spawn it (no
/// process group, no shim, no stderr tail), `initialize`, `list_all_tools`,
/// close. No local rule is applied. Returns the tool count and the time from
/// spawn to the last page (closing is not counted).
pub async fn raw_rmcp_connect_and_list(
    command: &str,
    args: &[String],
) -> Result<(usize, Duration), RawError> {
    use rmcp::model::{ClientCapabilities, ClientConfig, Implementation, ProtocolVersion};
    use rmcp::transport::async_rw::AsyncRwTransport;
    let started = Instant::now();
    let mut child = tokio::process::Command::new(command)
        .args(args)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()?;
    let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
        return Err(RawError::NotPiped);
    };
    let client = ClientConfig::new(
        ClientCapabilities::default(),
        Implementation::new("raw", "0"),
    )
    .with_protocol_version(ProtocolVersion::LATEST_WITH_INITIALIZE);
    let session = rmcp::service::serve_client(client, AsyncRwTransport::new_client(stdout, stdin))
        .await
        .map_err(|e| RawError::Initialize(Box::new(e)))?;
    let tools = session.peer().list_all_tools().await?;
    let took = started.elapsed();
    let _ = session.cancel().await;
    let _ = child.wait().await;
    Ok((tools.len(), took))
}

/// Turns the credential scan of results on or off (to measure its cost
/// against the same call without it, in one run).
pub fn set_result_scan(on: bool) {
    super::secrets::SCAN_OFF.store(!on, std::sync::atomic::Ordering::Relaxed);
}

/// Turns flow control's steps in the call path on or off (its labels'
/// lookup, the sink check, the taint) to measure them in one run.
pub fn set_flow_checks(on: bool) {
    super::flows::CHECKS_OFF.store(!on, std::sync::atomic::Ordering::Relaxed);
}
