//! An OAuth 2.1 authorization server on loopback for the sign-in tests: RFC 8414
//! metadata, dynamic registration, an authorization endpoint that redirects at
//! once (the person approving is the test), a token endpoint that checks PKCE,
//! refresh with rotation, revocation (RFC 7009) — and knobs that make it
//! misbehave in one way at a time. It records what it was asked.

use std::collections::HashMap;
use std::io::{Read as _, Write as _};
use std::net::{SocketAddr, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use base64::Engine as _;
use bytes::Bytes;
use http_body_util::{BodyExt as _, Full};
use hyper::body::Incoming;
use hyper::header::{self, HeaderValue};
use hyper::{Request, StatusCode};
use hyper_util::rt::TokioIo;
use serde_json::{Value, json};

/// What the token endpoint does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TokenMode {
    #[default]
    Ok,
    /// A 200 without `access_token`.
    NoAccessToken,
    /// A 200 of 1 MiB.
    Huge,
    /// Answers after this long.
    Slow(Duration),
}

/// Where the authorization endpoint redirects.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum RedirectMode {
    #[default]
    Normal,
    WrongState,
    WrongIss,
    /// To the redirect URI's host on another port.
    OtherPort,
}

#[derive(Debug, Clone, Default)]
pub struct Knobs {
    pub token: TokenMode,
    pub redirect: RedirectMode,
    /// The metadata names its token endpoint on another origin.
    pub foreign_token_endpoint: bool,
    /// The metadata's `issuer`, instead of this server's URL.
    pub issuer: Option<String>,
    /// Leave `code_challenge_methods_supported` out.
    pub no_pkce: bool,
    /// Refuse refresh tokens (`invalid_grant`).
    pub refuse_refresh: bool,
    /// `expires_in` of access tokens.
    pub expires_in: Option<u64>,
}

#[derive(Default)]
struct Inner {
    knobs: Knobs,
    url: String,
    next: u64,
    codes: HashMap<String, String>,
    refresh: Vec<String>,
    requests: Vec<String>,
    revoked: Vec<String>,
    issued: Vec<String>,
}

/// A running authorization server; stops with the test process.
#[derive(Clone)]
pub struct AuthServer {
    inner: Arc<Mutex<Inner>>,
    pub url: String,
}

impl AuthServer {
    pub fn start(knobs: Knobs) -> Self {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        listener.set_nonblocking(true).expect("nonblocking");
        let url = format!("http://{}", listener.local_addr().expect("addr"));
        let inner = Arc::new(Mutex::new(Inner {
            knobs,
            url: url.clone(),
            ..Inner::default()
        }));
        let state = Arc::clone(&inner);
        std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("runtime");
            rt.block_on(async move {
                let listener = tokio::net::TcpListener::from_std(listener).expect("listener");
                while let Ok((stream, _)) = listener.accept().await {
                    let state = Arc::clone(&state);
                    tokio::spawn(async move {
                        let service = hyper::service::service_fn(move |req| {
                            let state = Arc::clone(&state);
                            async move { Ok::<_, std::convert::Infallible>(route(state, req).await) }
                        });
                        let _ = hyper::server::conn::http1::Builder::new()
                            .serve_connection(TokioIo::new(stream), service)
                            .await;
                    });
                }
            });
        });
        Self { inner, url }
    }

    /// Every request, as `"METHOD /path"` (bodies are not kept: they hold secrets).
    pub fn requests(&self) -> Vec<String> {
        self.inner.lock().unwrap().requests.clone()
    }

    pub fn revoked(&self) -> Vec<String> {
        self.inner.lock().unwrap().revoked.clone()
    }

    /// Every token it issued (access and refresh): none may ever be printed.
    pub fn issued(&self) -> Vec<String> {
        self.inner.lock().unwrap().issued.clone()
    }

    pub fn set(&self, change: impl FnOnce(&mut Knobs)) {
        change(&mut self.inner.lock().unwrap().knobs);
    }
}

type S = Arc<Mutex<Inner>>;
type Response = hyper::Response<Full<Bytes>>;

/// The routes: RFC 8414 metadata, registration, authorization, token, revocation.
async fn route(s: S, req: Request<Incoming>) -> Response {
    let method = req.method().as_str().to_string();
    let path = req.uri().path().to_string();
    let query = req.uri().query().map(str::to_string);
    let body = match req.into_body().collect().await {
        Ok(b) => String::from_utf8_lossy(&b.to_bytes()).into_owned(),
        Err(_) => String::new(),
    };
    match (method.as_str(), path.as_str()) {
        ("GET", "/.well-known/oauth-authorization-server") => metadata(s),
        ("POST", "/register") => register(s, body),
        ("GET", "/authorize") => authorize(s, query),
        ("POST", "/token") => token(s, body).await,
        ("POST", "/revoke") => revoke(s, body),
        _ => reply(StatusCode::NOT_FOUND, None, String::new()),
    }
}

fn reply(status: StatusCode, content_type: Option<&'static str>, body: String) -> Response {
    let mut response = hyper::Response::new(Full::new(Bytes::from(body)));
    *response.status_mut() = status;
    if let Some(ct) = content_type {
        response
            .headers_mut()
            .insert(header::CONTENT_TYPE, HeaderValue::from_static(ct));
    }
    response
}

fn form(body: &str) -> HashMap<String, String> {
    url::form_urlencoded::parse(body.as_bytes())
        .map(|(k, v)| (k.into_owned(), v.into_owned()))
        .collect()
}

fn json_reply(status: StatusCode, body: Value) -> Response {
    reply(status, Some("application/json"), body.to_string())
}

fn metadata(s: S) -> Response {
    let mut s = s.lock().unwrap();
    s.requests
        .push("GET /.well-known/oauth-authorization-server".into());
    let url = s.url.clone();
    let token = if s.knobs.foreign_token_endpoint {
        "http://127.0.0.1:9/token".to_string()
    } else {
        format!("{url}/token")
    };
    let mut doc = json!({
        "issuer": s.knobs.issuer.clone().unwrap_or(url.clone()),
        "authorization_endpoint": format!("{url}/authorize"),
        "token_endpoint": token,
        "registration_endpoint": format!("{url}/register"),
        "revocation_endpoint": format!("{url}/revoke"),
        "response_types_supported": ["code"],
        "grant_types_supported": ["authorization_code", "refresh_token"],
        "token_endpoint_auth_methods_supported": ["none"],
        "code_challenge_methods_supported": ["S256"],
        "authorization_response_iss_parameter_supported": true,
    });
    if s.knobs.no_pkce {
        doc.as_object_mut()
            .unwrap()
            .remove("code_challenge_methods_supported");
    }
    json_reply(StatusCode::OK, doc)
}

fn register(s: S, body: String) -> Response {
    let mut s = s.lock().unwrap();
    s.requests.push("POST /register".into());
    let asked: Value = serde_json::from_str(&body).unwrap_or(Value::Null);
    s.next += 1;
    json_reply(
        StatusCode::CREATED,
        json!({"client_id": format!("client-{}", s.next), "redirect_uris": asked["redirect_uris"], "token_endpoint_auth_method": "none"}),
    )
}

fn authorize(s: S, q: Option<String>) -> Response {
    let mut s = s.lock().unwrap();
    s.requests.push("GET /authorize".into());
    let q = form(q.as_deref().unwrap_or(""));
    s.next += 1;
    let code = format!("code-{}", s.next);
    s.codes.insert(
        code.clone(),
        q.get("code_challenge").cloned().unwrap_or_default(),
    );
    let mut redirect = url::Url::parse(q.get("redirect_uri").map(String::as_str).unwrap_or(""))
        .expect("redirect_uri");
    let state = match s.knobs.redirect {
        RedirectMode::WrongState => "not-the-state".to_string(),
        _ => q.get("state").cloned().unwrap_or_default(),
    };
    let iss = match s.knobs.redirect {
        RedirectMode::WrongIss => "https://evil.example".to_string(),
        _ => s.url.clone(),
    };
    if s.knobs.redirect == RedirectMode::OtherPort {
        let port = redirect.port().unwrap_or(80);
        redirect
            .set_port(Some(if port == 65535 { 1 } else { port + 1 }))
            .unwrap();
    }
    redirect
        .query_pairs_mut()
        .append_pair("code", &code)
        .append_pair("state", &state)
        .append_pair("iss", &iss);
    let mut response = reply(StatusCode::FOUND, None, String::new());
    response.headers_mut().insert(
        header::LOCATION,
        HeaderValue::from_str(redirect.as_str()).unwrap(),
    );
    response
}

fn s256(verifier: &str) -> String {
    let digest = ring::digest::digest(&ring::digest::SHA256, verifier.as_bytes());
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(digest.as_ref())
}

fn mint(s: &mut Inner) -> Value {
    s.next += 1;
    let access = format!("tok-{}-{}", s.next, std::process::id());
    let refresh = format!("rt-{}-{}", s.next, std::process::id());
    s.issued.push(access.clone());
    s.issued.push(refresh.clone());
    s.refresh.push(refresh.clone());
    json!({"access_token": access, "token_type": "Bearer", "refresh_token": refresh,
           "expires_in": s.knobs.expires_in.unwrap_or(3600), "scope": "mcp"})
}

async fn token(state: S, body: String) -> Response {
    let mode = {
        let mut s = state.lock().unwrap();
        s.requests.push("POST /token".into());
        s.knobs.token
    };
    match mode {
        TokenMode::Slow(d) => tokio::time::sleep(d).await,
        TokenMode::Huge => {
            let big = format!(
                "{{\"access_token\":\"tok-huge\",\"pad\":\"{}\"}}",
                "x".repeat(1 << 20)
            );
            return reply(StatusCode::OK, Some("application/json"), big);
        }
        TokenMode::NoAccessToken => {
            return json_reply(
                StatusCode::OK,
                json!({"token_type": "Bearer", "refresh_token": "rt-orphan"}),
            );
        }
        TokenMode::Ok => {}
    }
    let f = form(&body);
    let mut s = state.lock().unwrap();
    let refused = |e: &str| {
        json_reply(
            StatusCode::BAD_REQUEST,
            json!({"error": e, "error_description": "refused by the test server"}),
        )
    };
    match f.get("grant_type").map(String::as_str) {
        Some("authorization_code") => {
            let code = f.get("code").cloned().unwrap_or_default();
            let Some(challenge) = s.codes.remove(&code) else {
                return refused("invalid_grant");
            };
            if s256(f.get("code_verifier").map(String::as_str).unwrap_or("")) != challenge {
                return refused("invalid_grant");
            }
            json_reply(StatusCode::OK, mint(&mut s))
        }
        Some("refresh_token") => {
            let rt = f.get("refresh_token").cloned().unwrap_or_default();
            if s.knobs.refuse_refresh || !s.refresh.contains(&rt) {
                return refused("invalid_grant");
            }
            // Rotation: the old refresh token is spent.
            s.refresh.retain(|r| r != &rt);
            json_reply(StatusCode::OK, mint(&mut s))
        }
        _ => refused("unsupported_grant_type"),
    }
}

fn revoke(s: S, body: String) -> Response {
    let mut s = s.lock().unwrap();
    s.requests.push("POST /revoke".into());
    if let Some(t) = form(&body).get("token") {
        s.revoked.push(t.clone());
        let t = t.clone();
        s.refresh.retain(|r| r != &t);
    }
    reply(StatusCode::OK, None, String::new())
}

/// The test as the person at the browser: GET `url` (the authorization
/// endpoint), then follow its redirect once — to the harness's listener, if it
/// points there. Returns the redirect's address.
pub fn browse(url: &str) -> String {
    let location = get(url)
        .expect("the authorization server answers")
        .lines()
        .find_map(|l| {
            l.strip_prefix("location: ")
                .or_else(|| l.strip_prefix("Location: "))
                .map(str::to_string)
        })
        .expect("the authorization endpoint redirects");
    // Nothing may listen there (a redirect to another port): that is the point.
    let _ = get(&location);
    location
}

/// A bare HTTP/1.1 GET, the whole response as text; `None` if nobody listens.
pub fn get(url: &str) -> Option<String> {
    let url = url::Url::parse(url).expect("url");
    let addr: SocketAddr = format!("{}:{}", url.host_str()?, url.port()?)
        .parse()
        .ok()?;
    let mut stream = TcpStream::connect_timeout(&addr, Duration::from_secs(10)).ok()?;
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .ok()?;
    let path = match url.query() {
        Some(q) => format!("{}?{q}", url.path()),
        None => url.path().to_string(),
    };
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"
    )
    .ok()?;
    let mut out = String::new();
    let _ = stream.read_to_string(&mut out);
    Some(out)
}
