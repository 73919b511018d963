//! Where the browser comes back: a listener on 127.0.0.1 (an ephemeral port
//! unless `callback_port` says otherwise) for `/callback`, and the same
//! redirect pasted by hand when the browser runs on another machine.

use hyper::{Method, StatusCode};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;
use url::Url;

use super::error::OAuthError;
use super::serve::{Reply, reply, serve};

/// The parameters of an authorization response (RFC 6749 §4.1.2, RFC 9207).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Callback {
    pub code: Option<String>,
    pub state: Option<String>,
    pub iss: Option<String>,
    pub error: Option<String>,
    pub error_description: Option<String>,
}

impl Callback {
    pub fn from_query(query: &str) -> Self {
        let mut cb = Callback::default();
        for (k, v) in url::form_urlencoded::parse(query.as_bytes()) {
            let slot = match k.as_ref() {
                "code" => &mut cb.code,
                "state" => &mut cb.state,
                "iss" => &mut cb.iss,
                "error" => &mut cb.error,
                "error_description" => &mut cb.error_description,
                _ => continue,
            };
            // The first value counts; a repeated parameter is not a second chance.
            if slot.is_none() {
                *slot = Some(v.into_owned());
            }
        }
        cb
    }
}

const PATH: &str = "/callback";

/// A running redirect listener; stops when dropped.
pub struct Listener {
    redirect_uri: Url,
    received: mpsc::Receiver<Callback>,
    stop: CancellationToken,
}

impl Listener {
    pub async fn bind(port: Option<u16>) -> Result<Self, OAuthError> {
        let addr = std::net::SocketAddr::from(([127, 0, 0, 1], port.unwrap_or(0)));
        let socket =
            tokio::net::TcpListener::bind(addr)
                .await
                .map_err(|e| OAuthError::Listener {
                    problem: format!("cannot listen on {addr} ({e})"),
                })?;
        let local = socket.local_addr().map_err(|e| OAuthError::Listener {
            problem: e.to_string(),
        })?;
        let redirect_uri = Url::parse(&format!("http://127.0.0.1:{}{PATH}", local.port()))
            .map_err(|e| OAuthError::Listener {
                problem: e.to_string(),
            })?;
        let (tx, received) = mpsc::channel(4);
        let stop = CancellationToken::new();
        let route = move |request: hyper::Request<hyper::body::Incoming>| {
            let answer = arrived(&tx, request.method(), request.uri());
            async move { answer }
        };
        tokio::spawn(serve(socket, route, stop.clone()));
        Ok(Self {
            redirect_uri,
            received,
            stop,
        })
    }

    pub fn redirect_uri(&self) -> &Url {
        &self.redirect_uri
    }

    /// The next redirect that reaches the listener.
    pub async fn next(&mut self) -> Option<Callback> {
        self.received.recv().await
    }
}

impl Drop for Listener {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

fn arrived(tx: &mpsc::Sender<Callback>, method: &Method, uri: &hyper::Uri) -> Reply {
    if uri.path() != PATH {
        return reply(StatusCode::NOT_FOUND, "text/plain", "not found\n");
    }
    if method != Method::GET {
        return reply(StatusCode::METHOD_NOT_ALLOWED, "text/plain", "GET only\n");
    }
    let _ = tx.try_send(Callback::from_query(uri.query().unwrap_or("")));
    // A fixed page: nothing from the query is echoed back into it.
    reply(
        StatusCode::OK,
        "text/html; charset=utf-8",
        "<!doctype html><meta charset=utf-8><title>mcp-harness</title>\
         <p>mcp-harness received the sign-in. You can close this tab and return to the terminal.</p>",
    )
}

/// A redirect URL pasted by the operator: it must be the redirect this sign-in
/// waits for (same scheme, host, port and path), else it is refused.
pub fn parse_pasted(text: &str, redirect: &Url) -> Result<Callback, OAuthError> {
    let text = text.trim();
    let url = Url::parse(text).map_err(|_| OAuthError::NotOurRedirect {
        problem: "it is not a URL".into(),
    })?;
    let port = |u: &Url| u.port_or_known_default().unwrap_or(0);
    if url.scheme() != redirect.scheme() || url.host_str() != redirect.host_str() {
        return Err(OAuthError::NotOurRedirect {
            problem: format!(
                "it goes to {}://{}, not {}://{}",
                url.scheme(),
                url.host_str().unwrap_or(""),
                redirect.scheme(),
                redirect.host_str().unwrap_or("")
            ),
        });
    }
    if port(&url) != port(redirect) {
        return Err(OAuthError::NotOurRedirect {
            problem: format!(
                "it goes to port {}, but this sign-in listens on port {}",
                port(&url),
                port(redirect)
            ),
        });
    }
    if url.path() != redirect.path() {
        return Err(OAuthError::NotOurRedirect {
            problem: format!("its path is {}, not {}", url.path(), redirect.path()),
        });
    }
    Ok(Callback::from_query(url.query().unwrap_or("")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pasted_redirects_must_be_ours() {
        let ours = Url::parse("http://127.0.0.1:4321/callback").unwrap();
        let cb = parse_pasted(
            " http://127.0.0.1:4321/callback?code=abc&state=s1&iss=https%3A%2F%2Fas.example&code=evil\n",
            &ours,
        )
        .unwrap();
        assert_eq!(cb.code.as_deref(), Some("abc"));
        assert_eq!(cb.state.as_deref(), Some("s1"));
        assert_eq!(cb.iss.as_deref(), Some("https://as.example"));
        let other_port = parse_pasted("http://127.0.0.1:4322/callback?code=abc", &ours);
        assert!(
            matches!(&other_port, Err(OAuthError::NotOurRedirect { problem }) if problem.contains("port 4322")),
            "{other_port:?}"
        );
        assert!(parse_pasted("http://evil.example:4321/callback?code=a", &ours).is_err());
        assert!(parse_pasted("http://127.0.0.1:4321/other?code=a", &ours).is_err());
        assert!(parse_pasted("not a url", &ours).is_err());
    }
}
