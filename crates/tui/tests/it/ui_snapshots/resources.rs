//! The Resources window of a server (issue 14): `R` in Servers asks the
//! backend, the listing arrives as a view (URI, name, MIME type, size, then
//! templates, with the read policy), server text is drawn inert, a
//! `list_changed` of that server asks again, Esc closes.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use mcp_harness::protocol::{
    BackendEvent, Command, ContentPart, ContentSource, PolicyEffect, ResourceRef, ResourceRow,
    ResourcesView, ServerContentView,
};
use mcp_harness::ui::msg::{Effect, Msg};
use mcp_harness::ui::state::{AppState, Focus, Overlay};
use mcp_harness::ui::update::update;

use super::{backend, screen_text, session, snapshot};

fn row(uri: &str, name: &str, mime: Option<&str>, size: Option<u64>) -> ResourceRow {
    ResourceRow {
        uri: uri.into(),
        name: name.into(),
        mime: mime.map(Into::into),
        size,
    }
}

fn listing() -> ResourcesView {
    ResourcesView {
        alias: "demo_alpha".into(),
        resources: vec![
            row(
                "demo://demo-alpha/readme\x1b]0;pwned\x07",
                "readme\u{202e}",
                Some("text/markdown"),
                None,
            ),
            row(
                "demo://demo-alpha/table",
                "table",
                Some("application/json"),
                None,
            ),
            row(
                "demo://demo-alpha/large",
                "large",
                Some("text/plain"),
                Some(307_200),
            ),
        ],
        templates: vec![row(
            "demo://demo-alpha/entry/{key}",
            "entry",
            Some("text/plain"),
            None,
        )],
        malformed: 1,
        read: PolicyEffect::Confirm,
        error: None,
    }
}

fn open() -> (AppState, Vec<Effect>) {
    let mut s = session();
    s.focus = Focus::Servers;
    s.selected_server = 0;
    let effects = update(
        &mut s,
        Msg::Key(KeyEvent::new(KeyCode::Char('R'), KeyModifiers::SHIFT)),
    );
    (s, effects)
}

#[test]
fn r_asks_for_the_listing_and_the_window_shows_it_inert() {
    let (mut s, effects) = open();
    assert!(
        effects.iter().any(|e| matches!(
            e,
            Effect::Send(Command::ListResources(alias)) if alias == "demo_alpha"
        )),
        "{effects:?}"
    );
    assert!(screen_text(&mut s, (80, 24)).contains("asking the server…"));
    // Another server's listing does not land in this window.
    let mut other = listing();
    other.alias = "demo_beta".into();
    backend(&mut s, BackendEvent::Resources(other));
    assert!(screen_text(&mut s, (80, 24)).contains("asking the server…"));
    backend(&mut s, BackendEvent::Resources(listing()));
    snapshot("resources", &mut s);
    let screen = screen_text(&mut s, (120, 40));
    assert!(
        !screen.contains('\x1b') && !screen.contains('\u{202e}'),
        "{screen}"
    );
    assert!(screen.contains("^[]0;pwned^G"), "{screen}");
    assert!(screen.contains("300.0 kB"), "{screen}");
    assert!(screen.contains("1 templates"), "{screen}");
    assert!(screen.contains("confirm"), "{screen}");
    // The server says its resources changed: the open window asks again.
    let again = update(
        &mut s,
        Msg::Backend(BackendEvent::ResourcesChanged("demo_alpha".into())),
    );
    assert!(
        matches!(again.as_slice(), [Effect::Send(Command::ListResources(a))] if a == "demo_alpha"),
        "{again:?}"
    );
    update(&mut s, Msg::Key(KeyEvent::from(KeyCode::Esc)));
    assert!(s.overlay.is_none());
    let closed = update(
        &mut s,
        Msg::Backend(BackendEvent::ResourcesChanged("demo_alpha".into())),
    );
    assert!(closed.is_empty(), "{closed:?}");
}

#[test]
fn an_error_is_the_harness_words_and_a_disconnected_server_is_not_asked() {
    let (mut s, _) = open();
    let mut failed = listing();
    failed.resources.clear();
    failed.templates.clear();
    failed.error = Some("`demo_alpha` offers no resources (it did not declare them)".into());
    backend(&mut s, BackendEvent::Resources(failed));
    assert!(screen_text(&mut s, (80, 24)).contains("offers no resources"));
    assert!(matches!(s.overlay, Some(Overlay::Resources { .. })));
}

#[test]
fn enter_reads_the_selected_resource_for_the_operator() {
    let (mut s, _) = open();
    backend(&mut s, BackendEvent::Resources(listing()));
    let key = |s: &mut AppState, code| update(s, Msg::Key(KeyEvent::from(code)));
    // ↓ selects (never past the last resource: templates need arguments).
    for _ in 0..5 {
        assert!(key(&mut s, KeyCode::Down).is_empty());
    }
    assert!(matches!(
        s.overlay,
        Some(Overlay::Resources { selected: 2, .. })
    ));
    key(&mut s, KeyCode::Up);
    let effects = key(&mut s, KeyCode::Enter);
    assert_eq!(
        effects,
        vec![Effect::Send(Command::ReadResource(ResourceRef {
            alias: "demo_alpha".into(),
            uri: "demo://demo-alpha/table".into(),
        }))]
    );
    // What it read comes into the conversation, behind the window.
    assert!(s.overlay.is_none());
    backend(
        &mut s,
        BackendEvent::ServerContent(ServerContentView {
            alias: "demo_alpha".into(),
            source: ContentSource::Read {
                uri: "demo://demo-alpha/table".into(),
            },
            parts: vec![ContentPart {
                label: "text".into(),
                text: "{\"apple\": \"red\"}".into(),
            }],
            error: None,
            server_output: None,
        }),
    );
    let screen = screen_text(&mut s, (120, 40));
    assert!(
        screen.contains("⇠ demo_alpha · resource  for you only"),
        "{screen}"
    );
}

#[test]
fn enter_under_a_deny_read_policy_reads_nothing_and_says_why() {
    let (mut s, _) = open();
    let mut denied = listing();
    denied.read = PolicyEffect::Deny;
    backend(&mut s, BackendEvent::Resources(denied));
    let effects = update(&mut s, Msg::Key(KeyEvent::from(KeyCode::Enter)));
    assert!(effects.is_empty(), "{effects:?}");
    let said = s
        .status
        .as_ref()
        .map(|(t, _)| t.clone())
        .unwrap_or_default();
    assert!(
        said.contains("denied by local policy ([servers.demo_alpha.resources] read = \"deny\")"),
        "{said}"
    );
}

#[test]
fn the_window_takes_the_footer_from_an_older_message() {
    let mut s = session();
    s.focus = Focus::Servers;
    s.selected_server = 0;
    s.say("connected `demo_alpha`: 5 tools exposed");
    update(
        &mut s,
        Msg::Key(KeyEvent::new(KeyCode::Char('R'), KeyModifiers::SHIFT)),
    );
    assert!(matches!(s.overlay, Some(Overlay::Resources { .. })));
    assert_eq!(s.status, None);
}
