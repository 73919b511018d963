//! Each way a sign-in can go wrong, one at a time: refused in the operator's
//! words, the alias left `auth_required`, no token printed or stored.

use super::*;

/// One misbehaviour: the login fails with `what` (each part) in the
/// operator's words, the alias stays `auth_required`, no token is printed or stored.
fn refused(knobs: Knobs, gate: &[&str], what: &str) -> Fixture {
    let f = fixture(knobs, gate, 3_000);
    let run = login(&f, no_paste);
    for part in what.split(" … ") {
        assert_auth_required(&run, part);
    }
    assert_no_token(&f, &run.text());
    assert_eq!(check(&f)["error"]["code"], "auth_required");
    assert!(
        !f.env
            .path("xdg-data/mcp-harness/oauth/tokens.json")
            .exists()
            || !std::fs::read_to_string(f.env.path("xdg-data/mcp-harness/oauth/tokens.json"))
                .unwrap()
                .contains("tok-")
    );
    f
}

#[test]
fn metadata_pointing_at_another_origin_is_refused() {
    refused(
        Knobs {
            foreign_token_endpoint: true,
            ..Knobs::default()
        },
        &[],
        "points its token endpoint at another origin",
    );
}

#[test]
fn a_mismatched_resource_is_refused_before_any_sign_in() {
    let f = refused(
        Knobs::default(),
        &["--oauth-resource", "https://evil.example/mcp"],
        "describes the resource https://evil.example/mcp, not this server",
    );
    assert!(f.auth.requests().is_empty(), "{:?}", f.auth.requests());
}

#[test]
fn an_issuer_that_differs_from_the_metadata_url_is_refused() {
    let f = refused(
        Knobs {
            issuer: Some("https://evil.example".into()),
            ..Knobs::default()
        },
        &[],
        "names the issuer https://evil.example",
    );
    assert!(!f.auth.requests().iter().any(|r| r == "POST /register"));
}

#[test]
fn a_server_without_pkce_is_refused() {
    refused(
        Knobs {
            no_pkce: true,
            ..Knobs::default()
        },
        &[],
        "does not advertise PKCE with S256",
    );
}

#[test]
fn a_wrong_state_is_refused_before_the_code_is_used() {
    let f = refused(
        Knobs {
            redirect: RedirectMode::WrongState,
            ..Knobs::default()
        },
        &[],
        "different `state`",
    );
    assert!(!f.auth.requests().iter().any(|r| r == "POST /token"));
}

#[test]
fn a_wrong_iss_is_refused_before_the_code_is_used() {
    let f = refused(
        Knobs {
            redirect: RedirectMode::WrongIss,
            ..Knobs::default()
        },
        &[],
        "names the issuer https://evil.example, but the sign-in was started with",
    );
    assert!(!f.auth.requests().iter().any(|r| r == "POST /token"));
}

#[test]
fn a_token_response_without_access_token_is_refused() {
    refused(
        Knobs {
            token: TokenMode::NoAccessToken,
            ..Knobs::default()
        },
        &[],
        "has no `access_token`",
    );
}

#[test]
fn a_huge_token_response_is_refused() {
    refused(
        Knobs {
            token: TokenMode::Huge,
            ..Knobs::default()
        },
        &[],
        "sent more than 262144 bytes",
    );
}

#[test]
fn a_slow_authorization_server_costs_at_most_the_connect_timeout() {
    let started = Instant::now();
    refused(
        Knobs {
            token: TokenMode::Slow(Duration::from_secs(60)),
            ..Knobs::default()
        },
        &[],
        // The token request's own timeout, or the connect deadline: whichever
        // comes first names the token endpoint and the connect timeout.
        "3000 ms … the token endpoint at",
    );
    // Generous: the point is that nothing waits for the server's minute.
    assert!(
        started.elapsed() < Duration::from_secs(45),
        "{:?}",
        started.elapsed()
    );
}

#[test]
fn an_authorization_server_that_is_down_is_named() {
    let env = TestEnv::new();
    // A port nobody listens on (bound, then released).
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let issuer = format!("http://127.0.0.1:{port}");
    let (mut server, url) = http_demo(&env, "alpha", &["--oauth-issuer", &issuer]);
    env.config(&format!(
        "[servers.remote]\nurl = \"{url}\"\nconnect_timeout_ms = 3000\n{POLICY}"
    ));
    let run = Run::from(env.run(&["login", "remote", "--no-browser"]));
    let _ = server.kill();
    let _ = server.wait();
    assert_auth_required(
        &run,
        &format!("could not reach the authorization-server metadata at {issuer}"),
    );
}

/// A loopback listener that answers every request with `reply` and records
/// what it was sent.
fn canned(reply: &'static str) -> (u16, std::sync::Arc<std::sync::Mutex<Vec<String>>>) {
    use std::io::Read as _;
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let log = std::sync::Arc::clone(&seen);
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { return };
            stream.set_read_timeout(Some(Duration::from_secs(5))).ok();
            let mut buf = [0u8; 8192];
            let n = stream.read(&mut buf).unwrap_or(0);
            log.lock()
                .unwrap()
                .push(String::from_utf8_lossy(&buf[..n]).into_owned());
            let _ = stream.write_all(reply.as_bytes());
        }
    });
    (port, seen)
}

#[test]
fn a_token_is_never_sent_on_a_redirect_to_another_origin() {
    let (catcher, caught) = canned("HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n");
    let redirect: &'static str = Box::leak(
        format!(
            "HTTP/1.1 307 Temporary Redirect\r\nLocation: http://127.0.0.1:{catcher}/mcp\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
        )
        .into_boxed_str(),
    );
    let (port, seen) = canned(redirect);
    let env = TestEnv::new();
    let url = format!("http://127.0.0.1:{port}/mcp");
    // A token stored for this server (as `login` would have left it).
    let store = env.path("xdg-data/mcp-harness/oauth");
    std::fs::create_dir_all(&store).unwrap();
    std::fs::write(
        store.join("tokens.json"),
        serde_json::json!({"version": 1, "tokens": [{
            "issuer": "http://127.0.0.1:9", "resource": url, "client_id": "c",
            "access_token": "tok-only-for-this-server", "token_type": "Bearer",
            "obtained_at": 1, "token_endpoint": "http://127.0.0.1:9/token"}]})
        .to_string(),
    )
    .unwrap();
    env.config(&format!(
        "[servers.remote]\nurl = \"{url}\"\nconnect_timeout_ms = 3000\n{POLICY}"
    ));
    let out = env.run(&["check", "--json"]);
    let server = json(&out)["servers"][0].clone();
    assert_eq!(server["status"], "failed", "{server}");
    // Its own server got the token; the other origin got nothing at all.
    assert!(
        seen.lock()
            .unwrap()
            .iter()
            .any(|r| r.contains("Bearer tok-only-for-this-server")),
        "{:?}",
        seen.lock().unwrap()
    );
    assert!(
        caught.lock().unwrap().is_empty(),
        "{:?}",
        caught.lock().unwrap()
    );
    assert!(!format!("{}{}", stdout(&out), stderr(&out)).contains("tok-only"));
}

#[test]
fn oauth_over_plain_http_to_a_remote_host_is_refused() {
    let env = TestEnv::new();
    // TEST-NET-1: never reached; the refusal comes before any request. The
    // config refuses such a URL unless told; told, OAuth still refuses it.
    env.config(&format!(
        "[servers.remote]\nurl = \"http://192.0.2.1/mcp\"\nauth = \"oauth\"\n\
         allow_insecure_http = true\n{POLICY}"
    ));
    let out = env.run(&["check", "--json"]);
    let server = json(&out)["servers"][0].clone();
    assert_eq!(server["error"]["code"], "auth_required", "{server}");
    let message = server["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("plain http on a host that is not loopback"),
        "{message}"
    );
}

#[test]
fn login_opens_the_browser_when_there_is_one() {
    let f = fixture(Knobs::default(), &[], 10_000);
    // A "browser" that notes the address it was asked to open.
    let opened = f.env.path("opened.txt");
    let browser = f.env.path("browser.sh");
    std::fs::write(
        &browser,
        format!("#!/bin/sh\nprintf '%s' \"$1\" > '{}'\n", opened.display()),
    )
    .unwrap();
    std::fs::set_permissions(&browser, std::fs::Permissions::from_mode(0o755)).unwrap();
    let mut child = f
        .env
        .command(&["login", "remote"])
        .env("BROWSER", &browser)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start login");
    let deadline = Instant::now() + Duration::from_secs(60);
    let url = loop {
        if let Ok(url) = std::fs::read_to_string(&opened)
            && !url.is_empty()
        {
            break url;
        }
        assert!(Instant::now() < deadline, "the browser was never opened");
        std::thread::sleep(Duration::from_millis(50));
    };
    // The person approves in that browser; it comes back to the listener.
    browse(&url);
    let status = wait(&mut child, Duration::from_secs(60));
    let mut out = String::new();
    std::io::Read::read_to_string(&mut child.stdout.take().unwrap(), &mut out).unwrap();
    assert_eq!(status, 0, "{out}");
    assert!(out.contains("(opened in your browser)"), "{out}");
    assert!(
        out.contains(&format!("  {url}")),
        "the URL is shown as well:\n{out}"
    );
    assert!(out.contains("signed in to remote"), "{out}");
}
