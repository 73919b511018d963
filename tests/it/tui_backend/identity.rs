//! One call, one identity (issue 20, deliverable 1), over the backend's
//! channels with real server processes: two calls of one tool in flight at
//! once keep their own task statuses and results, and two queued prompts for
//! the same tool settle the calls they name, whichever is answered first.

use std::collections::HashMap;
use std::time::Duration;

use mcp_harness::protocol::{
    BackendEvent, CallId, Command, Decided, Decision, Requester, TaskStatus, ToolOutcomeView,
};
use serde_json::{Value, json};

use super::{connect, next, start, stop};
use crate::common::TestEnv;
use crate::common::hubs::DEMO_POLICY;

/// Events until `done` says enough, in order (generous: a loaded machine).
async fn until(
    handle: &mut mcp_harness::backend::BackendHandle,
    what: &str,
    mut done: impl FnMut(&BackendEvent) -> bool,
) -> Vec<BackendEvent> {
    let mut seen = Vec::new();
    tokio::time::timeout(Duration::from_secs(60), async {
        loop {
            let event = handle.events.recv().await.expect("backend events");
            let enough = done(&event);
            seen.push(event);
            if enough {
                return;
            }
        }
    })
    .await
    .unwrap_or_else(|_| panic!("no {what} in time: {seen:#?}"));
    seen
}

/// Two hand-made calls of the task tool `research` at once: each call's task
/// statuses reach that call (on today's main both calls' statuses went to
/// whichever running call of the tool a map lookup found first), and each
/// gets its own result — on both revisions.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_task_calls_at_once_keep_their_own_statuses_and_results() {
    for mode in ["2026-07-28", "2025-11-25"] {
        let env = TestEnv::new();
        let server = env.demo("s", "alpha", &["--protocol", mode, "--extras"]);
        let mut handle = start(
            &env,
            &format!(
                "{server}[servers.s.tools]\n{DEMO_POLICY}research = \"allow\"\nguarded_set = \"deny\"\n"
            ),
        );
        connect(&mut handle, "s").await;
        for (topic, seconds) in [("tides", 2.0), ("winds", 0.4)] {
            handle
                .commands
                .send(Command::CallTool {
                    name: "mcp__s__research".into(),
                    arguments: json!({"topic": topic, "seconds": seconds}),
                })
                .unwrap();
        }
        let mut finished = 0;
        let events = until(&mut handle, "both results", |e| {
            finished += usize::from(matches!(e, BackendEvent::ToolCallFinished(_)));
            finished == 2
        })
        .await;
        let mut topic: HashMap<CallId, String> = HashMap::new();
        let mut statuses: HashMap<CallId, Vec<(TaskStatus, Option<String>)>> = HashMap::new();
        let mut results: Vec<ToolOutcomeView> = Vec::new();
        for event in events {
            match event {
                BackendEvent::ToolCallStarted(view) => {
                    assert_eq!(view.by, Requester::Operator);
                    let t = view.arguments["topic"].as_str().unwrap().to_string();
                    topic.insert(view.id, t);
                }
                BackendEvent::CallTask {
                    id,
                    status,
                    message,
                } => {
                    assert!(
                        !results.iter().any(|r| r.id == id),
                        "{mode}: a status after its call's result"
                    );
                    statuses.entry(id).or_default().push((status, message));
                }
                BackendEvent::ToolCallFinished(done) => results.push(done),
                _ => {}
            }
        }
        assert_eq!(topic.len(), 2, "{mode}: two calls, two ids");
        for (id, topic) in &topic {
            let own = statuses
                .get(id)
                .unwrap_or_else(|| panic!("{mode}: call {id} ({topic}) got no task status"));
            assert_eq!(
                own.first().map(|s| s.0),
                Some(TaskStatus::Working),
                "{mode}"
            );
            assert_eq!(
                own.last().map(|s| s.0),
                Some(TaskStatus::Completed),
                "{mode}: {topic}: {own:?}"
            );
            let result = results.iter().find(|r| r.id == *id).unwrap();
            assert!(result.ok, "{mode}: {result:?}");
            assert!(
                result.text.contains(&format!("research on {topic}")),
                "{mode}: {topic} got {}",
                result.text
            );
        }
        // The short one, asked second, ended first: both were in flight.
        assert_eq!(topic[&results[0].id], "winds", "{mode}");
        stop(handle).await;
        env.assert_no_leaks();
    }
}

/// The Lead's reply asks for two `confirm` calls of one tool: both prompts
/// are queued at once (today's main asked the second only after the first
/// was answered), each names its own call, and answering the second first
/// settles the right calls — the second approved and run, the first denied.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_queued_prompts_for_one_tool_settle_the_calls_they_name() {
    let env = TestEnv::new();
    let scenario = "delay_ms = 1\n[[act]]\n\
        [[act.turn]]\ntext = \"connect\"\ntool_calls = [{ name = \"connect_mcp\", arguments = { alias = \"demo_alpha\" } }]\n\
        [[act.turn]]\ntext = \"two sets\"\ntool_calls = [\
          { name = \"mcp__demo_alpha__set\", arguments = { key = \"apple\", value = \"green\" } },\
          { name = \"mcp__demo_alpha__set\", arguments = { key = \"pear\", value = \"gold\" } }]\n\
        [[act.turn]]\ntext = \"done\"\n";
    std::fs::write(env.path("scenario.toml"), scenario).unwrap();
    let server = env.demo("demo_alpha", "alpha", &[]);
    let mut handle = start(
        &env,
        &format!(
            "scenario = \"{{DIR}}/scenario.toml\"\n{server}[servers.demo_alpha.tools]\n{DEMO_POLICY}"
        ),
    );
    handle
        .commands
        .send(Command::Prompt("go".into()))
        .expect("prompt");
    let mut prompts = 0;
    let events = until(&mut handle, "two prompts at once", |e| {
        prompts += usize::from(matches!(e, BackendEvent::ApprovalRequested(_)));
        prompts == 2
    })
    .await;
    let mut key_of: HashMap<CallId, String> = HashMap::new();
    let mut asked = Vec::new();
    for event in events {
        match event {
            BackendEvent::ToolCallStarted(view) if view.name == "mcp__demo_alpha__set" => {
                key_of.insert(view.id, view.arguments["key"].as_str().unwrap().into());
            }
            BackendEvent::ApprovalRequested(view) => asked.push(view),
            _ => {}
        }
    }
    for prompt in &asked {
        assert_eq!(prompt.requested_by, Requester::Lead);
        assert_eq!(
            Some(&prompt.arguments["key"]),
            key_of
                .get(&prompt.call_id)
                .map(|k| Value::from(k.as_str()))
                .as_ref(),
            "the prompt names the call with its own arguments"
        );
    }
    let (first, second) = (&asked[0], &asked[1]);
    assert_ne!(first.call_id, second.call_id);
    // Queued in the reply's order.
    assert_eq!(key_of[&first.call_id], "apple");
    assert_eq!(key_of[&second.call_id], "pear");
    // The second first.
    for (prompt, decision) in [(second, Decision::Once), (first, Decision::Deny)] {
        handle
            .commands
            .send(Command::Approval {
                id: prompt.id,
                decision,
            })
            .expect("answer");
    }
    let mut outcomes: HashMap<CallId, ToolOutcomeView> = HashMap::new();
    until(&mut handle, "both results", |e| {
        if let BackendEvent::ToolCallFinished(done) = e
            && key_of.contains_key(&done.id)
        {
            outcomes.insert(done.id.clone(), done.clone());
        }
        outcomes.len() == 2
    })
    .await;
    let approved = &outcomes[&second.call_id];
    assert!(approved.ok, "{approved:?}");
    assert_eq!(approved.decided, Some(Decided::ApprovedOnce));
    assert!(approved.text.contains("pear"), "{}", approved.text);
    let denied = &outcomes[&first.call_id];
    assert!(!denied.ok, "{denied:?}");
    assert_eq!(denied.code.as_deref(), Some("mcp_permission_denied"));
    assert_eq!(denied.decided, Some(Decided::DeniedByOperator));
    next(&mut handle, "the end of the turn", |e| {
        matches!(e, BackendEvent::TurnEnded(_))
    })
    .await;
    stop(handle).await;
    env.assert_no_leaks();
}
