//! Signing in from the TUI, over the backend's channels with real processes:
//! an alias that needs a sign-in says so, `s` shows the sign-in window (the
//! URL, where the browser must come back), the redirect comes back to the
//! listener or is pasted, the alias connects; Health shows the token's issuer,
//! scopes and expiry; signing out revokes every tool of the alias at once.

use std::time::Duration;

use crate::common::TestEnv;
use crate::common::hubs::{DEMO_POLICY, http_demo};
use crate::common::oauth_as::{AuthServer, Knobs, browse, get};
use mcp_harness::backend::{self, BackendHandle};
use mcp_harness::config::{self, ConfigSource};
use mcp_harness::protocol::{
    AliasStatus, BackendEvent, Command, EndKind, ServerView, SignInStatus, SignInView,
};
use mcp_harness::session::SessionOptions;

async fn next(
    handle: &mut BackendHandle,
    what: &str,
    pred: impl Fn(&BackendEvent) -> bool,
) -> BackendEvent {
    tokio::time::timeout(Duration::from_secs(30), async {
        loop {
            let event = handle.events.recv().await.expect("backend events");
            if pred(&event) {
                return event;
            }
        }
    })
    .await
    .unwrap_or_else(|_| panic!("no {what}"))
}

async fn remote(handle: &mut BackendHandle) -> ServerView {
    handle.views.borrow_and_update();
    handle.commands.send(Command::Refresh).expect("refresh");
    tokio::time::timeout(Duration::from_secs(30), handle.views.changed())
        .await
        .expect("a view in time")
        .expect("the backend is up");
    let views = handle.views.borrow_and_update().clone();
    views
        .servers
        .iter()
        .find(|s| s.alias == "remote")
        .cloned()
        .expect("remote")
}

async fn sign_in_window(handle: &mut BackendHandle) -> SignInView {
    handle
        .commands
        .send(Command::SignIn("remote".into()))
        .expect("sign in");
    match next(handle, "the sign-in window", |e| {
        matches!(e, BackendEvent::SignInStarted(_))
    })
    .await
    {
        BackendEvent::SignInStarted(view) => view,
        _ => unreachable!(),
    }
}

async fn ended(handle: &mut BackendHandle) -> (bool, String) {
    match next(handle, "the end of the sign-in", |e| {
        matches!(e, BackendEvent::SignInEnded { .. })
    })
    .await
    {
        BackendEvent::SignInEnded { ok, text, .. } => (ok, text),
        _ => unreachable!(),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sign_in_from_the_tui_and_sign_out_revokes_every_tool_at_once() {
    let auth = AuthServer::start(Knobs::default());
    let env = TestEnv::new();
    let (mut server, url) = http_demo(&env, "alpha", &["--oauth-issuer", &auth.url]);
    let text = format!(
        "[model]\nprovider = \"scripted\"\n[servers.remote]\nurl = \"{url}\"\nconnect_timeout_ms = 2000\n[servers.remote.tools]\n{DEMO_POLICY}"
    );
    let config = config::parse(&env.fill(&text), ConfigSource::Embedded).expect("config");
    let options = SessionOptions {
        workspace: Some(env.dir.path().to_path_buf()),
        ..SessionOptions::default()
    };
    let mut handle = backend::spawn(config, options).expect("backend");

    // Connecting (as the Lead or `c` would) does not open a browser: it says why not.
    handle
        .commands
        .send(Command::Connect("remote".into()))
        .expect("connect");
    next(&mut handle, "the refusal", |e| {
        matches!(e, BackendEvent::CommandResult(s) if s.contains("auth_required") && s.contains("needs a sign-in"))
    })
    .await;
    let view = remote(&mut handle).await;
    assert_eq!(view.state, AliasStatus::Failed);
    assert_eq!(view.sign_in, SignInStatus::Needed);

    // `s`: the window shows the URL and where the browser comes back; Esc gives up.
    let window = sign_in_window(&mut handle).await;
    assert!(
        window.url.starts_with(&format!("{}/authorize?", auth.url)),
        "{window:?}"
    );
    assert!(
        window.redirect.starts_with("http://127.0.0.1:"),
        "{window:?}"
    );
    handle.commands.send(Command::SignInCancel).expect("cancel");
    let (ok, text) = ended(&mut handle).await;
    assert!(!ok && text.contains("the sign-in was cancelled"), "{text}");

    // Again, pasting: first an address that is not the redirect, then the right
    // one — after longer than the connect timeout: the person at the browser
    // does not count against it.
    let window = sign_in_window(&mut handle).await;
    tokio::time::sleep(Duration::from_millis(3000)).await;
    let answer = tokio::task::spawn_blocking(move || get(&window.url).expect("authorize"))
        .await
        .expect("browser");
    let location = answer
        .lines()
        .find_map(|l| l.strip_prefix("location: "))
        .expect("a redirect")
        .to_string();
    let mut elsewhere = url::Url::parse(&location).unwrap();
    elsewhere.set_port(Some(1)).unwrap();
    handle
        .commands
        .send(Command::SignInPaste(elsewhere.to_string()))
        .expect("paste");
    match next(&mut handle, "the refusal of the paste", |e| {
        matches!(e, BackendEvent::SignInPasteRefused(_))
    })
    .await
    {
        BackendEvent::SignInPasteRefused(why) => assert!(why.contains("goes to port 1"), "{why}"),
        _ => unreachable!(),
    }
    handle
        .commands
        .send(Command::SignInPaste(location))
        .expect("paste");
    let (ok, text) = ended(&mut handle).await;
    assert!(ok, "{text}");
    assert!(
        text.contains("signed in to `remote`") && text.contains("5 tools exposed"),
        "{text}"
    );

    let view = remote(&mut handle).await;
    assert_eq!(view.state, AliasStatus::Ready);
    assert_eq!(view.sign_in, SignInStatus::SignedIn);
    let token = view
        .health
        .and_then(|h| h.token)
        .expect("the token's facts in Health");
    assert_eq!(token.issuer, auth.url);
    assert_eq!(token.scopes, ["mcp"]);
    assert_eq!(token.token_type, "Bearer");
    assert!(token.expires.is_some());

    // `o`: every tool of the alias leaves the registry in one revocation.
    handle
        .commands
        .send(Command::SignOut("remote".into()))
        .expect("sign out");
    match next(&mut handle, "the revocation", |e| {
        matches!(e, BackendEvent::ToolsRevoked { .. })
    })
    .await
    {
        BackendEvent::ToolsRevoked {
            alias,
            tools,
            cause,
        } => {
            assert_eq!(alias, "remote");
            assert_eq!(tools.len(), 5, "{tools:?}");
            assert_eq!(cause.kind, EndKind::AuthRequired);
        }
        _ => unreachable!(),
    }
    next(&mut handle, "the sign-out's report", |e| {
        matches!(e, BackendEvent::CommandResult(s) if s.contains("signed out of `remote`") && s.contains("1 token(s) deleted, 1 revoked"))
    })
    .await;
    let view = remote(&mut handle).await;
    assert_eq!(view.state, AliasStatus::Failed);
    assert_eq!(view.sign_in, SignInStatus::Needed);
    assert_eq!(auth.revoked().len(), 2);

    // The listener path: the browser comes back by itself.
    let window = sign_in_window(&mut handle).await;
    tokio::task::spawn_blocking(move || browse(&window.url))
        .await
        .expect("browser");
    let (ok, text) = ended(&mut handle).await;
    assert!(ok, "{text}");

    handle.commands.send(Command::Quit).expect("quit");
    let _ = tokio::time::timeout(Duration::from_secs(15), handle.task).await;
    let _ = server.kill();
    let _ = server.wait();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_token_refused_mid_session_revokes_the_tools_and_asks_for_a_sign_in() {
    // The authorization server will not renew the token either.
    let auth = AuthServer::start(Knobs {
        refuse_refresh: true,
        ..Knobs::default()
    });
    let env = TestEnv::new();
    let revoked = env.path("revoked");
    let (mut server, url) = http_demo(
        &env,
        "alpha",
        &[
            "--oauth-issuer",
            &auth.url,
            "--oauth-revoked-file",
            revoked.to_str().expect("utf-8 path"),
        ],
    );
    let text = format!(
        "[model]\nprovider = \"scripted\"\n[servers.remote]\nurl = \"{url}\"\n[servers.remote.tools]\n{DEMO_POLICY}"
    );
    let config = config::parse(&env.fill(&text), ConfigSource::Embedded).expect("config");
    let options = SessionOptions {
        workspace: Some(env.dir.path().to_path_buf()),
        ..SessionOptions::default()
    };
    let mut handle = backend::spawn(config, options).expect("backend");
    let window = sign_in_window(&mut handle).await;
    tokio::task::spawn_blocking(move || browse(&window.url))
        .await
        .expect("browser");
    let (ok, text) = ended(&mut handle).await;
    assert!(ok, "{text}");

    // The server stops taking the token (revoked at the authorization server).
    std::fs::write(&revoked, "").expect("revoke");
    handle
        .commands
        .send(Command::CallTool {
            name: "mcp__remote__lookup".into(),
            arguments: serde_json::json!({"key": "apple"}),
        })
        .expect("call");
    // The call ends and the tools go, in whichever order the two are told.
    let (mut finished, mut revoked) = (false, false);
    while !(finished && revoked) {
        match next(&mut handle, "the call's end and the revocation", |e| {
            matches!(
                e,
                BackendEvent::ToolCallFinished(_) | BackendEvent::ToolsRevoked { .. }
            )
        })
        .await
        {
            BackendEvent::ToolCallFinished(done) => {
                assert!(!done.ok);
                assert_eq!(done.code.as_deref(), Some("mcp_auth_required"), "{done:?}");
                finished = true;
            }
            BackendEvent::ToolsRevoked { tools, cause, .. } => {
                assert_eq!(tools.len(), 5, "{tools:?}");
                assert_eq!(cause.kind, EndKind::AuthRequired);
                assert!(
                    cause.text.contains("refused the stored refresh token"),
                    "{}",
                    cause.text
                );
                revoked = true;
            }
            _ => unreachable!(),
        }
    }
    let view = remote(&mut handle).await;
    assert_eq!(view.state, AliasStatus::Failed);
    assert_eq!(view.sign_in, SignInStatus::Needed);
    assert_eq!(view.code.as_deref(), Some("auth_required"));

    handle.commands.send(Command::Quit).expect("quit");
    let _ = tokio::time::timeout(Duration::from_secs(15), handle.task).await;
    let _ = server.kill();
    let _ = server.wait();
}
