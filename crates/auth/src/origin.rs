//! Where OAuth traffic may go: https, or plain http to loopback only; which
//! URLs count as the same origin; and the canonical form of a resource.

use url::{Host, Url};

use super::error::OAuthError;

/// 127.0.0.0/8, ::1 and the name `localhost` (nothing else is loopback: a name
/// that merely resolves there could resolve elsewhere tomorrow).
pub fn is_loopback(url: &Url) -> bool {
    match url.host() {
        Some(Host::Ipv4(ip)) => ip.is_loopback(),
        Some(Host::Ipv6(ip)) => ip.is_loopback(),
        Some(Host::Domain(name)) => name.eq_ignore_ascii_case("localhost"),
        None => false,
    }
}

/// Parses `raw` as an absolute http(s) URL that OAuth may talk to.
pub fn endpoint(what: &'static str, raw: &str) -> Result<Url, OAuthError> {
    let url = Url::parse(raw).map_err(|e| OAuthError::BadUrl {
        what,
        url: raw.to_string(),
        problem: e.to_string(),
    })?;
    check(what, &url)?;
    Ok(url)
}

/// https anywhere; http only to loopback. No user info, no fragment.
pub fn check(what: &'static str, url: &Url) -> Result<(), OAuthError> {
    let bad = |problem: &str| OAuthError::BadUrl {
        what,
        url: url.to_string(),
        problem: problem.to_string(),
    };
    match url.scheme() {
        "https" => {}
        "http" if is_loopback(url) => {}
        "http" => {
            return Err(OAuthError::InsecureEndpoint {
                what,
                url: url.to_string(),
            });
        }
        _ => return Err(bad("not an http(s) URL")),
    }
    if url.host().is_none() {
        return Err(bad("no host"));
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err(bad("user info in the URL"));
    }
    if url.fragment().is_some() {
        return Err(bad("a fragment"));
    }
    Ok(())
}

/// Scheme, host and port equal (ports compared with their defaults filled in).
pub fn same_origin(a: &Url, b: &Url) -> bool {
    a.scheme() == b.scheme()
        && a.host_str().map(str::to_ascii_lowercase) == b.host_str().map(str::to_ascii_lowercase)
        && a.port_or_known_default() == b.port_or_known_default()
}

/// `scheme://host[:port]`, the origin alone (a base for well-known URLs).
pub fn origin_of(url: &Url) -> Url {
    let mut origin = url.clone();
    origin.set_path("");
    origin.set_query(None);
    origin.set_fragment(None);
    origin
}

/// The canonical URI of an MCP server as a `resource` (RFC 8707, and the MCP
/// spec's advice): no fragment, and no trailing slash on a bare origin.
pub fn canonical_resource(url: &Url) -> String {
    let mut url = url.clone();
    url.set_fragment(None);
    let text = url.to_string();
    if url.path() == "/" && url.query().is_none() {
        text.trim_end_matches('/').to_string()
    } else {
        text
    }
}

/// Whether a protected-resource metadata `resource` identifies `server`: the
/// same URL, or the same origin with a path that is a whole-segment prefix of
/// the server's (metadata at the root may describe the whole origin).
pub fn resource_covers(resource: &Url, server: &Url) -> bool {
    if !same_origin(resource, server) {
        return false;
    }
    let (r, s) = (resource.path(), server.path());
    r == s
        || r == "/"
        || (s.starts_with(r) && (r.ends_with('/') || s.as_bytes().get(r.len()) == Some(&b'/')))
}

/// Issuer identifiers are compared as strings (RFC 8414 §3.3); the only
/// leniency is a trailing slash on a bare origin, which URL parsers add.
pub fn same_issuer(a: &str, b: &str) -> bool {
    let trim = |s: &str| -> String {
        match Url::parse(s) {
            Ok(u) if u.path() == "/" && u.query().is_none() && s.ends_with('/') => {
                s[..s.len() - 1].to_string()
            }
            _ => s.to_string(),
        }
    };
    a == b || trim(a) == trim(b)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn u(s: &str) -> Url {
        Url::parse(s).unwrap()
    }

    #[test]
    fn http_is_only_for_loopback() {
        assert!(endpoint("token endpoint", "https://as.example/token").is_ok());
        for ok in [
            "http://127.0.0.1:9/t",
            "http://127.8.9.10/t",
            "http://[::1]:9/t",
            "http://localhost:9/t",
            "http://LOCALHOST/t",
        ] {
            assert!(endpoint("token endpoint", ok).is_ok(), "{ok}");
        }
        for bad in [
            "http://as.example/token",
            "http://10.0.0.1/t",
            "http://localhost.evil.example/t",
            "http://127.0.0.1.nip.io/t",
        ] {
            assert!(
                matches!(
                    endpoint("token endpoint", bad),
                    Err(OAuthError::InsecureEndpoint { .. })
                ),
                "{bad}"
            );
        }
        assert!(endpoint("x", "ftp://as.example/").is_err());
        assert!(endpoint("x", "https://user:pw@as.example/").is_err());
        assert!(endpoint("x", "https://as.example/#frag").is_err());
    }

    #[test]
    fn resources() {
        assert_eq!(
            canonical_resource(&u("https://Mcp.Example.com/")),
            "https://mcp.example.com"
        );
        assert_eq!(
            canonical_resource(&u("https://mcp.example.com/mcp#x")),
            "https://mcp.example.com/mcp"
        );
        let server = u("https://mcp.example.com/api/mcp");
        assert!(resource_covers(
            &u("https://mcp.example.com/api/mcp"),
            &server
        ));
        assert!(resource_covers(&u("https://mcp.example.com"), &server));
        assert!(resource_covers(&u("https://mcp.example.com/api"), &server));
        assert!(!resource_covers(&u("https://mcp.example.com/ap"), &server));
        assert!(!resource_covers(
            &u("https://evil.example.com/api/mcp"),
            &server
        ));
        assert!(!resource_covers(
            &u("https://mcp.example.com:8443/api/mcp"),
            &server
        ));
    }

    #[test]
    fn issuers_compare_as_strings() {
        assert!(same_issuer("https://as.example", "https://as.example/"));
        assert!(!same_issuer(
            "https://as.example/t",
            "https://as.example/t/"
        ));
        assert!(!same_issuer("https://AS.example", "https://as.example"));
        assert!(!same_issuer("https://as.example", "https://as.example:443"));
    }
}
