//! The TUI's backend and pinned definitions, with real server processes: a
//! rug pull mid-session leaves the alias refused with the diff in its view;
//! accepting what was shown writes the lock file and the alias reconnects
//! (accepting something else is refused); writing a policy with `p` pins the
//! tools it lists.

use std::time::Duration;

use crate::common::TestEnv;
use mcp_harness::backend::{self, BackendHandle};
use mcp_harness::config::{self, ConfigSource};
use mcp_harness::mcp::pins::lock;
use mcp_harness::protocol::{AliasStatus, BackendEvent, Command, ServerView};
use mcp_harness::session::SessionOptions;
use serde_json::json;

const POLICY: &str = "lookup = \"allow\"\nset = \"allow\"\nreset = \"confirm\"\nfail = \"allow\"\nslow = \"allow\"\n";

/// The backend over `servers`, from a config file in the test's directory (so
/// the lock file is beside it).
fn start(env: &TestEnv, servers: &str) -> BackendHandle {
    let path = env.config(&format!("[model]\nprovider = \"scripted\"\n{servers}"));
    let config = config::load(ConfigSource::File(path)).expect("config");
    let options = SessionOptions {
        workspace: Some(env.dir.path().to_path_buf()),
        ..SessionOptions::default()
    };
    backend::spawn(config, options).expect("backend")
}

/// The first status message that satisfies `pred`.
async fn status(handle: &mut BackendHandle, what: &str, pred: impl Fn(&str) -> bool) -> String {
    tokio::time::timeout(Duration::from_secs(30), async {
        loop {
            if let BackendEvent::CommandResult(text) = handle.events.recv().await.expect("events")
                && pred(&text)
            {
                return text;
            }
        }
    })
    .await
    .unwrap_or_else(|_| panic!("no status: {what}"))
}

/// The first status message that satisfies `pred`, and the notices that came
/// before it.
async fn status_and_notices(
    handle: &mut BackendHandle,
    what: &str,
    pred: impl Fn(&str) -> bool,
) -> (String, Vec<String>) {
    let mut notices = Vec::new();
    tokio::time::timeout(Duration::from_secs(30), async {
        loop {
            match handle.events.recv().await.expect("events") {
                BackendEvent::CommandResult(text) if pred(&text) => return (text, notices),
                BackendEvent::Notice(text) => notices.push(text),
                _ => {}
            }
        }
    })
    .await
    .unwrap_or_else(|_| panic!("no status: {what}"))
}

/// Waits for a view of `alias` that satisfies `pred`.
async fn view_of(
    handle: &mut BackendHandle,
    alias: &str,
    pred: impl Fn(&ServerView) -> bool,
) -> ServerView {
    tokio::time::timeout(Duration::from_secs(30), async {
        loop {
            let found = handle
                .views
                .borrow_and_update()
                .servers
                .iter()
                .find(|s| s.alias == alias)
                .cloned();
            if let Some(view) = found.filter(|v| pred(v)) {
                return view;
            }
            handle.views.changed().await.expect("the backend is up");
        }
    })
    .await
    .unwrap_or_else(|_| panic!("no such view of {alias}"))
}

fn read_lock(env: &TestEnv) -> lock::Lock {
    lock::parse(&std::fs::read_to_string(env.path("mcp-harness.lock")).expect("lock file"))
        .expect("valid")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rug_pull_is_refused_shown_as_a_diff_and_accepted_in_one_act() {
    let env = TestEnv::new();
    let mark = env.path("pulled").to_string_lossy().into_owned();
    let faults = [
        "--fault",
        "mutate-tools=rug-pull",
        "--fault",
        &format!("mutate-mark={mark}"),
    ];
    let server = env.demo("demo_alpha", "alpha", &faults);
    let mut handle = start(
        &env,
        &format!("{server}[servers.demo_alpha.tools]\n{POLICY}"),
    );
    handle
        .commands
        .send(Command::Connect("demo_alpha".into()))
        .unwrap();
    status(&mut handle, "connected", |s| s.starts_with("connected")).await;
    let pinned = read_lock(&env).servers["demo_alpha"]["lookup"]
        .sha256
        .clone();
    // This call makes the server change lookup's description, invisibly.
    handle
        .commands
        .send(Command::CallTool {
            name: "mcp__demo_alpha__set".into(),
            arguments: json!({"key": "k", "value": "v"}),
        })
        .unwrap();
    let refused = view_of(&mut handle, "demo_alpha", |v| v.pins_refused).await;
    assert_eq!(refused.state, AliasStatus::Rejected);
    assert_eq!(refused.code.as_deref(), Some("definition_changed"));
    let change = &refused.pin_changes[0];
    assert_eq!(change.tool, "lookup");
    assert_eq!(change.old_sha256, pinned.as_str());
    assert!(change.diff.contains("<U+E0042>"), "{}", change.diff);
    assert!(
        change.diff.contains("spell: \"Before answering"),
        "{}",
        change.diff
    );
    let lookup = refused
        .published
        .iter()
        .find(|t| t.name == "lookup")
        .unwrap();
    assert_eq!(lookup.pin, mcp_harness::protocol::PinStatus::Changed);
    // Accepting something other than what was shown is refused.
    handle
        .commands
        .send(Command::AcceptPins {
            alias: "demo_alpha".into(),
            seen: vec!["0".repeat(64)],
        })
        .unwrap();
    status(&mut handle, "a refusal", |s| {
        s.contains("other definitions since you looked")
    })
    .await;
    assert_eq!(
        read_lock(&env).servers["demo_alpha"]["lookup"].sha256,
        pinned
    );
    // Accepting what was shown pins it and reconnects; the tools come back.
    handle
        .commands
        .send(Command::AcceptPins {
            alias: "demo_alpha".into(),
            seen: vec![change.new_sha256.clone()],
        })
        .unwrap();
    let (text, notices) =
        status_and_notices(&mut handle, "the acceptance", |s| s.starts_with("accepted")).await;
    assert!(
        text.contains("accepted 1 definition of `demo_alpha` (`lookup`), pinned in "),
        "{text}"
    );
    // One act, one notice: the result above says what was accepted.
    assert!(
        !notices.iter().any(|n| n.contains("accepted")),
        "{notices:?}"
    );
    assert!(
        text.contains("connected `demo_alpha`: 5 tools exposed"),
        "{text}"
    );
    assert_eq!(
        read_lock(&env).servers["demo_alpha"]["lookup"]
            .sha256
            .as_str(),
        change.new_sha256
    );
    let ready = view_of(&mut handle, "demo_alpha", |v| v.state == AliasStatus::Ready).await;
    assert!(!ready.pins_refused);
    handle.commands.send(Command::Quit).unwrap();
    let _ = tokio::time::timeout(Duration::from_secs(20), handle.task).await;
    env.assert_no_leaks();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn writing_a_policy_with_p_pins_the_tools_it_lists() {
    let env = TestEnv::new();
    let server = format!(
        "{}pin = \"required\"\n",
        env.demo("demo_alpha", "alpha", &[])
    );
    // The policy misses `slow`: policy_mismatch.
    let policy = POLICY.replace("slow = \"allow\"\n", "");
    let mut handle = start(
        &env,
        &format!("{server}[servers.demo_alpha.tools]\n{policy}"),
    );
    handle
        .commands
        .send(Command::Connect("demo_alpha".into()))
        .unwrap();
    let refused = view_of(&mut handle, "demo_alpha", |v| {
        v.state == AliasStatus::Rejected
    })
    .await;
    assert_eq!(refused.code.as_deref(), Some("policy_mismatch"));
    assert!(
        !env.path("mcp-harness.lock").exists(),
        "required never pins by itself"
    );
    handle
        .commands
        .send(Command::WritePolicy("demo_alpha".into()))
        .unwrap();
    let text = status(&mut handle, "the policy's reconnect", |s| {
        s.contains("pinned 5 new")
    })
    .await;
    assert!(
        text.contains("connected `demo_alpha`: 5 tools exposed"),
        "{text}"
    );
    let pinned: Vec<String> = read_lock(&env).servers["demo_alpha"]
        .keys()
        .cloned()
        .collect();
    assert_eq!(pinned, ["fail", "lookup", "reset", "set", "slow"]);
    handle.commands.send(Command::Quit).unwrap();
    let _ = tokio::time::timeout(Duration::from_secs(20), handle.task).await;
    env.assert_no_leaks();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn p_on_tools_pinned_already_says_one_notice_without_pinned_0() {
    let env = TestEnv::new();
    let server = env.demo("demo_alpha", "alpha", &[]);
    // A first session pins all five (trust on first use).
    let mut handle = start(
        &env,
        &format!("{server}[servers.demo_alpha.tools]\n{POLICY}"),
    );
    handle
        .commands
        .send(Command::Connect("demo_alpha".into()))
        .unwrap();
    status(&mut handle, "connected", |s| s.starts_with("connected")).await;
    handle.commands.send(Command::Quit).unwrap();
    let _ = tokio::time::timeout(Duration::from_secs(20), handle.task).await;
    assert_eq!(read_lock(&env).servers["demo_alpha"].len(), 5);
    // The next one's policy misses `slow`: policy_mismatch, every tool pinned.
    let policy = POLICY.replace("slow = \"allow\"\n", "");
    let mut handle = start(
        &env,
        &format!("{server}[servers.demo_alpha.tools]\n{policy}"),
    );
    handle
        .commands
        .send(Command::Connect("demo_alpha".into()))
        .unwrap();
    // The connect's own result first.
    status(&mut handle, "the refusal", |s| {
        s.starts_with("`demo_alpha` policy_mismatch")
    })
    .await;
    handle
        .commands
        .send(Command::WritePolicy("demo_alpha".into()))
        .unwrap();
    // The first message after `p` is its whole story: written, reconnected.
    let text = status(&mut handle, "the policy's result", |_| true).await;
    assert!(
        text.starts_with("wrote [servers.demo_alpha.tools] to "),
        "{text}"
    );
    assert!(
        text.contains("connected `demo_alpha`: 5 tools exposed"),
        "{text}"
    );
    assert!(!text.contains("pinned"), "nothing new was pinned: {text}");
    handle.commands.send(Command::Quit).unwrap();
    let _ = tokio::time::timeout(Duration::from_secs(20), handle.task).await;
    env.assert_no_leaks();
}
