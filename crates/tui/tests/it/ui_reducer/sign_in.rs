//! Signing in, as keys and backend events: `s` asks the backend on an alias
//! that signs in (and says why not on one that does not), the window takes a
//! pasted or typed address, Enter sends it, Esc cancels, the backend's word
//! closes it; `o` signs out.

use std::sync::Arc;
use std::time::Instant;

use crossterm::event::KeyCode;
use mcp_harness::protocol::{
    AliasStatus, BackendEvent, Command, ServerView, SignInStatus, SignInView,
};
use mcp_harness::ui::msg::{Effect, Msg};
use mcp_harness::ui::state::{AppState, Focus, Overlay};
use mcp_harness::ui::update::update;

use super::{backend, key, typed};
use crate::fixtures::{servers, views};

fn remote(sign_in: SignInStatus) -> ServerView {
    ServerView {
        alias: "remote".into(),
        state: AliasStatus::Failed,
        detail: Some("remote needs a sign-in".into()),
        code: Some("auth_required".into()),
        transport: "http: https://mcp.example/mcp".into(),
        exposed: 0,
        published: Arc::from(Vec::new()),
        policy_missing: Vec::new(),
        policy_extra: Vec::new(),
        pin_changes: Arc::from(Vec::new()),
        pins_at: "/work/mcp-harness.lock".into(),
        pins_refused: false,
        server_output: Vec::new(),
        config_changed: false,
        insecure_http: false,
        health: None,
        sign_in,
    }
}

fn state() -> AppState {
    let mut s = AppState::new(Instant::now());
    let mut all = servers();
    all.push(remote(SignInStatus::Needed));
    update(&mut s, views(all));
    s.focus = Focus::Servers;
    s
}

fn window() -> BackendEvent {
    BackendEvent::SignInStarted(SignInView {
        alias: "remote".into(),
        url: "https://as.example/authorize?state=x".into(),
        redirect: "http://127.0.0.1:4000/callback".into(),
        browser: None,
    })
}

#[test]
fn s_signs_in_where_it_applies_and_says_why_not_elsewhere() {
    let mut s = state();
    // demo_alpha is a stdio server.
    assert!(update(&mut s, key(KeyCode::Char('s'))).is_empty());
    assert!(s.status.as_ref().unwrap().0.contains("does not sign in"));
    s.selected_server = 2;
    assert_eq!(
        update(&mut s, key(KeyCode::Char('s'))),
        vec![Effect::Send(Command::SignIn("remote".into()))]
    );
    assert!(
        s.status
            .as_ref()
            .unwrap()
            .0
            .contains("signing in to `remote`")
    );
    assert_eq!(
        update(&mut s, key(KeyCode::Char('o'))),
        vec![Effect::Send(Command::SignOut("remote".into()))]
    );
}

#[test]
fn the_window_takes_a_pasted_address_and_esc_cancels() {
    let mut s = state();
    backend(&mut s, window());
    assert!(matches!(s.overlay, Some(Overlay::SignIn(_))));
    // Enter with nothing pasted says what to do instead of sending.
    assert!(update(&mut s, key(KeyCode::Enter)).is_empty());
    update(
        &mut s,
        Msg::Paste("http://127.0.0.1:4000/callback?code=c\r\n".into()),
    );
    typed(&mut s, "&state=x");
    assert_eq!(
        update(&mut s, key(KeyCode::Enter)),
        vec![Effect::Send(Command::SignInPaste(
            "http://127.0.0.1:4000/callback?code=c&state=x".into()
        ))]
    );
    backend(
        &mut s,
        BackendEvent::SignInPasteRefused("it goes to port 1".into()),
    );
    let Some(Overlay::SignIn(w)) = &s.overlay else {
        panic!("the window stays open")
    };
    assert_eq!(w.problem.as_deref(), Some("it goes to port 1"));
    assert_eq!(
        update(&mut s, key(KeyCode::Esc)),
        vec![Effect::Send(Command::SignInCancel)]
    );
    assert!(s.overlay.is_none());
}

#[test]
fn the_backends_word_closes_the_window() {
    let mut s = state();
    backend(&mut s, window());
    backend(
        &mut s,
        BackendEvent::SignInEnded {
            alias: "remote".into(),
            ok: true,
            text: "signed in to `remote`; connected: 5 tools exposed".into(),
        },
    );
    assert!(s.overlay.is_none());
    assert!(
        s.status
            .as_ref()
            .unwrap()
            .0
            .contains("signed in to `remote`")
    );
}
