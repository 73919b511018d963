//! The front door, before rmcp sees a request: a bearer token of a configured
//! client (compared in constant time), an `Origin` that is loopback if there is
//! one at all (a web page's DNS rebinding is refused), and a session used only
//! by the client that opened it (another client's session id is unknown here:
//! 404, as for any unknown session, so hosts re-initialize).

use std::collections::HashMap;
use std::sync::Mutex;

use hyper::StatusCode;
use hyper::header::{AUTHORIZATION, HeaderMap, ORIGIN};
use sha2::{Digest, Sha256};

/// The session header of Streamable HTTP.
pub(super) const SESSION: &str = "mcp-session-id";

/// A client's token, kept as its digest: the token itself is not kept in
/// memory longer than it takes to start, and digests compare in constant time
/// whatever the lengths.
pub(super) struct Key {
    pub(super) client: String,
    digest: [u8; 32],
}

impl Key {
    pub(super) fn new(client: &str, token: &str) -> Self {
        Self {
            client: client.to_string(),
            digest: Sha256::digest(token.as_bytes()).into(),
        }
    }
}

/// Why a request is turned away.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    #[error("a bearer token of a configured client is required")]
    NoToken,
    #[error("the Origin is not a loopback origin")]
    Origin,
    #[error("unknown session")]
    Session,
}

impl Refusal {
    pub(super) fn status(self) -> StatusCode {
        match self {
            Refusal::NoToken => StatusCode::UNAUTHORIZED,
            Refusal::Origin => StatusCode::FORBIDDEN,
            Refusal::Session => StatusCode::NOT_FOUND,
        }
    }
}

/// The client whose token the request carries.
pub(super) fn authenticate<'a>(keys: &'a [Key], headers: &HeaderMap) -> Result<&'a str, Refusal> {
    let token = headers
        .get(AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| {
            let (scheme, token) = v.trim().split_once(' ')?;
            scheme
                .eq_ignore_ascii_case("bearer")
                .then_some(token.trim())
        })
        .filter(|t| !t.is_empty())
        .ok_or(Refusal::NoToken)?;
    let digest: [u8; 32] = Sha256::digest(token.as_bytes()).into();
    // Every key is compared, whichever matches, so timing says nothing.
    let mut found = None;
    for key in keys {
        let differs = key
            .digest
            .iter()
            .zip(digest.iter())
            .fold(0u8, |acc, (a, b)| acc | (a ^ b));
        if differs == 0 {
            found = Some(key.client.as_str());
        }
    }
    found.ok_or(Refusal::NoToken)
}

/// An `Origin` header, when present, must be `http(s)://` a loopback host:
/// `localhost`, `127.0.0.0/8` or `[::1]`. `null` and everything else is refused.
pub(super) fn check_origin(headers: &HeaderMap) -> Result<(), Refusal> {
    let Some(origin) = headers.get(ORIGIN) else {
        return Ok(());
    };
    let origin = origin.to_str().map_err(|_| Refusal::Origin)?;
    if loopback_origin(origin) {
        Ok(())
    } else {
        Err(Refusal::Origin)
    }
}

/// An origin is `scheme://host[:port]` and nothing else; it passes when its
/// host is loopback as OAuth counts it (127.0.0.0/8, ::1, `localhost`).
fn loopback_origin(origin: &str) -> bool {
    let Ok(url) = url::Url::parse(origin) else {
        return false;
    };
    matches!(url.scheme(), "http" | "https")
        && url.username().is_empty()
        && url.password().is_none()
        && url.path() == "/"
        && url.query().is_none()
        && url.fragment().is_none()
        && crate::mcp::auth::origin::is_loopback(&url)
}

/// Which client opened which session.
#[derive(Default)]
pub(super) struct Sessions(Mutex<HashMap<String, String>>);

impl Sessions {
    /// A request naming a session another client opened is refused as an
    /// unknown session; one rmcp does not know is left to rmcp (404 too).
    pub(super) fn check(&self, client: &str, headers: &HeaderMap) -> Result<(), Refusal> {
        let Some(id) = headers.get(SESSION).and_then(|v| v.to_str().ok()) else {
            return Ok(());
        };
        match self.lock().get(id) {
            Some(owner) if owner != client => Err(Refusal::Session),
            _ => Ok(()),
        }
    }

    /// The session a response opened, bound to the client that asked.
    pub(super) fn opened(&self, client: &str, request: &HeaderMap, response: &HeaderMap) {
        if request.contains_key(SESSION) {
            return;
        }
        if let Some(id) = response.get(SESSION).and_then(|v| v.to_str().ok()) {
            self.lock().insert(id.to_string(), client.to_string());
        }
    }

    pub(super) fn closed(&self, headers: &HeaderMap) {
        if let Some(id) = headers.get(SESSION).and_then(|v| v.to_str().ok()) {
            self.lock().remove(id);
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, String>> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hyper::header::HeaderValue;

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.insert(*k, HeaderValue::from_str(v).unwrap());
        }
        h
    }

    #[test]
    fn only_loopback_origins_pass() {
        for ok in [
            "http://localhost",
            "http://localhost:3000",
            "https://127.0.0.1:8443",
            "http://127.1.2.3",
            "http://[::1]:80",
        ] {
            assert!(loopback_origin(ok), "{ok}");
        }
        for bad in [
            "null",
            "http://evil.example",
            "http://localhost.evil.example",
            "http://127.0.0.1.nip.io",
            "http://127.0.0.1@evil.example",
            "file://localhost",
            "http://localhost:99999",
            "http://[::2]",
        ] {
            assert!(!loopback_origin(bad), "{bad}");
        }
        assert_eq!(check_origin(&headers(&[])), Ok(()));
        assert_eq!(
            check_origin(&headers(&[("origin", "http://evil.example")])),
            Err(Refusal::Origin)
        );
    }

    #[test]
    fn a_token_names_its_client_and_nothing_else_passes() {
        let keys = [Key::new("a", "token-a"), Key::new("b", "token-b")];
        let auth = |v: &str| authenticate(&keys, &headers(&[("authorization", v)]));
        assert_eq!(auth("Bearer token-a"), Ok("a"));
        assert_eq!(auth("bearer token-b"), Ok("b"));
        assert_eq!(auth("Bearer token-c"), Err(Refusal::NoToken));
        assert_eq!(auth("Basic token-a"), Err(Refusal::NoToken));
        assert_eq!(auth("Bearer "), Err(Refusal::NoToken));
        assert_eq!(authenticate(&keys, &headers(&[])), Err(Refusal::NoToken));
    }

    #[test]
    fn a_session_belongs_to_the_client_that_opened_it() {
        let sessions = Sessions::default();
        sessions.opened("a", &headers(&[]), &headers(&[(SESSION, "s1")]));
        let with = headers(&[(SESSION, "s1")]);
        assert_eq!(sessions.check("a", &with), Ok(()));
        assert_eq!(sessions.check("b", &with), Err(Refusal::Session));
        sessions.closed(&with);
        assert_eq!(sessions.check("b", &with), Ok(()));
    }
}
