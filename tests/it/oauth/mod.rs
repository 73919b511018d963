//! Signing in to a remote server with OAuth, end to end on loopback: the real
//! binary (`login`, `check`, `call`, `logout`), the demo server over HTTP as a
//! protected resource, and an authorization server of the test's own that can
//! misbehave one way at a time. Every refusal must say what happened and what
//! to do, leave the alias `auth_required`, and print no token.

use std::io::{BufRead as _, BufReader, Write as _};
use std::os::unix::fs::PermissionsExt as _;
use std::process::{Child, Output, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use crate::common::hubs::http_demo;
use crate::common::oauth_as::{AuthServer, Knobs, RedirectMode, TokenMode, browse};
use crate::common::{TestEnv, json, stderr, stdout};

struct Fixture {
    env: TestEnv,
    _server: Child,
    auth: AuthServer,
    url: String,
}

impl Drop for Fixture {
    fn drop(&mut self) {
        let _ = self._server.kill();
        let _ = self._server.wait();
    }
}

const POLICY: &str = "[servers.remote.tools]\nlookup = \"allow\"\nset = \"confirm\"\nreset = \"confirm\"\nfail = \"allow\"\nslow = \"allow\"\n";

fn fixture(knobs: Knobs, gate: &[&str], connect_timeout_ms: u64) -> Fixture {
    let auth = AuthServer::start(knobs);
    let env = TestEnv::new();
    let mut args = vec!["--oauth-issuer", auth.url.as_str()];
    args.extend_from_slice(gate);
    let (server, url) = http_demo(&env, "alpha", &args);
    env.config(&format!(
        "[servers.remote]\nurl = \"{url}\"\nconnect_timeout_ms = {connect_timeout_ms}\n{POLICY}"
    ));
    Fixture {
        env,
        _server: server,
        auth,
        url,
    }
}

/// What a command printed.
struct Run {
    status: i32,
    out: String,
    err: String,
}

impl Run {
    fn text(&self) -> String {
        format!("{}{}", self.out, self.err)
    }
}

impl From<Output> for Run {
    fn from(o: Output) -> Self {
        Self {
            status: o.status.code().unwrap_or(-1),
            out: stdout(&o),
            err: stderr(&o),
        }
    }
}

/// `mcp-harness login remote --no-browser`, the test acting as the person at
/// the browser: it opens the printed URL (the authorization server redirects
/// at once) and, if `paste` says so, pastes a redirect address on stdin.
fn login(f: &Fixture, paste: impl Fn(&str, &str) -> Vec<String>) -> Run {
    let mut child = f
        .env
        .command(&["login", "remote", "--no-browser"])
        .env("MCP_HARNESS_LOG", "debug")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start login");
    let (tx, rx) = mpsc::channel::<String>();
    let out = child.stdout.take().expect("stdout");
    let reader = std::thread::spawn(move || {
        let mut all = String::new();
        for line in BufReader::new(out).lines().map_while(Result::ok) {
            let _ = tx.send(line.clone());
            all.push_str(&line);
            all.push('\n');
        }
        all
    });
    let mut stdin = child.stdin.take().expect("stdin");
    // The URL is printed on a line of its own, indented.
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut url = None;
    while Instant::now() < deadline && url.is_none() {
        match rx.recv_timeout(Duration::from_millis(200)) {
            Ok(line) if line.starts_with("  http") => url = Some(line.trim().to_string()),
            Ok(_) => {}
            Err(mpsc::RecvTimeoutError::Timeout) => {
                if child.try_wait().ok().flatten().is_some() {
                    break;
                }
            }
            Err(_) => break,
        }
    }
    if let Some(url) = &url {
        let location = browse(url);
        for line in paste(url, &location) {
            let _ = writeln!(stdin, "{line}");
            // Give each paste its answer before the next.
            std::thread::sleep(Duration::from_millis(300));
        }
    }
    drop(stdin);
    let status = wait(&mut child, Duration::from_secs(60));
    let mut err = String::new();
    if let Some(mut e) = child.stderr.take() {
        let _ = std::io::Read::read_to_string(&mut e, &mut err);
    }
    Run {
        status,
        out: reader.join().unwrap_or_default(),
        err,
    }
}

fn wait(child: &mut Child, limit: Duration) -> i32 {
    let deadline = Instant::now() + limit;
    loop {
        if let Some(status) = child.try_wait().expect("wait") {
            return status.code().unwrap_or(-1);
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("the command did not end within {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn no_paste(_: &str, _: &str) -> Vec<String> {
    Vec::new()
}

/// No token the authorization server issued appears in `text`.
fn assert_no_token(f: &Fixture, text: &str) {
    for token in f.auth.issued() {
        assert!(!text.contains(&token), "a token was printed:\n{text}");
    }
    let log = std::fs::read_to_string(f.env.path("xdg-data/mcp-harness/mcp-harness.log"))
        .unwrap_or_default();
    for token in f.auth.issued() {
        assert!(!log.contains(&token), "a token is in the log");
    }
}

fn check(f: &Fixture) -> serde_json::Value {
    let out = f.env.run(&["check", "--json"]);
    let text = format!("{}{}", stdout(&out), stderr(&out));
    assert_no_token(f, &text);
    json(&out)["servers"][0].clone()
}

/// The alias ended `auth_required`, and the message says `what`.
fn assert_auth_required(run: &Run, what: &str) {
    assert_eq!(run.status, 1, "{}", run.text());
    assert!(run.err.contains("failed (auth_required)"), "{}", run.text());
    assert!(
        run.err.contains(what),
        "expected {what:?} in:\n{}",
        run.text()
    );
    assert!(run.err.contains("what to do:"), "{}", run.text());
}

#[test]
fn sign_in_use_and_sign_out() {
    let f = fixture(Knobs::default(), &[], 10_000);
    // Before signing in, headless commands say how to.
    let server = check(&f);
    assert_eq!(server["status"], "failed", "{server}");
    assert_eq!(server["error"]["code"], "auth_required", "{server}");
    assert!(
        server["error"]["hint"]
            .as_str()
            .unwrap()
            .contains("mcp-harness login remote"),
        "{server}"
    );

    let run = login(&f, no_paste);
    assert_eq!(run.status, 0, "{}", run.text());
    assert!(
        run.out.contains("signed in to remote: issuer"),
        "{}",
        run.out
    );
    assert!(run.out.contains("scopes mcp"), "{}", run.out);
    assert_no_token(&f, &run.text());
    let store = f.env.path("xdg-data/mcp-harness/oauth/tokens.json");
    let mode = std::fs::metadata(&store)
        .expect("tokens.json")
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600);
    let stored: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&store).unwrap()).unwrap();
    assert_eq!(stored["tokens"][0]["issuer"], f.auth.url.as_str());
    assert_eq!(stored["tokens"][0]["resource"], f.url.as_str());

    // The stored token is used by every headless command, and only sent to its server.
    assert_eq!(check(&f)["status"], "ready");
    let call = Run::from(
        f.env
            .run(&["call", "remote", "lookup", "--args", r#"{"key":"apple"}"#]),
    );
    assert_eq!(call.status, 0, "{}", call.text());
    assert_no_token(&f, &call.text());

    let out = Run::from(f.env.run(&["logout", "remote"]));
    assert_eq!(out.status, 0, "{}", out.text());
    assert!(
        out.out.contains("1 token(s) deleted, 1 revoked"),
        "{}",
        out.out
    );
    assert_eq!(
        f.auth.revoked().len(),
        2,
        "refresh and access token revoked"
    );
    assert_eq!(check(&f)["error"]["code"], "auth_required");
    // Nothing stored any more: still a success.
    let again = Run::from(f.env.run(&["logout", "remote"]));
    assert_eq!(again.status, 0);
    assert!(again.out.contains("nothing was stored"), "{}", again.out);
}

#[test]
fn an_expiring_token_is_refreshed_and_a_refused_refresh_asks_for_a_new_sign_in() {
    let f = fixture(
        Knobs {
            expires_in: Some(1),
            ..Knobs::default()
        },
        &[],
        10_000,
    );
    assert_eq!(login(&f, no_paste).status, 0);
    // About to expire: refreshed before use (with rotation), transparently.
    assert_eq!(check(&f)["status"], "ready");
    let refreshes = f
        .auth
        .requests()
        .iter()
        .filter(|r| *r == "POST /token")
        .count();
    assert!(refreshes >= 2, "{:?}", f.auth.requests());
    f.auth.set(|k| k.refuse_refresh = true);
    let server = check(&f);
    assert_eq!(server["error"]["code"], "auth_required", "{server}");
    let message = server["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("refused the stored refresh token (invalid_grant)"),
        "{server}"
    );
    assert!(
        server["error"]["hint"]
            .as_str()
            .unwrap()
            .contains("login remote")
    );
}

#[test]
fn a_redirect_to_another_port_is_refused_and_the_right_one_accepted() {
    let f = fixture(
        Knobs {
            redirect: RedirectMode::OtherPort,
            ..Knobs::default()
        },
        &[],
        10_000,
    );
    let run = login(&f, |_, location| {
        // The browser landed on another port; the operator pastes that address,
        // then the one the listener waits for.
        let mut ours = url::Url::parse(location).unwrap();
        let port = ours.port().unwrap();
        ours.set_port(Some(if port == 1 { 65535 } else { port - 1 }))
            .unwrap();
        vec![location.to_string(), ours.to_string()]
    });
    assert!(
        run.out.contains("but this sign-in listens on port"),
        "{}",
        run.text()
    );
    assert_eq!(run.status, 0, "{}", run.text());
    assert_no_token(&f, &run.text());
}

mod refusals;
mod step_up;
