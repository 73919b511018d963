//! The input box's completion list over the conversation (resources after
//! `@`, a prompt's arguments after its name; server text drawn inert) and the
//! entries of server content the operator brought in (issue 14).

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use mcp_harness::protocol::{
    BackendEvent, ContentPart, ContentSource, PolicyEffect, PromptArgRow, PromptRow, PromptsView,
    ResourceRow, ResourcesView, ServerContentView,
};
use mcp_harness::ui::msg::Msg;
use mcp_harness::ui::state::{AppState, Focus};
use mcp_harness::ui::update::update;

use super::{backend, session, snapshot};

fn type_in(s: &mut AppState, text: &str) {
    for c in text.chars() {
        update(
            s,
            Msg::Key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE)),
        );
    }
}

fn listing() -> ResourcesView {
    let row = |uri: &str, name: &str, mime: &str, size: Option<u64>| ResourceRow {
        uri: uri.into(),
        name: name.into(),
        mime: Some(mime.into()),
        size,
    };
    ResourcesView {
        alias: "demo_alpha".into(),
        resources: vec![
            row(
                "demo://demo-alpha/readme",
                "readme\u{202e}txt.exe",
                "text/markdown",
                None,
            ),
            row(
                "demo://demo-alpha/table",
                "table\x1b[2J",
                "application/json",
                Some(812),
            ),
            row(
                "demo://demo-alpha/large",
                "large",
                "text/plain",
                Some(307_200),
            ),
        ],
        templates: vec![row(
            "demo://demo-alpha/entry/{key}",
            "entry",
            "text/plain",
            None,
        )],
        malformed: 0,
        read: PolicyEffect::Confirm,
        error: None,
    }
}

#[test]
fn resource_completion() {
    let mut s = session();
    s.focus = Focus::Input;
    type_in(&mut s, "compare @");
    backend(&mut s, BackendEvent::Resources(listing()));
    update(
        &mut s,
        Msg::Key(KeyEvent::new(KeyCode::Down, KeyModifiers::NONE)),
    );
    snapshot("complete_resources", &mut s);
}

#[test]
fn prompt_argument_completion() {
    let mut s = session();
    s.focus = Focus::Input;
    backend(
        &mut s,
        BackendEvent::Prompts(PromptsView {
            alias: "demo_alpha".into(),
            prompts: vec![PromptRow {
                name: "summarize".into(),
                description: Some("Summarize a topic".into()),
                arguments: vec![
                    PromptArgRow {
                        name: "topic".into(),
                        description: Some("what to summarize".into()),
                        required: true,
                    },
                    PromptArgRow {
                        name: "style".into(),
                        description: Some("short or long\x07".into()),
                        required: false,
                    },
                ],
            }],
            error: None,
        }),
    );
    type_in(&mut s, "/demo_alpha:summarize ");
    snapshot("complete_prompt_arguments", &mut s);
}

#[test]
fn server_content_entries() {
    let mut s = session();
    let content = |source, parts: Vec<(&str, &str)>, error: Option<&str>| {
        BackendEvent::ServerContent(ServerContentView {
            alias: "demo_alpha".into(),
            source,
            parts: parts
                .into_iter()
                .map(|(label, text)| ContentPart {
                    label: label.into(),
                    text: text.into(),
                })
                .collect(),
            error: error.map(Into::into),
            server_output: error.map(|_| "Traceback: sk-demo-0123 \x1b]0;pwned\x07".into()),
        })
    };
    backend(
        &mut s,
        content(
            ContentSource::Resource {
                uri: "demo://demo-alpha/readme".into(),
            },
            vec![(
                "text",
                "# demo-alpha\nA demo server.\n\x1b[31mred\x1b[0m\nline 4\nline 5\nline 6",
            )],
            None,
        ),
    );
    backend(
        &mut s,
        content(
            ContentSource::Prompt {
                name: "summarize".into(),
            },
            vec![
                ("user", "Summarize rust traits, short."),
                ("assistant", "Sure: which aspects?"),
            ],
            None,
        ),
    );
    backend(
        &mut s,
        content(
            ContentSource::Resource {
                uri: "demo://demo-alpha/broken".into(),
            },
            Vec::new(),
            Some("mcp_remote_error: `demo_alpha` answered resources/read with an error (-32603)"),
        ),
    );
    snapshot("server_content", &mut s);
}
