//! Which authorization server to trust for a server, and its endpoints:
//! protected-resource metadata (RFC 9728) from the challenge's pointer, else
//! the well-known locations (path-suffixed, then root); then the authorization
//! server's metadata (RFC 8414, OpenID Connect discovery) in the spec's order,
//! its `issuer` checked against the URL it came from. Without protected-resource
//! metadata, and only when `auth = "oauth"`, the 2025-03-26 revision's
//! fallbacks: metadata at the server's origin, else its default endpoints.

use url::Url;

use super::challenge::Challenge;
use super::error::{Failure, OAuthError};
use super::metadata::{ASM, PRM, RawServer, build, read_prm};
use super::net::Net;
use super::origin;

pub use super::metadata::{Discovery, ResourceMetadata, ServerMetadata, Source};

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
    Ok(ServerMetadata::legacy_defaults(&base, base_text))
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
