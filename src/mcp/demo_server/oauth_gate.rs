//! Test only: the demo server over HTTP as an OAuth-protected resource
//! (`--oauth-issuer URL`). It publishes protected-resource metadata naming
//! that authorization server (RFC 9728), answers requests without an accepted
//! bearer token with 401 and a challenge pointing at that metadata, and
//! serves the MCP endpoint to the rest. Tokens are accepted by prefix
//! (`--accept-token`): the test's authorization server mints them.

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

/// How the gate behaves.
#[derive(Debug, Clone)]
pub struct Gate {
    pub issuer: String,
    pub accept: String,
    /// `scope` in the challenge.
    pub scope: Option<String>,
    /// A `resource` the metadata claims instead of this server (a bad server).
    pub resource: Option<String>,
    /// While this file exists, every token is refused (as if revoked at the
    /// authorization server): the test decides when.
    pub revoked_file: Option<std::path::PathBuf>,
}

pub const PRM_PATH: &str = "/.well-known/oauth-protected-resource/mcp";

fn base(headers: &HeaderMap) -> String {
    let host = headers
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .unwrap_or("127.0.0.1");
    format!("http://{host}")
}

/// `GET /.well-known/oauth-protected-resource/mcp`
pub async fn metadata(State(gate): State<Arc<Gate>>, headers: HeaderMap) -> Response {
    let resource = gate
        .resource
        .clone()
        .unwrap_or_else(|| format!("{}/mcp", base(&headers)));
    let body = serde_json::json!({
        "resource": resource,
        "authorization_servers": [gate.issuer],
    });
    (
        [(header::CONTENT_TYPE, "application/json")],
        body.to_string(),
    )
        .into_response()
}

/// In front of `/mcp`: an accepted bearer token, or 401 with a challenge.
pub async fn check(State(gate): State<Arc<Gate>>, request: Request, next: Next) -> Response {
    let token = request
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "));
    let revoked = gate.revoked_file.as_ref().is_some_and(|f| f.exists());
    if !revoked && token.is_some_and(|t| t.starts_with(&gate.accept)) {
        return next.run(request).await;
    }
    let mut challenge = format!(
        "Bearer resource_metadata=\"{}{PRM_PATH}\"",
        base(request.headers())
    );
    if let Some(scope) = &gate.scope {
        challenge.push_str(&format!(", scope=\"{scope}\""));
    }
    if token.is_some() {
        challenge.push_str(", error=\"invalid_token\"");
    }
    let mut response = (StatusCode::UNAUTHORIZED, "sign in first").into_response();
    if let Ok(value) = HeaderValue::from_str(&challenge) {
        response
            .headers_mut()
            .insert(header::WWW_AUTHENTICATE, value);
    }
    response
}

/// The MCP router behind the gate, with the metadata beside it.
pub fn wrap(mcp: axum::Router, gate: Gate) -> axum::Router {
    let gate = Arc::new(gate);
    axum::Router::new()
        .route(PRM_PATH, axum::routing::get(metadata))
        .with_state(Arc::clone(&gate))
        .merge(mcp.layer(axum::middleware::from_fn_with_state(gate, check)))
}
