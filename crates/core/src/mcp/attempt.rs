//! One connection attempt: open, list (compiling schemas as pages arrive),
//! validate and expose — everything before the registry is touched.

use std::sync::Arc;

use tokio::time::Instant;

use super::connection::open::{self, OpenParams};
use super::connection::{Connection, ServerIdentity};
use super::error::ConnectError;
use super::events::{ConnectionId, McpEvent};
use super::exposure;
use super::hub::Hub;
use super::listing;
use super::names::ServerAlias;
use super::pins::fingerprints::Fingerprinter;
use super::pins::{PinHash, PinMode, PinSummary};
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
    /// Each published tool against its pin, and what this connect pinned.
    pub pins: PinSummary,
}

/// A listing run through the local rules.
pub(super) struct Listed {
    /// `None` if the listing itself failed or missed its deadline.
    pub published: Option<Arc<[PublishedTool]>>,
    pub outcome: Result<Vec<Arc<ExposedTool>>, ConnectError>,
    /// Fingerprints computed while the listing arrived (listing order).
    pub hashes: Vec<Option<PinHash>>,
}

/// Closes a connection nobody took over.
struct CloseUnclaimed(Option<Arc<Connection>>);

impl Drop for CloseUnclaimed {
    fn drop(&mut self) {
        if let Some(conn) = self.0.take() {
            conn.close();
        }
    }
}

impl Hub {
    pub(super) async fn attempt(
        &self,
        spec: &ServerSpec,
        interactive: bool,
    ) -> (Option<Arc<Connection>>, ConnectReport) {
        let mut report = ConnectReport {
            alias: spec.alias.clone(),
            server: None,
            published: Arc::from(Vec::new()),
            outcome: Ok(Vec::new()),
            pins: PinSummary::default(),
        };
        // The pins are read while the server starts and lists its tools.
        let loading = self.load_pins(spec);
        // One deadline for the whole attempt: a server that answers `initialize`
        // and then trickles out `tools/list` pages must not hold a connect for hours.
        let deadline = Instant::now() + spec.connect_timeout;
        let conn = match self.open(spec, interactive).await {
            Ok(c) => c,
            Err(e) => {
                report.outcome = Err(e);
                return (None, report);
            }
        };
        // A connect given up half-way (disconnect, Ctrl-C) drops this future:
        // the connection must close then, or the tasks that follow it (the
        // subscription) would keep it, and its server, alive.
        let mut unclaimed = CloseUnclaimed(Some(Arc::clone(&conn)));
        report.server = Some(conn.server().clone());
        // Subscribe to tool-list changes (2026-07-28) before the first listing,
        // so no change made after it goes unannounced.
        super::connection::listen::start(&conn, deadline.saturating_duration_since(Instant::now()))
            .await;
        let listed = self.list_and_expose(&conn, spec, deadline).await;
        // Whatever the server asks for later, a person is not asked behind a call.
        if let Some(auth) = conn.auth() {
            auth.allow_interaction(false);
        }
        report.outcome = listed.outcome;
        if let Some(published) = listed.published {
            let enforce = report.outcome.is_ok();
            let (pins, verdict) = self
                .check_pins(spec, &published, listed.hashes, loading, enforce)
                .await;
            report.pins = pins;
            if let Err(e) = verdict {
                report.outcome = Err(e);
            }
            report.published = published;
        }
        self.report_suspicious(spec, report.outcome.as_deref(), None);
        if report.outcome.is_err() {
            conn.close();
            return (None, report);
        }
        unclaimed.0 = None;
        (Some(conn), report)
    }

    /// One `suspicious` event per tool the screen flagged in a listing that
    /// went in (exposed) or was refused for it (never trusted on first use).
    /// `only`: on a re-list, the published names that are new or changed
    /// (the others were reported when they came in).
    pub(super) fn report_suspicious(
        &self,
        spec: &ServerSpec,
        outcome: Result<&[Arc<ExposedTool>], &ConnectError>,
        only: Option<&[String]>,
    ) {
        use super::events::SuspiciousOutcome;
        let wanted = |tool: &str| only.is_none_or(|names| names.iter().any(|n| n == tool));
        let flagged: Vec<(String, SuspiciousOutcome, Vec<_>)> = match outcome {
            Ok(exposed) => exposed
                .iter()
                .filter(|t| !t.suspicious.is_empty() && wanted(&t.remote_name))
                .map(|t| {
                    (
                        t.remote_name.clone(),
                        SuspiciousOutcome::Exposed,
                        t.suspicious.to_vec(),
                    )
                })
                .collect(),
            Err(e) if e.code == crate::mcp::error::ConnectErrorCode::DefinitionSuspicious => e
                .changes()
                .iter()
                .filter(|c| !c.suspicious.is_empty() && wanted(&c.tool))
                .map(|c| {
                    (
                        c.tool.clone(),
                        SuspiciousOutcome::Refused,
                        c.suspicious.clone(),
                    )
                })
                .collect(),
            Err(_) => Vec::new(),
        };
        for (tool, outcome, hits) in flagged {
            self.inner.events.emit(McpEvent::Suspicious {
                alias: spec.alias.clone(),
                tool,
                outcome,
                hits,
            });
        }
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
    ) -> Listed {
        // Schemas compile, and pins are computed, on blocking threads while
        // later pages are in flight.
        let precompiler = Precompiler::start();
        let fingerprints = (spec.pin != PinMode::Off).then(Fingerprinter::start);
        conn.listing_starts();
        let mut listed_so_far = 0;
        let listing = listing::list_tools(conn, &self.inner.limits, |page| {
            let policy = &spec.policy;
            let schemas = page
                .iter()
                .filter(|t| policy.effect(&t.name) != Some(Effect::Deny));
            precompiler.submit(schemas.map(|t| Arc::clone(&t.input_schema)).collect());
            if let Some(fingerprints) = &fingerprints {
                let tools = page
                    .iter()
                    .enumerate()
                    .filter(|(_, t)| policy.effect(&t.name) != Some(Effect::Deny))
                    .map(|(i, t)| (listed_so_far + i, t.clone()));
                fingerprints.submit(tools.collect());
            }
            listed_so_far += page.len();
        });
        // Dropping the listing on the deadline cancels its request in flight.
        // The clock stops while a person signs in (a server may ask at tools/list).
        let listed = conn
            .budget
            .until(deadline, listing)
            .await
            .unwrap_or_else(|_| {
                Err(
                    match conn.auth().and_then(|a| a.cut_short(spec.connect_timeout)) {
                        Some(failure) => open::auth_failed(spec.alias.as_str(), failure),
                        None => listing::missed_deadline(spec.connect_timeout),
                    },
                )
            });
        let cache = precompiler.finish().await;
        let hashes = match fingerprints {
            Some(fingerprints) => fingerprints.finish().await,
            None => Vec::new(),
        };
        match listed {
            Ok(published) => {
                let published: Arc<[PublishedTool]> = published.into();
                let outcome = exposure::expose(
                    conn,
                    &published,
                    &spec.policy,
                    spec.extra_arguments,
                    cache,
                    &hashes,
                );
                Listed {
                    published: Some(published),
                    outcome,
                    hashes,
                }
            }
            Err(e) => Listed {
                published: None,
                outcome: Err(e),
                hashes: Vec::new(),
            },
        }
    }

    async fn open(
        &self,
        spec: &ServerSpec,
        interactive: bool,
    ) -> Result<Arc<Connection>, ConnectError> {
        let id = ConnectionId::next();
        let opened = open::open(OpenParams {
            id,
            spec,
            limits: &self.inner.limits,
            vars: &self.inner.vars,
            events: self.inner.events.clone(),
            elicitor: self.elicitor(),
            taps: self.taps().clone(),
            spill_dir: self.spill_dir(id),
            known_era: self.known_era(&spec.alias),
            auth: self.auth_context(interactive),
        })
        .await;
        // Remember the era for the next connect; forget it when negotiation
        // failed (the server may have been replaced).
        self.remember_era(&spec.alias, opened.as_ref().ok().map(|c| c.era()));
        opened
    }

    /// Connects without registering anything, lists what the server publishes,
    /// and closes again (for `policy ALIAS`).
    pub async fn probe(
        &self,
        alias: &str,
    ) -> Result<(ServerIdentity, Vec<PublishedTool>), ConnectError> {
        self.probe_with(alias, false).await
    }

    pub(super) async fn probe_with(
        &self,
        alias: &str,
        interactive: bool,
    ) -> Result<(ServerIdentity, Vec<PublishedTool>), ConnectError> {
        let spec = self.spec(alias).map_err(|e| {
            ConnectError::new(
                super::error::ConnectErrorCode::SpawnFailed,
                e.to_string(),
                "check the alias",
            )
        })?;
        let deadline = Instant::now() + spec.connect_timeout;
        let conn = self.open(&spec, interactive).await?;
        let listing = listing::list_tools(&conn, &self.inner.limits, |_| {});
        let listed = conn
            .budget
            .until(deadline, listing)
            .await
            .unwrap_or_else(|_| Err(listing::missed_deadline(spec.connect_timeout)));
        conn.close();
        let server = conn.server().clone();
        self.lock().closing(conn);
        Ok((server, listed?))
    }
}
