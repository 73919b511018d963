//! The TUI's backend over its two channels, with real server processes: a server
//! that asks for input mid-call gets the operator's form answer; an operator's
//! hand-made call of a `confirm` tool waits for the approval prompt.

mod forms;
mod identity;
mod queue;
mod reread;
mod resume;
mod server_content;
mod tasks;
mod views;

use std::time::Duration;

use crate::common::TestEnv;
use crate::common::hubs::DEMO_POLICY;
use mcp_harness::backend::{self, BackendHandle};
use mcp_harness::config::{self, ConfigSource};
use mcp_harness::protocol::{
    ApprovalView, BackendEvent, Command, Decision, ElicitAnswer, FieldKind, HealthView,
    PolicyEffect, Requester, Views,
};
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

/// The backend over demo_alpha alone, with the demo policy (`set`, `reset` confirm).
fn start_alpha(env: &TestEnv) -> BackendHandle {
    let server = env.demo("demo_alpha", "alpha", &[]);
    start(
        env,
        &format!("{server}[servers.demo_alpha.tools]\n{DEMO_POLICY}"),
    )
}

fn start(env: &TestEnv, servers: &str) -> BackendHandle {
    let text = format!("[model]\nprovider = \"scripted\"\n{servers}");
    // A config file of the test's own: the pins' lock file goes beside it,
    // never into the user's data dir.
    let path = env.config(&text);
    let config = config::parse(&env.fill(&text), ConfigSource::File(path)).expect("config");
    let options = SessionOptions {
        workspace: Some(env.dir.path().to_path_buf()),
        ..SessionOptions::default()
    };
    backend::spawn(config, options).expect("backend")
}

/// Views built after this moment (a refresh asks for them).
async fn fresh_views(handle: &mut BackendHandle) -> Views {
    handle.views.borrow_and_update();
    handle.commands.send(Command::Refresh).expect("refresh");
    tokio::time::timeout(Duration::from_secs(30), handle.views.changed())
        .await
        .expect("a view in time")
        .expect("the backend is up");
    handle.views.borrow_and_update().clone()
}

/// The alias's health as of a fresh view.
async fn health_after(handle: &mut BackendHandle, alias: &str) -> HealthView {
    fresh_views(handle)
        .await
        .servers
        .iter()
        .find(|s| s.alias == alias)
        .and_then(|s| s.health.clone())
        .expect("health")
}

async fn connect(handle: &mut BackendHandle, alias: &str) {
    handle
        .commands
        .send(Command::Connect(alias.into()))
        .expect("connect");
    next(
        handle,
        "the connection",
        |e| matches!(e, BackendEvent::CommandResult(s) if s.starts_with("connected")),
    )
    .await;
}

/// Calls `tool` by hand; returns its prompt, or `None` when it ran unasked.
async fn call_by_hand(
    handle: &mut BackendHandle,
    tool: &str,
    arguments: serde_json::Value,
) -> Option<ApprovalView> {
    handle
        .commands
        .send(Command::CallTool {
            name: tool.into(),
            arguments,
        })
        .expect("call");
    match next(handle, "a prompt or the result", |e| {
        matches!(
            e,
            BackendEvent::ApprovalRequested(_) | BackendEvent::ToolCallFinished(_)
        )
    })
    .await
    {
        BackendEvent::ApprovalRequested(prompt) => Some(prompt),
        BackendEvent::ToolCallFinished(done) => {
            assert!(done.ok, "{done:?}");
            None
        }
        _ => unreachable!(),
    }
}

async fn approve(handle: &mut BackendHandle, prompt: &ApprovalView, decision: Decision) {
    handle
        .commands
        .send(Command::Approval {
            id: prompt.id,
            decision,
        })
        .expect("answer");
    let BackendEvent::ToolCallFinished(done) = next(handle, "the result", |e| {
        matches!(e, BackendEvent::ToolCallFinished(_))
    })
    .await
    else {
        unreachable!()
    };
    assert!(done.ok, "{done:?}");
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
        |e| matches!(e, BackendEvent::CommandResult(s) if s.starts_with("connected")),
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
        FieldKind::Choice(
            ["red", "green"]
                .map(|v| mcp_harness::protocol::Choice {
                    value: v.into(),
                    title: None,
                })
                .to_vec()
        )
    );
    assert_eq!(form.fields[0].default, Some(json!("green")));
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
    let mut handle = start_alpha(&env);
    handle
        .commands
        .send(Command::Connect("demo_alpha".into()))
        .unwrap();
    next(
        &mut handle,
        "the connection",
        |e| matches!(e, BackendEvent::CommandResult(s) if s.starts_with("connected")),
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
    let BackendEvent::ToolCallStarted(call) = next(&mut handle, "the call", |e| {
        matches!(e, BackendEvent::ToolCallStarted(_))
    })
    .await
    else {
        unreachable!()
    };
    let BackendEvent::ApprovalRequested(prompt) = next(&mut handle, "the prompt", |e| {
        matches!(e, BackendEvent::ApprovalRequested(_))
    })
    .await
    else {
        unreachable!()
    };
    assert_eq!(
        (prompt.alias.as_deref(), prompt.effect),
        (Some("demo_alpha"), PolicyEffect::Confirm)
    );
    // The prompt names its call, and says the operator made it, not the Lead.
    assert_eq!(prompt.call_id, call.id);
    assert_eq!(prompt.requested_by, Requester::Operator);
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
    // A denial says nothing about the server's health.
    let health = health_after(&mut handle, "demo_alpha").await;
    assert_eq!((health.calls_ok, health.calls_failed), (0, 0));
    assert_eq!(health.last_error, None);
    stop(handle).await;
    env.assert_no_leaks();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn approve_always_holds_for_one_definition_on_one_connection() {
    let env = TestEnv::new();
    // The first call changes lookup's description (and says so: list_changed).
    // Unpinned, so the change is re-validated and replaces the tool (pinned, it
    // would revoke the connection: rule 14, tested in pins.rs).
    let server = format!(
        "{}pin = \"off\"\n",
        env.demo(
            "demo_alpha",
            "alpha",
            &["--fault", "mutate-tools=description"],
        )
    );
    let policy = "lookup = \"confirm\"\nset = \"confirm\"\nreset = \"confirm\"\nfail = \"allow\"\nslow = \"allow\"\n";
    let mut handle = start(
        &env,
        &format!("{server}[servers.demo_alpha.tools]\n{policy}"),
    );
    connect(&mut handle, "demo_alpha").await;
    let tool = "mcp__demo_alpha__lookup";
    let args = || json!({"key": "apple"});
    let prompt = call_by_hand(&mut handle, tool, args())
        .await
        .expect("a confirm tool asks");
    approve(&mut handle, &prompt, Decision::Always).await;
    // That call made the server re-publish lookup with another description.
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    loop {
        let views = fresh_views(&mut handle).await;
        let changed = views
            .servers
            .iter()
            .flat_map(|s| s.published.iter())
            .any(|t| {
                t.name == "lookup"
                    && t.description
                        .as_deref()
                        .is_some_and(|d| d.contains("different description"))
            });
        if changed {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "lookup never changed");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // Its definition changed: "always" was for the old one.
    let prompt = call_by_hand(&mut handle, tool, args())
        .await
        .expect("a changed tool asks again");
    approve(&mut handle, &prompt, Decision::Always).await;
    // The same definition on the same connection: no prompt.
    assert_eq!(call_by_hand(&mut handle, tool, args()).await, None);
    let health = health_after(&mut handle, "demo_alpha").await;
    assert_eq!(health.calls_ok, 3, "hand-made calls count in Health");
    // A new connection: asks again.
    handle
        .commands
        .send(Command::Reconnect("demo_alpha".into()))
        .unwrap();
    next(
        &mut handle,
        "the new connection",
        |e| matches!(e, BackendEvent::CommandResult(s) if s.starts_with("connected")),
    )
    .await;
    let prompt = call_by_hand(&mut handle, tool, args())
        .await
        .expect("a reconnected tool asks again");
    approve(&mut handle, &prompt, Decision::Once).await;
    stop(handle).await;
    env.assert_no_leaks();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn interrupt_cancels_a_hand_made_call_on_the_wire_and_keeps_the_connection() {
    let env = TestEnv::new();
    let mut handle = start_alpha(&env);
    connect(&mut handle, "demo_alpha").await;
    handle
        .commands
        .send(Command::CallTool {
            name: "mcp__demo_alpha__slow".into(),
            arguments: json!({"seconds": 20, "steps": 20}),
        })
        .unwrap();
    let BackendEvent::CallProgress { id, total, .. } = next(&mut handle, "progress", |e| {
        matches!(e, BackendEvent::CallProgress { .. })
    })
    .await
    else {
        unreachable!()
    };
    assert_eq!(total, Some(20.0));
    assert!(id.as_str().starts_with("operator-"), "{id}");
    handle.commands.send(Command::Interrupt).unwrap();
    let BackendEvent::ToolCallFinished(done) = next(&mut handle, "the result", |e| {
        matches!(e, BackendEvent::ToolCallFinished(_))
    })
    .await
    else {
        unreachable!()
    };
    assert_eq!(done.id, id);
    assert_eq!(done.code.as_deref(), Some("interrupted"), "{done:?}");
    // The server heard the cancellation (it logs it) and stays connected.
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    loop {
        let health = health_after(&mut handle, "demo_alpha").await;
        if health
            .stderr_tail
            .iter()
            .any(|l| l.contains("slow: cancelled"))
        {
            assert_eq!(health.ended, None, "the connection is kept");
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "no cancellation in {:?}",
            health.stderr_tail
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    stop(handle).await;
    env.assert_no_leaks();
}
