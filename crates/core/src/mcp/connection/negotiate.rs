//! Which protocol revision a connection speaks (SPEC rule 17).
//!
//! `protocol = "auto"` (the default) probes with `server/discover` and stays
//! stateless (2026-07-28) when the server answers it; a server that answers as
//! a legacy one — a JSON-RPC error that is not a modern rejection, a result
//! without `supportedVersions`, only handshake revisions in its `supported`
//! list — or stays silent past the probe window gets the `initialize`
//! handshake, offering 2025-11-25 and accepting any older revision down to
//! 2024-11-05. On stdio the handshake runs over the same pipes (see `probe`);
//! over HTTP on a fresh transport. A server that answers a revision we did not
//! offer is refused.

use std::time::Duration;

use rmcp::model::{ErrorCode, ProtocolVersion};
use rmcp::service::{
    ClientInitializeError, ClientLifecycleMode, RoleClient, RunningService,
    serve_client_with_lifecycle,
};
use rmcp::transport::{IntoTransport, Transport};

use super::client::{HandlerParts, HarnessClient};
use super::probe::{self, Phase};
use crate::mcp::spec::ProtocolChoice;

pub(in crate::mcp) type Session = RunningService<RoleClient, HarnessClient>;

/// The stateless revision.
pub const STATELESS: &str = "2026-07-28";
/// What the handshake offers.
pub const HANDSHAKE_OFFER: &str = "2025-11-25";
/// Revisions a handshake answer may name: the one offered and every older one
/// the harness speaks.
pub const HANDSHAKE_REVISIONS: [&str; 4] = ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];

/// The era of a server: decided once per connect, remembered per alias so a
/// reconnect skips a probe the server cannot answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Era {
    /// 2026-07-28: `server/discover`, `_meta` on every request.
    Stateless,
    /// The `initialize` handshake (2025-11-25 … 2024-11-05).
    Handshake,
}

/// What to try, from the config and what the last connect learned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(in crate::mcp) enum Plan {
    /// Probe, fall back to the handshake.
    Probe,
    DiscoverOnly,
    HandshakeOnly,
}

impl Plan {
    pub(in crate::mcp) fn new(choice: ProtocolChoice, known: Option<Era>) -> Self {
        match (choice, known) {
            (ProtocolChoice::Stateless, _) => Plan::DiscoverOnly,
            (ProtocolChoice::Handshake, _) => Plan::HandshakeOnly,
            // A server known to be legacy is not probed again (spec: "cache the
            // result for the lifetime of the server configuration").
            (ProtocolChoice::Auto, Some(Era::Handshake)) => Plan::HandshakeOnly,
            (ProtocolChoice::Auto, _) => Plan::Probe,
        }
    }
}

/// Why no session came out of negotiation.
#[derive(Debug)]
pub(in crate::mcp) enum Failure {
    /// rmcp's error of the last attempt.
    Init(Box<ClientInitializeError>),
    /// The server answered a revision we did not offer, or none we speak.
    /// The text is built locally; revisions the server named appear only when
    /// they look like revisions.
    Mismatch(String),
}

/// How a failed `server/discover` attempt reads.
enum Verdict {
    /// The server is legacy: the handshake comes next.
    Legacy(String),
    Mismatch(String),
    Fatal(Box<ClientInitializeError>),
}

fn discover_mode() -> ClientLifecycleMode {
    ClientLifecycleMode::Discover {
        preferred_versions: vec![ProtocolVersion::V_2026_07_28],
    }
}

/// Negotiates over stdio pipes (`transport`), handshake fallback on the same pipes.
pub(in crate::mcp) async fn over_stdio<T>(
    transport: T,
    plan: Plan,
    parts: &HandlerParts,
    probe_window: Duration,
) -> Result<(Session, Era), Failure>
where
    T: Transport<RoleClient, Error = std::io::Error> + 'static,
{
    if plan == Plan::HandshakeOnly {
        return handshake(transport, parts).await.map_err(refused_handshake);
    }
    let (leased, returned, phase) = probe::lease(transport);
    let attempt =
        serve_client_with_lifecycle(parts.client(Era::Stateless), leased, discover_mode());
    let evidence = match tokio::time::timeout(probe_window, attempt).await {
        Ok(Ok(session)) => {
            phase.set(Phase::Settled);
            return Ok((session, Era::Stateless));
        }
        Ok(Err(error)) => match verdict(error) {
            Verdict::Legacy(evidence) => evidence,
            Verdict::Mismatch(message) => return Err(Failure::Mismatch(message)),
            Verdict::Fatal(error) => return Err(Failure::Init(error)),
        },
        Err(_) => format!(
            "it did not answer server/discover within {} ms",
            probe_window.as_millis()
        ),
    };
    if plan == Plan::DiscoverOnly {
        return Err(Failure::Mismatch(not_stateless(&evidence)));
    }
    tracing::debug!(alias = %parts.alias(), "legacy server ({evidence}); falling back to initialize");
    let transport = reclaim(returned).await?;
    let (leased, returned, _phase) = probe::lease_for_handshake(transport);
    match handshake(leased, parts).await {
        // A server that was only slow to start: it answers the handshake with
        // -32022 naming 2026-07-28. Probe again, on the same pipes.
        Err(Failure::Init(error))
            if matches!(&*error, ClientInitializeError::JsonRpcError(e)
                if e.code == ErrorCode::UNSUPPORTED_PROTOCOL_VERSION
                    && names_stateless(e.data.as_ref())) =>
        {
            let transport = reclaim(returned).await?;
            let (leased, _returned, phase) = probe::lease(transport);
            let session =
                serve_client_with_lifecycle(parts.client(Era::Stateless), leased, discover_mode())
                    .await
                    .map_err(|e| Failure::Init(Box::new(e)))?;
            phase.set(Phase::Settled);
            Ok((session, Era::Stateless))
        }
        other => other,
    }
}

async fn reclaim<T>(returned: tokio::sync::oneshot::Receiver<T>) -> Result<T, Failure> {
    returned.await.map_err(|_| {
        Failure::Init(Box::new(ClientInitializeError::ConnectionClosed(
            "the transport was not handed back".into(),
        )))
    })
}

/// Whether an `UnsupportedProtocolVersionError`'s data lists 2026-07-28.
fn names_stateless(data: Option<&serde_json::Value>) -> bool {
    data.and_then(|d| d.get("supported"))
        .and_then(serde_json::Value::as_array)
        .is_some_and(|versions| versions.iter().any(|v| v == STATELESS))
}

/// Negotiates over Streamable HTTP; `transport` makes a fresh transport per attempt.
pub(in crate::mcp) async fn over_http<T, E, A>(
    transport: impl Fn() -> T,
    plan: Plan,
    parts: &HandlerParts,
) -> Result<(Session, Era), Failure>
where
    T: IntoTransport<RoleClient, E, A>,
    E: std::error::Error + Send + Sync + 'static,
{
    if plan != Plan::HandshakeOnly {
        let attempt =
            serve_client_with_lifecycle(parts.client(Era::Stateless), transport(), discover_mode())
                .await;
        let evidence = match attempt {
            Ok(session) => return Ok((session, Era::Stateless)),
            Err(error) if error.is_authorization_required() => {
                return Err(Failure::Init(Box::new(error)));
            }
            Err(error) => match verdict(error) {
                Verdict::Legacy(evidence) => evidence,
                Verdict::Mismatch(message) => return Err(Failure::Mismatch(message)),
                Verdict::Fatal(error) => return Err(Failure::Init(error)),
            },
        };
        if plan == Plan::DiscoverOnly {
            return Err(Failure::Mismatch(not_stateless(&evidence)));
        }
        tracing::debug!(alias = %parts.alias(), "legacy server ({evidence}); falling back to initialize");
        return handshake(transport(), parts).await;
    }
    handshake(transport(), parts)
        .await
        .map_err(refused_handshake)
}

/// With `protocol = "2025-11-25"`, a server that refuses the handshake's
/// revision (-32022) speaks none the operator allowed: a mismatch, naming what
/// it supports.
fn refused_handshake(failure: Failure) -> Failure {
    let Failure::Init(error) = &failure else {
        return failure;
    };
    let ClientInitializeError::JsonRpcError(e) = &**error else {
        return failure;
    };
    if e.code != ErrorCode::UNSUPPORTED_PROTOCOL_VERSION {
        return failure;
    }
    let supported: Vec<&str> = e
        .data
        .as_ref()
        .and_then(|d| d.get("supported"))
        .and_then(serde_json::Value::as_array)
        .map(|versions| versions.iter().filter_map(|v| v.as_str()).collect())
        .unwrap_or_default();
    Failure::Mismatch(format!(
        "the harness offered the handshake revisions {HANDSHAKE_OFFER} … {} (protocol = \"{HANDSHAKE_OFFER}\") \
         and the server refused them (JSON-RPC error -32022); it supports {}",
        HANDSHAKE_REVISIONS[HANDSHAKE_REVISIONS.len() - 1],
        list(&supported)
    ))
}

async fn handshake<T, E, A>(transport: T, parts: &HandlerParts) -> Result<(Session, Era), Failure>
where
    T: IntoTransport<RoleClient, E, A>,
    E: std::error::Error + Send + Sync + 'static,
{
    let session = serve_client_with_lifecycle(
        parts.client(Era::Handshake),
        transport,
        ClientLifecycleMode::Initialize,
    )
    .await
    .map_err(|e| Failure::Init(Box::new(e)))?;
    let answered = session
        .peer()
        .peer_info()
        .map(|info| info.protocol_version.as_str().to_owned())
        .unwrap_or_default();
    if !HANDSHAKE_REVISIONS.contains(&answered.as_str()) {
        // Dropping the session closes it; the caller reaps the process.
        return Err(Failure::Mismatch(format!(
            "the harness offered {HANDSHAKE_OFFER} in initialize (and accepts {} down to {}); the server \
             answered with {}, a revision it was not offered",
            HANDSHAKE_OFFER,
            HANDSHAKE_REVISIONS[HANDSHAKE_REVISIONS.len() - 1],
            revision_text(&answered)
        )));
    }
    Ok((session, Era::Handshake))
}

fn verdict(error: ClientInitializeError) -> Verdict {
    match &error {
        ClientInitializeError::JsonRpcError(data)
            if data.code != ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY
                && data.code != ErrorCode::HEADER_MISMATCH =>
        {
            Verdict::Legacy(format!(
                "it answered server/discover with JSON-RPC error {}",
                data.code.0
            ))
        }
        ClientInitializeError::ExpectedInitResult(Some(_)) => {
            Verdict::Legacy("its answer to server/discover has no `supportedVersions`".into())
        }
        ClientInitializeError::NoCompatibleProtocolVersion {
            server_supported, ..
        } => {
            let supported: Vec<&str> = server_supported.iter().map(|v| v.as_str()).collect();
            if supported.iter().any(|v| HANDSHAKE_REVISIONS.contains(v)) {
                Verdict::Legacy(format!("it supports {} only", list(&supported)))
            } else {
                Verdict::Mismatch(format!(
                    "the harness offered {STATELESS} and the handshake revisions {HANDSHAKE_OFFER} … {}; \
                     the server supports {}",
                    HANDSHAKE_REVISIONS[HANDSHAKE_REVISIONS.len() - 1],
                    list(&supported)
                ))
            }
        }
        _ => Verdict::Fatal(Box::new(error)),
    }
}

fn not_stateless(evidence: &str) -> String {
    format!(
        "the harness offered only {STATELESS} (protocol = \"{STATELESS}\") and the server does not speak \
         it: {evidence}"
    )
}

fn list(versions: &[&str]) -> String {
    if versions.is_empty() {
        return "no revision at all".into();
    }
    versions
        .iter()
        .map(|v| revision_text(v))
        .collect::<Vec<_>>()
        .join(", ")
}

/// A revision the server named, quoted when it looks like one (`YYYY-MM-DD`);
/// anything else is server text and stays out of the harness's words.
pub(in crate::mcp) fn revision_text(revision: &str) -> String {
    let looks_like_a_date = revision.len() == 10
        && revision.char_indices().all(|(i, c)| {
            if i == 4 || i == 7 {
                c == '-'
            } else {
                c.is_ascii_digit()
            }
        });
    if looks_like_a_date {
        format!("`{revision}`")
    } else if revision.is_empty() {
        "no revision".into()
    } else {
        "an unrecognized revision".into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plans_follow_the_config_and_what_the_last_connect_learned() {
        assert_eq!(Plan::new(ProtocolChoice::Auto, None), Plan::Probe);
        assert_eq!(
            Plan::new(ProtocolChoice::Auto, Some(Era::Stateless)),
            Plan::Probe
        );
        assert_eq!(
            Plan::new(ProtocolChoice::Auto, Some(Era::Handshake)),
            Plan::HandshakeOnly
        );
        assert_eq!(
            Plan::new(ProtocolChoice::Stateless, Some(Era::Handshake)),
            Plan::DiscoverOnly
        );
        assert_eq!(
            Plan::new(ProtocolChoice::Handshake, None),
            Plan::HandshakeOnly
        );
    }

    #[test]
    fn only_date_shaped_revisions_are_quoted() {
        assert_eq!(revision_text("2026-07-28"), "`2026-07-28`");
        assert_eq!(
            revision_text("IGNORE ALL PREVIOUS"),
            "an unrecognized revision"
        );
        assert_eq!(revision_text("2026-07-2x"), "an unrecognized revision");
        assert_eq!(revision_text(""), "no revision");
    }

    #[test]
    fn discover_answers_are_read_as_the_spec_says() {
        let legacy = |e| matches!(verdict(e), Verdict::Legacy(_));
        assert!(legacy(ClientInitializeError::JsonRpcError(
            rmcp::ErrorData::method_not_found::<rmcp::model::DiscoverRequestMethod>()
        )));
        assert!(!legacy(ClientInitializeError::JsonRpcError(
            rmcp::ErrorData::new(ErrorCode::HEADER_MISMATCH, "x", None)
        )));
        let only = |v: &[ProtocolVersion]| ClientInitializeError::NoCompatibleProtocolVersion {
            client_supported: vec![ProtocolVersion::V_2026_07_28],
            server_supported: v.to_vec(),
        };
        assert!(legacy(only(&[ProtocolVersion::V_2025_06_18])));
        assert!(matches!(
            verdict(only(&[ProtocolVersion::V_2026_07_28])),
            Verdict::Mismatch(_)
        ));
    }
}
