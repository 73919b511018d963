//! Which authorization server to trust for a server, and its endpoints:
//! protected-resource metadata (RFC 9728) from the challenge's pointer, else
//! the well-known locations (path-suffixed, then root); then the authorization
//! server's metadata (RFC 8414, OpenID Connect discovery) in the spec's order,
//! its `issuer` checked against the URL it came from. Without protected-resource
//! metadata, and only when `auth = "oauth"`, the 2025-03-26 revision's
//! fallbacks: metadata at the server's origin, else its default endpoints.

use serde::Deserialize;
use url::Url;

use super::challenge::Challenge;
use super::error::{Failure, OAuthError};
use super::net::{Net, Reply};
use super::origin;

const PRM: &str = "protected-resource metadata";
const ASM: &str = "authorization-server metadata";

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
struct RawPrm {
    resource: Option<String>,
    authorization_servers: Option<Vec<String>>,
    scopes_supported: Option<Vec<String>>,
}

#[derive(Deserialize)]
struct RawServer {
    issuer: Option<String>,
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

/// Finds the authorization server for `server` (the MCP endpoint URL).
pub async fn discover(
    net: &Net,
    server: &Url,
    challenge: &Challenge,
    allow_legacy: bool,
) -> Result<Discovery, Failure> {
    if let Some(prm) = resource_metadata(net, server, challenge).await? {
        let metadata = authorization_server(net, &prm).await?;
        return Ok(Discovery {
            resource: prm.resource.clone(),
            prm: Some(prm),
            server: metadata,
        });
    }
    if !allow_legacy {
        return Err(OAuthError::NoResourceMetadata {
            url: server.to_string(),
        }
        .into());
    }
    Ok(Discovery {
        resource: origin::canonical_resource(server),
        prm: None,
        server: legacy(net, server).await?,
    })
}

async fn resource_metadata(
    net: &Net,
    server: &Url,
    challenge: &Challenge,
) -> Result<Option<ResourceMetadata>, Failure> {
    if let Some(pointer) = challenge.resource_metadata() {
        let url = server.join(pointer).map_err(|e| OAuthError::BadUrl {
            what: PRM,
            url: pointer.to_string(),
            problem: e.to_string(),
        })?;
        if !origin::same_origin(&url, server) {
            return Err(OAuthError::ForeignMetadata {
                server: server.to_string(),
                url: url.to_string(),
            }
            .into());
        }
        let reply = net.get(PRM, &url).await?;
        if reply.ok() {
            // The server named this document: it must be usable.
            return Ok(Some(read_prm(&reply, server)?));
        }
    }
    for url in well_known(server, "oauth-protected-resource") {
        let reply = net.get(PRM, &url).await?;
        if reply.ok() {
            match read_prm(&reply, server) {
                // A guessed location answering with something else (a web app's
                // catch-all page) is not metadata; a real document for another
                // resource is an error.
                Err(OAuthError::BadDocument { .. }) => continue,
                other => return Ok(Some(other?)),
            }
        }
    }
    Ok(None)
}

/// `/.well-known/{suffix}{path}` then `/.well-known/{suffix}` (RFC 9728 §3.1).
fn well_known(server: &Url, suffix: &str) -> Vec<Url> {
    let path = server.path().trim_matches('/');
    let mut out = Vec::new();
    let mut at = |p: String| {
        let mut url = origin::origin_of(server);
        url.set_path(&p);
        out.push(url);
    };
    if !path.is_empty() {
        at(format!("/.well-known/{suffix}/{path}"));
    }
    at(format!("/.well-known/{suffix}"));
    out
}

fn read_prm(reply: &Reply, server: &Url) -> Result<ResourceMetadata, OAuthError> {
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

async fn authorization_server(
    net: &Net,
    prm: &ResourceMetadata,
) -> Result<ServerMetadata, Failure> {
    let mut last: Option<Failure> = None;
    for issuer in &prm.authorization_servers {
        match one_server(net, issuer).await {
            Ok(Some(found)) => return Ok(found),
            Ok(None) => {}
            // An issuer mismatch is not a reason to try elsewhere: it is refused.
            Err(f) if matches!(f.error, OAuthError::IssuerMismatch { .. }) => return Err(f),
            Err(f) => last = Some(f),
        }
    }
    if let (Some(f), 1) = (&last, prm.authorization_servers.len()) {
        return Err(f.clone());
    }
    Err(OAuthError::NoAuthorizationServer {
        metadata_url: prm.url.to_string(),
        servers: prm.authorization_servers.join(", "),
    }
    .into())
}

/// RFC 8414 §3.1 and the MCP spec's order for issuers with and without a path.
fn metadata_urls(issuer: &Url) -> Vec<Url> {
    let path = issuer.path().trim_matches('/');
    let paths = if path.is_empty() {
        vec![
            "/.well-known/oauth-authorization-server".to_string(),
            "/.well-known/openid-configuration".to_string(),
        ]
    } else {
        vec![
            format!("/.well-known/oauth-authorization-server/{path}"),
            format!("/.well-known/openid-configuration/{path}"),
            format!("/{path}/.well-known/openid-configuration"),
        ]
    };
    paths
        .into_iter()
        .map(|p| {
            let mut url = origin::origin_of(issuer);
            url.set_path(&p);
            url
        })
        .collect()
}

async fn one_server(net: &Net, issuer: &str) -> Result<Option<ServerMetadata>, Failure> {
    let issuer_url = origin::endpoint("authorization server", issuer)?;
    for url in metadata_urls(&issuer_url) {
        let reply = net.get(ASM, &url).await?;
        if !reply.ok() {
            continue;
        }
        let Ok(raw) = reply.json::<RawServer>(ASM) else {
            continue;
        };
        let found = raw.issuer.clone().unwrap_or_default();
        if !origin::same_issuer(&found, issuer) {
            return Err(OAuthError::IssuerMismatch {
                metadata_url: url.to_string(),
                expected: issuer.to_string(),
                found: if found.is_empty() {
                    "(none)".into()
                } else {
                    found
                },
            }
            .into());
        }
        return Ok(Some(build(raw, found, &issuer_url, Source::Discovered)?));
    }
    Ok(None)
}

/// The 2025-03-26 revision: metadata at the server's origin, else defaults.
async fn legacy(net: &Net, server: &Url) -> Result<ServerMetadata, Failure> {
    let base = origin::origin_of(server);
    let mut url = base.clone();
    url.set_path("/.well-known/oauth-authorization-server");
    let reply = net.get(ASM, &url).await?;
    let base_text = origin::canonical_resource(&base);
    if reply.ok()
        && let Ok(raw) = reply.json::<RawServer>(ASM)
    {
        // That revision derived the metadata location from the server's origin,
        // not from the issuer: an issuer on the same origin is accepted.
        let issuer = raw.issuer.clone().unwrap_or_else(|| base_text.clone());
        let issuer_url = Url::parse(&issuer)
            .ok()
            .filter(|u| origin::same_origin(u, &base));
        let Some(issuer_url) = issuer_url else {
            return Err(OAuthError::IssuerMismatch {
                metadata_url: url.to_string(),
                expected: base_text,
                found: issuer,
            }
            .into());
        };
        return Ok(build(raw, issuer, &issuer_url, Source::LegacyMetadata)?);
    }
    let at = |p: &str| {
        let mut u = base.clone();
        u.set_path(p);
        u
    };
    Ok(ServerMetadata {
        issuer: base_text,
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
    })
}

fn build(
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

#[cfg(test)]
mod tests {
    use super::*;

    fn strs(urls: Vec<Url>) -> Vec<String> {
        urls.into_iter().map(|u| u.to_string()).collect()
    }

    #[test]
    fn well_known_order() {
        let server = Url::parse("https://mcp.example.com/public/mcp").unwrap();
        assert_eq!(
            strs(well_known(&server, "oauth-protected-resource")),
            [
                "https://mcp.example.com/.well-known/oauth-protected-resource/public/mcp",
                "https://mcp.example.com/.well-known/oauth-protected-resource"
            ]
        );
        let root = Url::parse("https://mcp.example.com").unwrap();
        assert_eq!(
            strs(well_known(&root, "oauth-protected-resource")),
            ["https://mcp.example.com/.well-known/oauth-protected-resource"]
        );
        let tenant = Url::parse("https://auth.example.com/tenant1").unwrap();
        assert_eq!(
            strs(metadata_urls(&tenant)),
            [
                "https://auth.example.com/.well-known/oauth-authorization-server/tenant1",
                "https://auth.example.com/.well-known/openid-configuration/tenant1",
                "https://auth.example.com/tenant1/.well-known/openid-configuration"
            ]
        );
        let plain = Url::parse("https://auth.example.com").unwrap();
        assert_eq!(
            strs(metadata_urls(&plain)),
            [
                "https://auth.example.com/.well-known/oauth-authorization-server",
                "https://auth.example.com/.well-known/openid-configuration"
            ]
        );
    }
}
