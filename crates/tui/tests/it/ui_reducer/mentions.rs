//! Server content from the input box (issue 14): `@alias:uri` attaches a
//! resource, `/alias:prompt key=value …` uses a prompt; both complete from
//! listings asked for once per connection; a message that asks for what
//! cannot be had is refused with the reason and stays in the box.

use std::collections::BTreeMap;
use std::time::Instant;

use crossterm::event::KeyCode;
use mcp_harness::protocol::{
    BackendEvent, Command, ContentPart, ContentSource, PolicyEffect, PromptArgRow, PromptRow,
    PromptUse, PromptsView, ResourceRef, ResourceRow, ResourcesView, ServerContentView,
    UserMessage,
};
use mcp_harness::ui::keymap::Scope;
use mcp_harness::ui::mentions::Kind;
use mcp_harness::ui::msg::Effect;
use mcp_harness::ui::state::{AppState, Cell, Focus};
use mcp_harness::ui::update::update;

use super::{backend, key};
use crate::fixtures::{servers, views};

/// demo_alpha connected, demo_beta rejected.
fn state() -> AppState {
    let mut s = AppState::new(Instant::now());
    update(&mut s, views(servers()));
    s
}

/// Types `text` and returns every effect the keys had.
fn type_in(s: &mut AppState, text: &str) -> Vec<Effect> {
    text.chars()
        .flat_map(|c| update(s, key(KeyCode::Char(c))))
        .collect()
}

fn resources() -> ResourcesView {
    let row = |uri: &str, name: &str| ResourceRow {
        uri: uri.into(),
        name: name.into(),
        mime: Some("text/plain".into()),
        size: Some(2048),
    };
    ResourcesView {
        alias: "demo_alpha".into(),
        resources: vec![
            row("demo://demo-alpha/readme", "readme"),
            row("demo://demo-alpha/table", "table"),
            // Not typable back (an escape sequence, a space): never offered.
            row("demo://demo-alpha/x\x1b]0;pwned\x07", "hostile"),
            row("demo://demo-alpha/two words", "spaced"),
        ],
        templates: vec![row("demo://demo-alpha/entry/{key}", "entry")],
        malformed: 0,
        read: PolicyEffect::Confirm,
        error: None,
    }
}

fn prompts() -> PromptsView {
    let arg = |name: &str, required: bool| PromptArgRow {
        name: name.into(),
        description: Some(format!("the {name}")),
        required,
    };
    PromptsView {
        alias: "demo_alpha".into(),
        prompts: vec![
            PromptRow {
                name: "summarize".into(),
                description: Some("Summarize a topic".into()),
                arguments: vec![arg("topic", true), arg("style", false)],
            },
            PromptRow {
                name: "quiz".into(),
                description: None,
                arguments: Vec::new(),
            },
        ],
        error: None,
    }
}

fn candidates(s: &AppState) -> Vec<String> {
    s.completion()
        .map(|c| c.candidates.into_iter().map(|c| c.insert).collect())
        .unwrap_or_default()
}

#[test]
fn at_asks_for_the_listing_once_then_completes_and_attaches() {
    let mut s = state();
    let effects = type_in(&mut s, "see @");
    // Only the connected server is asked, and only once.
    assert_eq!(
        effects,
        vec![Effect::Send(Command::ListResources("demo_alpha".into()))]
    );
    assert!(type_in(&mut s, "re").is_empty());
    let waiting = s.completion().expect("the list shows");
    assert_eq!(waiting.waiting, vec!["demo_alpha".to_string()]);
    backend(&mut s, BackendEvent::Resources(resources()));
    assert_eq!(
        candidates(&s),
        vec!["@demo_alpha:demo://demo-alpha/readme "],
        "`re` matches the readme only"
    );
    assert_eq!(s.scope(), Scope::Complete);
    update(&mut s, key(KeyCode::Tab));
    assert_eq!(s.input_text(), "see @demo_alpha:demo://demo-alpha/readme ");
    assert_eq!(
        s.focus,
        Focus::Input,
        "Tab inserted: it did not move the focus"
    );
    type_in(&mut s, "please");
    let sent = update(&mut s, key(KeyCode::Enter));
    let message = UserMessage {
        text: "see @demo_alpha:demo://demo-alpha/readme please".into(),
        resources: vec![ResourceRef {
            alias: "demo_alpha".into(),
            uri: "demo://demo-alpha/readme".into(),
        }],
    };
    assert_eq!(sent, vec![Effect::Send(Command::Prompt(message))]);
}

#[test]
fn only_what_can_be_typed_back_is_offered() {
    let mut s = state();
    type_in(&mut s, "@");
    backend(&mut s, BackendEvent::Resources(resources()));
    let offered = candidates(&s);
    assert_eq!(offered.len(), 3, "{offered:?}");
    assert!(
        offered
            .iter()
            .all(|c| !c.contains('\x1b') && !c.contains("two words")),
        "{offered:?}"
    );
    // ↑ wraps to the last; Enter on an incomplete word inserts it.
    update(&mut s, key(KeyCode::Up));
    update(&mut s, key(KeyCode::Enter));
    assert_eq!(s.input_text(), "@demo_alpha:demo://demo-alpha/entry/");
    assert!(
        s.cells.iter().all(|c| !matches!(c, Cell::User(_))),
        "nothing was sent"
    );
}

#[test]
fn esc_closes_the_list_for_this_word_and_a_change_forgets_the_listing() {
    let mut s = state();
    type_in(&mut s, "@");
    backend(&mut s, BackendEvent::Resources(resources()));
    update(&mut s, key(KeyCode::Esc));
    assert!(s.completion().is_none());
    assert_eq!(s.scope(), Scope::Input);
    assert_eq!(s.input_text(), "@", "Esc kept the text");
    type_in(&mut s, "ta");
    assert_eq!(candidates(&s), vec!["@demo_alpha:demo://demo-alpha/table "]);
    // The server's resources changed: asked again when next needed.
    backend(&mut s, BackendEvent::ResourcesChanged("demo_alpha".into()));
    let effects = type_in(&mut s, "b");
    assert_eq!(
        effects,
        vec![Effect::Send(Command::ListResources("demo_alpha".into()))]
    );
    // The template offers its fixed part; the operator types the rest.
    backend(&mut s, BackendEvent::Resources(resources()));
    for _ in 0..3 {
        update(&mut s, key(KeyCode::Backspace));
    }
    assert_eq!(s.input_text(), "@");
    type_in(&mut s, "ent");
    assert_eq!(candidates(&s), vec!["@demo_alpha:demo://demo-alpha/entry/"]);
}

#[test]
fn a_leading_slash_completes_prompts_then_their_arguments() {
    let mut s = state();
    let effects = type_in(&mut s, "/");
    assert_eq!(
        effects,
        vec![Effect::Send(Command::ListPrompts("demo_alpha".into()))]
    );
    backend(&mut s, BackendEvent::Prompts(prompts()));
    assert_eq!(
        candidates(&s),
        vec!["/demo_alpha:summarize ", "/demo_alpha:quiz "]
    );
    type_in(&mut s, "sum");
    update(&mut s, key(KeyCode::Tab));
    assert_eq!(s.input_text(), "/demo_alpha:summarize ");
    type_in(&mut s, "s");
    let completion = s.completion().expect("arguments");
    assert!(matches!(completion.kind, Kind::Arguments { .. }));
    assert_eq!(candidates(&s), vec!["style="], "`s` matches style only");
    update(&mut s, key(KeyCode::Backspace));
    assert_eq!(candidates(&s), vec!["topic=", "style="]);
    update(&mut s, key(KeyCode::Tab));
    type_in(&mut s, "\"rust traits\" t");
    assert_eq!(
        candidates(&s),
        vec!["style="],
        "a given argument is not offered again"
    );
    update(&mut s, key(KeyCode::Backspace));
    assert_eq!(
        candidates(&s),
        vec!["style="],
        "after a space: what is left"
    );
    // Enter after a space sends: there is no word to complete.
    let sent = update(&mut s, key(KeyCode::Enter));
    let used = PromptUse {
        alias: "demo_alpha".into(),
        name: "summarize".into(),
        arguments: BTreeMap::from([("topic".to_string(), "rust traits".to_string())]),
    };
    assert_eq!(sent, vec![Effect::Send(Command::UsePrompt(used))]);
    assert!(s.busy);
}

#[test]
fn what_cannot_be_had_is_refused_with_the_reason_and_the_text_stays() {
    let cases = [
        ("/demo_alpha:summarize style=short", "needs topic"),
        ("/demo_alpha:nope", "has no prompt `nope`"),
        ("/demo_alpha:quiz topic=x", "takes no argument `topic`"),
        ("/demo_alpha:quiz \"open", "a quote is not closed"),
        ("/demo_alpha:summarize topic", "`topic` is not key=value"),
        ("/demo_alpha:summarize topic=a topic=b", "given twice"),
        ("/demo_beta:anything", "`demo_beta` is not connected"),
        ("/nobody:x", "no server `nobody` is configured"),
        ("read @demo_beta:demo://x", "`demo_beta` is not connected"),
        ("read @demo_alpha:", "names no resource"),
    ];
    for (text, why) in cases {
        let mut s = state();
        backend(&mut s, BackendEvent::Prompts(prompts()));
        s.input.insert_str(text);
        // Esc closes a completion list, so Enter sends what is typed.
        update(&mut s, key(KeyCode::Esc));
        let sent = update(&mut s, key(KeyCode::Enter));
        let sent: Vec<_> = sent
            .into_iter()
            .filter(|e| matches!(e, Effect::Send(Command::Prompt(_) | Command::UsePrompt(_))))
            .collect();
        assert!(sent.is_empty(), "{text}: {sent:?}");
        let said = s
            .status
            .as_ref()
            .map(|(t, _)| t.clone())
            .unwrap_or_default();
        assert!(said.contains(why), "{text}: {said}");
        assert_eq!(s.input_text(), text, "the text stays in the box");
        assert!(!s.busy);
    }
    // Text that only looks like it: sent as it is.
    for text in [
        "/etc/hosts: what is it?",
        "mail bob@example.com",
        "@someone: hi",
    ] {
        let mut s = state();
        s.input.insert_str(text);
        let sent = update(&mut s, key(KeyCode::Enter));
        assert_eq!(
            sent,
            vec![Effect::Send(Command::Prompt(UserMessage::from(text)))],
            "{text}"
        );
    }
}

#[test]
fn server_content_is_an_entry_that_expands() {
    let mut s = state();
    let long: String = (1..=12).map(|i| format!("line {i}\n")).collect();
    backend(
        &mut s,
        BackendEvent::ServerContent(ServerContentView {
            alias: "demo_alpha".into(),
            source: ContentSource::Resource {
                uri: "demo://demo-alpha/readme".into(),
            },
            parts: vec![ContentPart {
                label: "text".into(),
                text: long,
            }],
            error: None,
            server_output: None,
        }),
    );
    let Some(Cell::ServerContent(cell)) = s.cells.last() else {
        panic!("{:?}", s.cells.last())
    };
    let collapsed = cell.lines(80).len();
    s.focus = Focus::Conversation;
    s.selected_cell = Some(s.cells.len() - 1);
    update(&mut s, key(KeyCode::Enter));
    let Some(Cell::ServerContent(cell)) = s.cells.last() else {
        unreachable!()
    };
    assert!(cell.expanded);
    assert!(cell.lines(80).len() > collapsed + 5);
}
