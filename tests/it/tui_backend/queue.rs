//! The approval queue kept honest, every call's decision, the session's grants
//! and "explain", over the backend's channels with real server processes.

use mcp_harness::backend::{self, BackendHandle};
use mcp_harness::config::{self, ConfigSource};
use mcp_harness::protocol::{
    ApprovalView, BackendEvent, CallId, Command, Decided, Decision, ExplainView, Rule,
    ToolOutcomeView, Withdrawal,
};
use mcp_harness::session::SessionOptions;
use serde_json::json;

use super::{call_by_hand, connect, fresh_views, next, start_alpha, stop};
use crate::common::TestEnv;
use crate::common::hubs::DEMO_POLICY;

async fn finished(handle: &mut BackendHandle, what: &str) -> ToolOutcomeView {
    let BackendEvent::ToolCallFinished(done) = next(handle, what, |e| {
        matches!(e, BackendEvent::ToolCallFinished(_))
    })
    .await
    else {
        unreachable!()
    };
    done
}

async fn prompt(handle: &mut BackendHandle) -> ApprovalView {
    let BackendEvent::ApprovalRequested(prompt) = next(handle, "a prompt", |e| {
        matches!(e, BackendEvent::ApprovalRequested(_))
    })
    .await
    else {
        unreachable!()
    };
    prompt
}

/// How call `id` was decided, as explain tells it.
async fn explain(handle: &mut BackendHandle, id: &CallId) -> ExplainView {
    handle
        .commands
        .send(Command::Explain(id.clone()))
        .expect("explain");
    match next(handle, "the explanation", |e| {
        matches!(e, BackendEvent::Explained(_))
    })
    .await
    {
        BackendEvent::Explained(view) => view,
        _ => unreachable!(),
    }
}

/// What the explanation says of one rule ("" when it says nothing).
fn rule_line(view: &ExplainView, rule: Rule) -> String {
    view.lines
        .iter()
        .find(|(r, _)| *r == rule)
        .map(|(_, t)| t.clone())
        .unwrap_or_default()
}

fn call(handle: &BackendHandle, tool: &str, arguments: serde_json::Value) {
    handle
        .commands
        .send(Command::CallTool {
            name: tool.into(),
            arguments,
        })
        .expect("call");
}

fn answer(handle: &BackendHandle, prompt: &ApprovalView, decision: Decision) {
    handle
        .commands
        .send(Command::Approval {
            id: prompt.id,
            decision,
        })
        .expect("answer");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_prompt_whose_tool_is_revoked_is_withdrawn_with_a_notice() {
    let env = TestEnv::new();
    let mut handle = start_alpha(&env);
    connect(&mut handle, "demo_alpha").await;
    let set = call_by_hand(
        &mut handle,
        "mcp__demo_alpha__set",
        json!({"key": "a", "value": "b"}),
    )
    .await
    .expect("set asks");
    // The server dies while the prompt is open.
    handle
        .commands
        .send(Command::KillServer("demo_alpha".into()))
        .expect("kill");
    let withdrawn = next(&mut handle, "the withdrawal", |e| {
        matches!(e, BackendEvent::ApprovalWithdrawn { .. })
    })
    .await;
    let BackendEvent::ApprovalWithdrawn { id, why } = withdrawn else {
        unreachable!()
    };
    assert_eq!(id, set.id);
    assert!(
        matches!(&why, Withdrawal::Revoked(cause) if cause.contains("killed")),
        "{why:?}"
    );
    next(
        &mut handle,
        "the notice",
        |e| matches!(e, BackendEvent::Notice(n) if n.contains("withdrew the approval prompt")),
    )
    .await;
    // The call says the truth: its server is gone (nobody denied it).
    let done = finished(&mut handle, "the call").await;
    assert_eq!(done.code.as_deref(), Some("mcp_not_connected"), "{done:?}");
    assert_eq!(done.decided, Some(Decided::NotApproved));
    stop(handle).await;
    env.assert_no_leaks();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn always_settles_the_queued_prompts_it_covers_and_a_revoked_grant_asks_again() {
    let env = TestEnv::new();
    let mut handle = start_alpha(&env);
    connect(&mut handle, "demo_alpha").await;
    let args = || json!({"key": "apple", "value": "green"});
    call(&handle, "mcp__demo_alpha__set", args());
    let first = prompt(&mut handle).await;
    call(&handle, "mcp__demo_alpha__set", args());
    let second = prompt(&mut handle).await;
    assert_ne!(first.id, second.id);
    answer(&handle, &first, Decision::Always);
    // The queued prompt for the same definition is settled with it.
    let BackendEvent::ApprovalWithdrawn { id, why } =
        next(&mut handle, "the settled prompt", |e| {
            matches!(e, BackendEvent::ApprovalWithdrawn { .. })
        })
        .await
    else {
        unreachable!()
    };
    assert_eq!(id, second.id);
    let Withdrawal::Granted(grant) = why else {
        panic!("{why:?}")
    };
    let mut decided = vec![
        finished(&mut handle, "a result").await,
        finished(&mut handle, "the other result").await,
    ];
    decided.sort_by_key(|d| d.id.clone());
    assert!(decided.iter().all(|d| d.ok), "{decided:?}");
    let calls: Vec<Option<Decided>> = decided.iter().map(|d| d.decided).collect();
    assert!(
        calls.contains(&Some(Decided::ApprovedAlways(grant))),
        "{calls:?}"
    );
    assert!(
        calls.contains(&Some(Decided::SessionGrant(grant))),
        "{calls:?}"
    );
    // The Rules view lists it; revoking it makes the tool ask again.
    let views = fresh_views(&mut handle).await;
    assert_eq!(views.grants.len(), 1);
    assert_eq!(views.grants[0].tool, "mcp__demo_alpha__set");
    assert_eq!(views.grants[0].uses, 1);
    handle
        .commands
        .send(Command::RevokeGrant(grant))
        .expect("revoke");
    next(
        &mut handle,
        "the word on it",
        |e| matches!(e, BackendEvent::CommandResult(s) if s.starts_with("revoked grant")),
    )
    .await;
    assert!(fresh_views(&mut handle).await.grants.is_empty());
    assert!(
        call_by_hand(&mut handle, "mcp__demo_alpha__set", args())
            .await
            .is_some(),
        "asks again"
    );
    stop(handle).await;
    env.assert_no_leaks();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_call_says_how_it_was_decided_and_explain_names_the_config_line() {
    let env = TestEnv::new();
    let server = env.demo("demo_alpha", "alpha", &[]);
    let policy = DEMO_POLICY.replace("reset = \"confirm\"", "reset = \"deny\"");
    let path = env.config(&format!(
        "[model]\nprovider = \"scripted\"\n{server}# local rules\n[servers.demo_alpha.tools]\n{policy}"
    ));
    let text = std::fs::read_to_string(&path).unwrap();
    let set_line = text.lines().position(|l| l.starts_with("set =")).unwrap() + 1;
    let reset_line = text.lines().position(|l| l.starts_with("reset =")).unwrap() + 1;
    let config = config::parse(&text, ConfigSource::File(path.clone())).expect("config");
    let options = SessionOptions {
        workspace: Some(env.dir.path().to_path_buf()),
        ..SessionOptions::default()
    };
    let mut handle = backend::spawn(config, options).expect("backend");
    connect(&mut handle, "demo_alpha").await;
    // allow: the policy decides.
    call(&handle, "mcp__demo_alpha__lookup", json!({"key": "apple"}));
    let lookup = finished(&mut handle, "lookup").await;
    assert_eq!(lookup.decided, Some(Decided::AllowedByPolicy));
    // confirm: the operator, once, then a denial.
    call(
        &handle,
        "mcp__demo_alpha__set",
        json!({"key": "a", "value": "b"}),
    );
    let asked = prompt(&mut handle).await;
    answer(&handle, &asked, Decision::Once);
    let once = finished(&mut handle, "set").await;
    assert_eq!(once.decided, Some(Decided::ApprovedOnce));
    call(
        &handle,
        "mcp__demo_alpha__set",
        json!({"key": "a", "value": "c"}),
    );
    let asked = prompt(&mut handle).await;
    answer(&handle, &asked, Decision::Deny);
    let denied = finished(&mut handle, "the denied set").await;
    assert_eq!(denied.decided, Some(Decided::DeniedByOperator));
    // The schema refuses before anything is asked or sent.
    call(&handle, "mcp__demo_alpha__set", json!({"key": 5}));
    let refused = finished(&mut handle, "the refused set").await;
    assert_eq!(refused.decided, Some(Decided::RefusedBySchema));
    // Explain: the policy entry with its file and line, the schema, the answer.
    let view = explain(&mut handle, &once.id).await;
    let line = |rule: Rule| rule_line(&view, rule);
    assert_eq!(view.tool, "mcp__demo_alpha__set");
    let policy = line(Rule::Policy);
    assert!(
        policy.contains("[servers.demo_alpha.tools] set = \"confirm\"")
            && policy.ends_with(&format!("{}:{set_line}", path.display())),
        "{policy}"
    );
    assert!(line(Rule::Schema).contains("satisfied"), "{view:?}");
    assert!(
        line(Rule::Approval).contains("approved this call once"),
        "{view:?}"
    );
    let view = explain(&mut handle, &refused.id).await;
    let schema = rule_line(&view, Rule::Schema);
    assert!(
        schema.contains("refused") && schema.contains("/key"),
        "{schema}"
    );
    // deny: never offered, so the call path knows only the alias; explain
    // still names the entry and its line, and says nothing contrary to it.
    call(&handle, "mcp__demo_alpha__reset", json!({}));
    let reset = finished(&mut handle, "the denied reset").await;
    assert_eq!(reset.decided, Some(Decided::DeniedByPolicy));
    let view = explain(&mut handle, &reset.id).await;
    let line = |rule: Rule| rule_line(&view, rule);
    let policy = line(Rule::Policy);
    assert!(
        policy.contains("[servers.demo_alpha.tools] reset = \"deny\"")
            && policy.contains(&format!("{}:{reset_line}", path.display()))
            && policy.contains("never offered"),
        "{policy}"
    );
    assert!(line(Rule::Schema).contains("policy refused"), "{view:?}");
    assert!(line(Rule::Approval).contains("policy denies"), "{view:?}");
    stop(handle).await;
    env.assert_no_leaks();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_grant_saved_to_the_config_writes_allow_and_keeps_the_comments() {
    let env = TestEnv::new();
    let server = env.demo("demo_alpha", "alpha", &[]);
    let policy = DEMO_POLICY.replace("set = \"confirm\"", "set = \"confirm\" # ask me");
    let path = env.config(&format!(
        "[model]\nprovider = \"scripted\"\n{server}[servers.demo_alpha.tools]\n{policy}"
    ));
    let text = std::fs::read_to_string(&path).unwrap();
    let config = config::parse(&text, ConfigSource::File(path.clone())).expect("config");
    let options = SessionOptions {
        workspace: Some(env.dir.path().to_path_buf()),
        ..SessionOptions::default()
    };
    let mut handle = backend::spawn(config, options).expect("backend");
    connect(&mut handle, "demo_alpha").await;
    call(
        &handle,
        "mcp__demo_alpha__set",
        json!({"key": "a", "value": "b"}),
    );
    let asked = prompt(&mut handle).await;
    answer(&handle, &asked, Decision::Always);
    let BackendEvent::ToolCallFinished(done) = next(&mut handle, "set", |e| {
        matches!(e, BackendEvent::ToolCallFinished(_))
    })
    .await
    else {
        unreachable!()
    };
    let Some(Decided::ApprovedAlways(grant)) = done.decided else {
        panic!("{done:?}")
    };
    handle
        .commands
        .send(Command::SaveGrant(grant))
        .expect("save");
    next(
        &mut handle,
        "the word on it",
        |e| matches!(e, BackendEvent::CommandResult(s) if s.contains("set = \"allow\"")),
    )
    .await;
    let after = std::fs::read_to_string(&path).unwrap();
    assert!(after.contains("set = \"allow\" # ask me"), "{after}");
    assert!(after.contains("reset = \"confirm\""), "{after}");
    // From the next connect, the policy says allow: no prompt.
    handle
        .commands
        .send(Command::Reconnect("demo_alpha".into()))
        .expect("reconnect");
    next(
        &mut handle,
        "the new connection",
        |e| matches!(e, BackendEvent::CommandResult(s) if s.starts_with("connected")),
    )
    .await;
    assert!(
        call_by_hand(
            &mut handle,
            "mcp__demo_alpha__set",
            json!({"key": "a", "value": "c"})
        )
        .await
        .is_none(),
        "allowed now"
    );
    stop(handle).await;
    env.assert_no_leaks();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_after_a_rug_pull_is_held_by_the_pin_and_explain_says_so() {
    let env = TestEnv::new();
    // The server changes lookup's definition as it answers a call.
    let server = env.demo("s", "alpha", &["--fault", "mutate-tools=rug-pull"]);
    let mut handle = super::start(
        &env,
        &format!(
            "{server}[servers.s.tools]\nlookup = \"allow\"\nset = \"allow\"\nreset = \"allow\"\nfail = \"allow\"\nslow = \"deny\"\n"
        ),
    );
    connect(&mut handle, "s").await;
    call(&handle, "mcp__s__set", json!({"key": "k", "value": "v"}));
    // The server changes lookup as it answers `set`; the re-list finds it and
    // the whole connection goes. Take `set`'s end and the revocation in
    // whichever order they come (waiting for one alone would drop the other).
    let (mut set, mut revoked) = (None, false);
    while set.is_none() || !revoked {
        match next(&mut handle, "set's end and the revocation", |e| {
            matches!(e, BackendEvent::ToolCallFinished(_))
                || matches!(e, BackendEvent::ToolsRevoked { cause, .. } if cause.kind == mcp_harness::protocol::EndKind::PolicyViolation)
        })
        .await
        {
            BackendEvent::ToolCallFinished(done) => set = Some(done),
            _ => revoked = true,
        }
    }
    let set = set.expect("set finished");
    assert_eq!(set.decided, Some(Decided::AllowedByPolicy), "{set:?}");
    // Explained after the revocation, `set` still matched its pin when it ran.
    let pin = rule_line(&explain(&mut handle, &set.id).await, Rule::Pin);
    assert!(pin.contains("matched its pin, sha256"), "{pin}");
    call(&handle, "mcp__s__lookup", json!({"key": "apple"}));
    let lookup = finished(&mut handle, "lookup").await;
    assert_eq!(lookup.decided, Some(Decided::HeldByPin), "{lookup:?}");
    let pin = rule_line(&explain(&mut handle, &lookup.id).await, Rule::Pin);
    assert!(
        pin.starts_with("held:") && pin.contains("definition_changed"),
        "{pin}"
    );
    stop(handle).await;
    env.assert_no_leaks();
}
