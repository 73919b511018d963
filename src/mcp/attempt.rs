//! One connection attempt: open, list (compiling schemas as pages arrive),
//! validate and expose — everything before the registry is touched.

use std::sync::Arc;

use tokio::time::Instant;

use super::connection::{self, Connection, OpenParams, ServerIdentity};
use super::error::ConnectError;
use super::events::ConnectionId;
use super::exposure;
use super::hub::Hub;
use super::listing;
use super::names::ServerAlias;
use super::policy::Effect;
use super::published::PublishedTool;
use super::registry::ExposedTool;
use super::spec::ServerSpec;
use super::validators::Precompiler;

/// What one connection attempt produced, for display (`check`, the side panel)
/// whether it succeeded or not.
#[derive(Debug, Clone)]
pub struct ConnectReport {
    pub alias: ServerAlias,
    pub server: Option<ServerIdentity>,
    pub published: Arc<[PublishedTool]>,
    /// The exposed tools, or why there are none.
    pub outcome: Result<Vec<Arc<ExposedTool>>, ConnectError>,
}

impl Hub {
    pub(super) async fn attempt(
        &self,
        spec: &ServerSpec,
    ) -> (Option<Arc<Connection>>, ConnectReport) {
        let mut report = ConnectReport {
            alias: spec.alias.clone(),
            server: None,
            published: Arc::from(Vec::new()),
            outcome: Ok(Vec::new()),
        };
        // One deadline for the whole attempt: a server that answers `initialize`
        // and then trickles out `tools/list` pages must not hold a connect for hours.
        let deadline = Instant::now() + spec.connect_timeout;
        let conn = match self.open(spec).await {
            Ok(c) => c,
            Err(e) => {
                report.outcome = Err(e);
                return (None, report);
            }
        };
        report.server = Some(conn.server().clone());
        let (published, outcome) = self.list_and_expose(&conn, spec, deadline).await;
        report.published = published.unwrap_or_else(|| Arc::from(Vec::new()));
        report.outcome = outcome;
        if report.outcome.is_err() {
            conn.close();
            return (None, report);
        }
        (Some(conn), report)
    }

    /// Lists what the server publishes (compiling schemas as pages arrive) and
    /// validates it against the local rules: the published tools (`None` if the
    /// listing itself failed or missed `deadline`) and the exposed ones, or why
    /// there are none.
    pub(super) async fn list_and_expose(
        &self,
        conn: &Arc<Connection>,
        spec: &ServerSpec,
        deadline: Instant,
    ) -> (
        Option<Arc<[PublishedTool]>>,
        Result<Vec<Arc<ExposedTool>>, ConnectError>,
    ) {
        // Schemas compile on a blocking thread while later pages are in flight.
        let precompiler = Precompiler::start();
        conn.listing_starts();
        let listing = listing::list_tools(conn, &self.inner.limits, |page| {
            let policy = &spec.policy;
            let schemas = page
                .iter()
                .filter(|t| policy.effect(&t.name) != Some(Effect::Deny));
            precompiler.submit(schemas.map(|t| Arc::clone(&t.input_schema)).collect());
        });
        // Dropping the listing on the deadline cancels its request in flight.
        let listed = tokio::time::timeout_at(deadline, listing)
            .await
            .unwrap_or_else(|_| Err(listing::missed_deadline(spec.connect_timeout)));
        let cache = precompiler.finish().await;
        match listed {
            Ok(published) => {
                let published: Arc<[PublishedTool]> = published.into();
                let outcome = exposure::expose(conn, &published, &spec.policy, cache);
                (Some(published), outcome)
            }
            Err(e) => (None, Err(e)),
        }
    }

    async fn open(&self, spec: &ServerSpec) -> Result<Arc<Connection>, ConnectError> {
        let id = ConnectionId::next();
        connection::open(OpenParams {
            id,
            spec,
            limits: &self.inner.limits,
            vars: &self.inner.vars,
            events: self.inner.events.clone(),
            elicitor: self.elicitor(),
            spill_dir: self.spill_dir(id),
        })
        .await
    }

    /// Connects without registering anything, lists what the server publishes,
    /// and closes again (for `policy ALIAS`).
    pub async fn probe(
        &self,
        alias: &str,
    ) -> Result<(ServerIdentity, Vec<PublishedTool>), ConnectError> {
        let spec = self.spec(alias).map_err(|e| {
            ConnectError::new(
                super::error::ConnectErrorCode::SpawnFailed,
                e.to_string(),
                "check the alias",
            )
        })?;
        let deadline = Instant::now() + spec.connect_timeout;
        let conn = self.open(&spec).await?;
        let listing = listing::list_tools(&conn, &self.inner.limits, |_| {});
        let listed = tokio::time::timeout_at(deadline, listing)
            .await
            .unwrap_or_else(|_| Err(listing::missed_deadline(spec.connect_timeout)));
        conn.close();
        let server = conn.server().clone();
        self.lock().closing(conn);
        Ok((server, listed?))
    }
}
