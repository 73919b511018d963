//! The documents discovery reads: protected-resource metadata (RFC 9728) and
//! authorization-server metadata (RFC 8414), parsed strictly and validated for
//! the server they were fetched for (its resource, the issuer's own origin for
//! every endpoint).

use serde::Deserialize;
use url::Url;

use super::error::OAuthError;
use super::net::Reply;
use super::origin;

pub(super) const PRM: &str = "protected-resource metadata";
pub(super) const ASM: &str = "authorization-server metadata";

/// A server's protected-resource metadata, validated for that server.
#[derive(Debug, Clone)]
pub struct ResourceMetadata {
    pub url: Url,
    pub resource: String,
    pub authorization_servers: Vec<String>,
    pub scopes_supported: Option<Vec<String>>,
}

/// How the authorization server's endpoints were learned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// RFC 8414 / OpenID metadata, issuer checked.
    Discovered,
    /// 2025-03-26: metadata at the MCP server's origin (issuer on that origin).
    LegacyMetadata,
    /// 2025-03-26: no metadata at all; `/authorize`, `/token`, `/register`.
    LegacyDefaults,
}

/// An authorization server, as far as the client needs it.
#[derive(Debug, Clone)]
pub struct ServerMetadata {
    pub issuer: String,
    pub authorization_endpoint: Option<Url>,
    pub token_endpoint: Url,
    pub registration_endpoint: Option<Url>,
    pub revocation_endpoint: Option<Url>,
    pub scopes_supported: Option<Vec<String>>,
    pub code_challenge_methods: Option<Vec<String>>,
    pub auth_methods: Option<Vec<String>>,
    pub cimd: bool,
    pub iss_parameter: bool,
    pub dpop_algs: Option<Vec<String>>,
    pub source: Source,
}

impl ServerMetadata {
    pub fn supports_auth_method(&self, method: &str) -> Option<bool> {
        self.auth_methods
            .as_ref()
            .map(|m| m.iter().any(|x| x == method))
    }

    pub fn offers_scope(&self, scope: &str) -> bool {
        self.scopes_supported
            .as_ref()
            .is_some_and(|s| s.iter().any(|x| x == scope))
    }

    /// The 2025-03-26 revision's default endpoints on the server's origin.
    pub(super) fn legacy_defaults(base: &Url, issuer: String) -> Self {
        let at = |p: &str| {
            let mut u = base.clone();
            u.set_path(p);
            u
        };
        ServerMetadata {
            issuer,
            authorization_endpoint: Some(at("/authorize")),
            token_endpoint: at("/token"),
            registration_endpoint: Some(at("/register")),
            revocation_endpoint: None,
            scopes_supported: None,
            code_challenge_methods: None,
            auth_methods: None,
            cimd: false,
            iss_parameter: false,
            dpop_algs: None,
            source: Source::LegacyDefaults,
        }
    }
}

/// Everything discovery learned.
#[derive(Debug, Clone)]
pub struct Discovery {
    /// The `resource` to ask tokens for (RFC 8707).
    pub resource: String,
    pub prm: Option<ResourceMetadata>,
    pub server: ServerMetadata,
}

#[derive(Deserialize)]
pub(super) struct RawPrm {
    resource: Option<String>,
    authorization_servers: Option<Vec<String>>,
    scopes_supported: Option<Vec<String>>,
}

#[derive(Deserialize)]
pub(super) struct RawServer {
    pub(super) issuer: Option<String>,
    authorization_endpoint: Option<String>,
    token_endpoint: Option<String>,
    registration_endpoint: Option<String>,
    revocation_endpoint: Option<String>,
    scopes_supported: Option<Vec<String>>,
    code_challenge_methods_supported: Option<Vec<String>>,
    token_endpoint_auth_methods_supported: Option<Vec<String>>,
    client_id_metadata_document_supported: Option<bool>,
    authorization_response_iss_parameter_supported: Option<bool>,
    dpop_signing_alg_values_supported: Option<Vec<String>>,
}

pub(super) fn read_prm(reply: &Reply, server: &Url) -> Result<ResourceMetadata, OAuthError> {
    let raw: RawPrm = reply.json(PRM)?;
    let bad = |problem: &str| OAuthError::BadDocument {
        what: PRM,
        url: reply.url.to_string(),
        problem: problem.to_string(),
    };
    let resource = raw.resource.ok_or_else(|| bad("it has no `resource`"))?;
    let parsed = Url::parse(&resource).map_err(|_| bad("its `resource` is not a URL"))?;
    if parsed.fragment().is_some() || !origin::resource_covers(&parsed, server) {
        return Err(OAuthError::ResourceMismatch {
            metadata_url: reply.url.to_string(),
            resource,
            server: server.to_string(),
        });
    }
    let authorization_servers = raw
        .authorization_servers
        .filter(|s| !s.is_empty())
        .ok_or_else(|| bad("it names no authorization server"))?;
    Ok(ResourceMetadata {
        url: reply.url.clone(),
        resource,
        authorization_servers,
        scopes_supported: raw.scopes_supported,
    })
}

pub(super) fn build(
    raw: RawServer,
    issuer: String,
    issuer_url: &Url,
    source: Source,
) -> Result<ServerMetadata, OAuthError> {
    let endpoint = |what: &'static str, raw: Option<String>| -> Result<Option<Url>, OAuthError> {
        let Some(raw) = raw else { return Ok(None) };
        let url = origin::endpoint(what, &raw)?;
        if !origin::same_origin(&url, issuer_url) {
            return Err(OAuthError::ForeignEndpoint {
                issuer: issuer.clone(),
                what,
                url: url.to_string(),
            });
        }
        Ok(Some(url))
    };
    let token_endpoint =
        endpoint("token endpoint", raw.token_endpoint)?.ok_or_else(|| OAuthError::BadDocument {
            what: ASM,
            url: issuer.clone(),
            problem: "it has no `token_endpoint`".into(),
        })?;
    Ok(ServerMetadata {
        authorization_endpoint: endpoint("authorization endpoint", raw.authorization_endpoint)?,
        token_endpoint,
        registration_endpoint: endpoint("registration endpoint", raw.registration_endpoint)?,
        revocation_endpoint: endpoint("revocation endpoint", raw.revocation_endpoint)?,
        scopes_supported: raw.scopes_supported,
        code_challenge_methods: raw.code_challenge_methods_supported,
        auth_methods: raw.token_endpoint_auth_methods_supported,
        cimd: raw.client_id_metadata_document_supported == Some(true),
        iss_parameter: raw.authorization_response_iss_parameter_supported == Some(true),
        dpop_algs: raw.dpop_signing_alg_values_supported,
        source,
        issuer,
    })
}
