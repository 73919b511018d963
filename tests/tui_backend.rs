//! The TUI's backend over its two channels, with real server processes: a server
//! that asks for input mid-call gets the operator's form answer; an operator's
//! hand-made call of a `confirm` tool waits for the approval prompt.

mod common;

use std::time::Duration;

use common::TestEnv;
use mcp_harness::backend::{self, BackendHandle};
use mcp_harness::config::{self, ConfigSource};
use mcp_harness::protocol::{BackendEvent, Command, Decision, ElicitAnswer, FieldKind};
use mcp_harness::session::SessionOptions;
use serde_json::json;

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

fn start(env: &TestEnv, servers: &str) -> BackendHandle {
    let text = format!("[model]\nprovider = \"scripted\"\n{servers}");
    let config = config::parse(&env.fill(&text), ConfigSource::Embedded).expect("config");
    let options = SessionOptions {
        workspace: Some(env.dir.path().to_path_buf()),
        ..SessionOptions::default()
    };
    backend::spawn(config, options).expect("backend")
}

async fn stop(mut handle: BackendHandle) {
    handle.commands.send(Command::Quit).expect("quit");
    next(&mut handle, "stop", |e| *e == BackendEvent::Stopped).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_asking_for_input_gets_the_operators_answer() {
    let env = TestEnv::new();
    let server = env.demo("hostile", "hostile", &["--scenario", "elicit-on-call"]);
    let mut handle = start(
        &env,
        &format!("{server}[servers.hostile.tools]\nlookup = \"allow\"\n"),
    );
    handle
        .commands
        .send(Command::Connect("hostile".into()))
        .unwrap();
    next(
        &mut handle,
        "the connection",
        |e| matches!(e, BackendEvent::Status(s) if s.starts_with("connected")),
    )
    .await;
    handle
        .commands
        .send(Command::CallTool {
            name: "mcp__hostile__lookup".into(),
            arguments: json!({"key": "x"}),
        })
        .unwrap();
    let BackendEvent::ElicitationRequested(form) = next(&mut handle, "the form", |e| {
        matches!(e, BackendEvent::ElicitationRequested(_))
    })
    .await
    else {
        unreachable!()
    };
    assert_eq!(form.alias, "hostile");
    assert_eq!(
        form.fields[0].kind,
        FieldKind::Choice(vec!["red".into(), "green".into()])
    );
    assert_eq!(form.fields[0].default.as_deref(), Some("green"));
    let answer = json!({"colour": "red", "shade": 7})
        .as_object()
        .cloned()
        .unwrap();
    handle
        .commands
        .send(Command::Elicitation {
            id: form.id,
            answer: ElicitAnswer::Accept(answer),
        })
        .unwrap();
    let BackendEvent::ToolCallFinished(done) = next(&mut handle, "the result", |e| {
        matches!(e, BackendEvent::ToolCallFinished(_))
    })
    .await
    else {
        unreachable!()
    };
    assert!(done.ok, "{done:?}");
    assert!(
        done.text.contains("elicitation answered: accept") && done.text.contains("\"shade\":7"),
        "{}",
        done.text
    );
    stop(handle).await;
    env.assert_no_leaks();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hand_made_call_of_a_confirm_tool_waits_for_approval() {
    let env = TestEnv::new();
    let server = env.demo("demo_alpha", "alpha", &[]);
    let policy = "lookup = \"allow\"\nset = \"confirm\"\nreset = \"confirm\"\nfail = \"allow\"\nslow = \"allow\"\n";
    let mut handle = start(
        &env,
        &format!("{server}[servers.demo_alpha.tools]\n{policy}"),
    );
    handle
        .commands
        .send(Command::Connect("demo_alpha".into()))
        .unwrap();
    next(
        &mut handle,
        "the connection",
        |e| matches!(e, BackendEvent::Status(s) if s.starts_with("connected")),
    )
    .await;
    let arguments = json!({"key": "apple", "value": "blue"});
    handle
        .commands
        .send(Command::CallTool {
            name: "mcp__demo_alpha__set".into(),
            arguments,
        })
        .unwrap();
    let BackendEvent::ApprovalRequested(prompt) = next(&mut handle, "the prompt", |e| {
        matches!(e, BackendEvent::ApprovalRequested(_))
    })
    .await
    else {
        unreachable!()
    };
    assert_eq!(
        (prompt.alias.as_deref(), prompt.effect.as_str()),
        (Some("demo_alpha"), "confirm")
    );
    handle
        .commands
        .send(Command::Approval {
            id: prompt.id,
            decision: Decision::Deny,
        })
        .unwrap();
    let BackendEvent::ToolCallFinished(done) = next(&mut handle, "the result", |e| {
        matches!(e, BackendEvent::ToolCallFinished(_))
    })
    .await
    else {
        unreachable!()
    };
    assert_eq!(done.code.as_deref(), Some("mcp_permission_denied"));
    assert!(
        done.text.contains("denied by the operator"),
        "{}",
        done.text
    );
    stop(handle).await;
    env.assert_no_leaks();
}
