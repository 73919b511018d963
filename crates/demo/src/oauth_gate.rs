//! Test only: the demo server over HTTP as an OAuth-protected resource
//! (`--oauth-issuer URL`). It publishes protected-resource metadata naming
//! that authorization server (RFC 9728), answers requests without an accepted
//! bearer token with 401 and a challenge pointing at that metadata, and
//! serves the MCP endpoint to the rest. Tokens are accepted by prefix
//! (`--accept-token`): the test's authorization server mints them.

use std::convert::Infallible;

use bytes::Bytes;
use http_body_util::{BodyExt, Full, combinators::BoxBody};
use hyper::header::{self, HeaderMap, HeaderValue};
use hyper::{Response, StatusCode};

type Reply = Response<BoxBody<Bytes, Infallible>>;

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
    /// A tool whose every call is refused with a well-formed step-up
    /// challenge (403 `insufficient_scope`), whatever the token: the harness
    /// must fail only that call.
    pub step_up_tool: Option<String>,
}

/// The scope the step-up challenge asks for.
pub const STEP_UP_SCOPE: &str = "mcp files:write";

pub const PRM_PATH: &str = "/.well-known/oauth-protected-resource/mcp";

fn base(headers: &HeaderMap) -> String {
    let host = headers
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .unwrap_or("127.0.0.1");
    format!("http://{host}")
}

fn reply(status: StatusCode, content_type: &'static str, body: String) -> Reply {
    let mut response = Response::new(Full::new(Bytes::from(body)).boxed());
    *response.status_mut() = status;
    response
        .headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    response
}

impl Gate {
    /// `GET /.well-known/oauth-protected-resource/mcp`
    pub fn metadata(&self, headers: &HeaderMap) -> Reply {
        let resource = self
            .resource
            .clone()
            .unwrap_or_else(|| format!("{}/mcp", base(headers)));
        let body = serde_json::json!({
            "resource": resource,
            "authorization_servers": [self.issuer],
        });
        reply(StatusCode::OK, "application/json", body.to_string())
    }

    /// Whether a request body (JSON-RPC) calls the step-up tool.
    pub fn wants_step_up(&self, body: &[u8]) -> bool {
        let Some(tool) = &self.step_up_tool else {
            return false;
        };
        serde_json::from_slice::<serde_json::Value>(body).is_ok_and(|m| {
            m["method"] == "tools/call" && m["params"]["name"].as_str() == Some(tool.as_str())
        })
    }

    /// 403 with an RFC 6750 `insufficient_scope` challenge.
    pub fn step_up(&self, headers: &HeaderMap) -> Reply {
        let challenge = format!(
            "Bearer error=\"insufficient_scope\", scope=\"{STEP_UP_SCOPE}\", \
             resource_metadata=\"{}{PRM_PATH}\", error_description=\"writing needs files:write\"",
            base(headers)
        );
        let mut response = reply(StatusCode::FORBIDDEN, "text/plain", "more scope".into());
        if let Ok(value) = HeaderValue::from_str(&challenge) {
            response
                .headers_mut()
                .insert(header::WWW_AUTHENTICATE, value);
        }
        response
    }

    /// In front of `/mcp`: `None` lets an accepted bearer token through;
    /// else 401 with a challenge.
    pub fn check(&self, headers: &HeaderMap) -> Option<Reply> {
        let token = headers
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer "));
        let revoked = self.revoked_file.as_ref().is_some_and(|f| f.exists());
        if !revoked && token.is_some_and(|t| t.starts_with(&self.accept)) {
            return None;
        }
        let mut challenge = format!("Bearer resource_metadata=\"{}{PRM_PATH}\"", base(headers));
        if let Some(scope) = &self.scope {
            challenge.push_str(&format!(", scope=\"{scope}\""));
        }
        if token.is_some() {
            challenge.push_str(", error=\"invalid_token\"");
        }
        let mut response = reply(
            StatusCode::UNAUTHORIZED,
            "text/plain",
            "sign in first".into(),
        );
        if let Ok(value) = HeaderValue::from_str(&challenge) {
            response
                .headers_mut()
                .insert(header::WWW_AUTHENTICATE, value);
        }
        Some(response)
    }
}
