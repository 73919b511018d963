//! Screens of signing in (OAuth): an alias that needs a sign-in says `s` in the
//! Servers pane; the sign-in window (the URL, whether a browser opened, where
//! the browser comes back, the field for a pasted address and why a paste was
//! refused); Health with the token's issuer, scopes and expiry.

use std::sync::Arc;
use std::time::Duration;

use mcp_harness::protocol::{
    AliasStatus, BackendEvent, HealthView, ServerView, SignInStatus, SignInView, TokenInfo,
};
use mcp_harness::ui::msg::Msg;
use mcp_harness::ui::state::Focus;
use mcp_harness::ui::update::update;

use super::{backend, session, snapshot};
use crate::fixtures::{servers_at, views};

fn remote(status: AliasStatus, sign_in: SignInStatus, health: Option<HealthView>) -> ServerView {
    ServerView {
        alias: "notion".into(),
        state: status,
        detail: (status == AliasStatus::Failed).then(|| "notion needs a sign-in".into()),
        code: (status == AliasStatus::Failed).then(|| "auth_required".into()),
        transport: "http: https://mcp.notion.example/mcp".into(),
        exposed: if health.is_some() { 2 } else { 0 },
        published: Arc::from(Vec::new()),
        policy_missing: Vec::new(),
        policy_extra: Vec::new(),
        pin_changes: Arc::from(Vec::new()),
        pins_at: "/work/mcp-harness.lock".into(),
        pins_refused: false,
        server_output: Vec::new(),
        config_changed: false,
        insecure_http: false,
        health,
        sign_in,
    }
}

fn with(
    servers: impl FnOnce(std::time::Instant) -> Vec<ServerView>,
) -> mcp_harness::ui::state::AppState {
    let mut s = session();
    // A minute before the session's own clock: every age on screen is fixed.
    let opened = s
        .now
        .checked_sub(Duration::from_secs(60))
        .expect("a minute ago");
    update(&mut s, views(servers(opened)));
    s.selected_server = 2;
    s.focus = Focus::Servers;
    s
}

#[test]
fn an_alias_that_needs_a_sign_in_says_how() {
    let mut s = with(|opened| {
        let mut servers = servers_at(opened);
        servers.push(remote(AliasStatus::Failed, SignInStatus::Needed, None));
        servers
    });
    snapshot("sign_in_needed", &mut s);
}

#[test]
fn the_sign_in_window() {
    let mut s = with(|opened| {
        let mut servers = servers_at(opened);
        servers.push(remote(AliasStatus::Failed, SignInStatus::Needed, None));
        servers
    });
    backend(
        &mut s,
        BackendEvent::SignInStarted(SignInView {
            alias: "notion".into(),
            url: "https://auth.notion.example/authorize?response_type=code&client_id=client-7&redirect_uri=http%3A%2F%2F127.0.0.1%3A53682%2Fcallback&code_challenge=E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM&code_challenge_method=S256&state=af0ifjsldkj&resource=https%3A%2F%2Fmcp.notion.example%2Fmcp".into(),
            redirect: "http://127.0.0.1:53682/callback".into(),
            browser: Some("no browser here (no $BROWSER, no display); open the URL elsewhere".into()),
        }),
    );
    update(
        &mut s,
        Msg::Paste("http://127.0.0.1:53683/callback?code=abc&state=af0ifjsldkj".into()),
    );
    backend(
        &mut s,
        BackendEvent::SignInPasteRefused(
            "that URL is not the redirect this sign-in waits for: it goes to port 53683, but this sign-in listens on port 53682".into(),
        ),
    );
    snapshot("sign_in_window", &mut s);
}

#[test]
fn health_shows_the_token_never_the_token_itself() {
    let mut s = with(|opened| {
        let mut servers = servers_at(opened);
        let mut health = servers[0].health.clone().expect("alpha's health");
        health.pid = None;
        health.transport = mcp_harness::protocol::TransportKind::Http;
        health.stderr_tail = Vec::new();
        health.token = Some(TokenInfo {
            issuer: "https://auth.notion.example".into(),
            scopes: vec!["read:content".into(), "offline_access".into()],
            token_type: "Bearer".into(),
            // An hour from the session's clock.
            expires: Some(opened + Duration::from_secs(3660)),
        });
        servers.push(remote(
            AliasStatus::Ready,
            SignInStatus::SignedIn,
            Some(health),
        ));
        servers
    });
    snapshot("signed_in_health", &mut s);
}

#[test]
fn a_server_reached_over_plaintext_http_is_marked() {
    let mut s = with(|opened| {
        let mut servers = servers_at(opened);
        let mut far = remote(AliasStatus::Disconnected, SignInStatus::NotUsed, None);
        far.transport = "http: http://10.0.0.5:8080/mcp".into();
        far.insecure_http = true;
        servers.push(far);
        servers
    });
    snapshot("insecure_http", &mut s);
}
