//! The running TUI re-reads its config file (the backend with the real demo
//! server): `r` reconnects under the policy saved on disk, a connected alias
//! takes a changed policy at once and is marked when its launch settings
//! changed, a broken edit is shown with the config error and never applied
//! half, and aliases added or removed on disk come and go.

use std::time::Duration;

use super::{call_by_hand, connect, fresh_views, next, stop};
use crate::common::TestEnv;
use crate::common::hubs::DEMO_POLICY;
use mcp_harness::backend::{self, BackendHandle};
use mcp_harness::config::{self, ConfigSource};
use mcp_harness::protocol::{BackendEvent, Command, Views};
use mcp_harness::session::SessionOptions;
use serde_json::json;

const MODEL: &str = "[model]\nprovider = \"scripted\"\n";

fn alpha(env: &TestEnv, policy: &str) -> String {
    format!(
        "{MODEL}{}[servers.demo_alpha.tools]\n{policy}",
        env.demo("demo_alpha", "alpha", &[])
    )
}

/// The backend over `text`, read from the config file (as the TUI is).
fn start(env: &TestEnv, text: &str) -> BackendHandle {
    let path = env.config(text);
    let config = config::load(ConfigSource::File(path)).expect("config");
    let options = SessionOptions {
        workspace: Some(env.dir.path().to_path_buf()),
        ..SessionOptions::default()
    };
    backend::spawn(config, options).expect("backend")
}

/// Saves the config as an editor that writes a new file and renames it over
/// the old one does.
fn save(env: &TestEnv, text: &str) {
    let temp = env.path(".config.toml.swp");
    std::fs::write(&temp, env.fill(text)).unwrap();
    std::fs::rename(&temp, env.path("config.toml")).unwrap();
}

/// The next operator-facing text (a command's result, a status, a notice)
/// that contains `needle`.
async fn said(handle: &mut BackendHandle, needle: &str) -> String {
    let (BackendEvent::CommandResult(text)
    | BackendEvent::Status(text)
    | BackendEvent::Notice(text)) = next(handle, needle, |e| match e {
        BackendEvent::CommandResult(t) | BackendEvent::Status(t) | BackendEvent::Notice(t) => {
            t.contains(needle)
        }
        _ => false,
    })
    .await
    else {
        unreachable!()
    };
    text
}

async fn reconnect(handle: &mut BackendHandle, alias: &str) -> String {
    handle
        .commands
        .send(Command::Reconnect(alias.into()))
        .unwrap();
    let BackendEvent::CommandResult(text) = next(handle, "the reconnect", |e| {
        matches!(e, BackendEvent::CommandResult(t) if t.starts_with(&format!("`{alias}`"))
            || t.starts_with(&format!("connected `{alias}`")))
    })
    .await
    else {
        unreachable!()
    };
    text
}

fn server<'a>(views: &'a Views, alias: &str) -> Option<&'a mcp_harness::protocol::ServerView> {
    views.servers.iter().find(|s| s.alias == alias)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn r_reconnects_under_the_policy_saved_on_disk() {
    let env = TestEnv::new();
    // `slow` has no policy: the connection is rejected.
    let without_slow = DEMO_POLICY.replace("slow = \"allow\"\n", "");
    let mut handle = start(&env, &alpha(&env, &without_slow));
    handle
        .commands
        .send(Command::Connect("demo_alpha".into()))
        .unwrap();
    let refused = said(&mut handle, "policy_mismatch").await;
    assert!(refused.contains("slow"), "{refused}");
    // The operator adds it in the file and presses r.
    std::fs::write(env.path("config.toml"), env.fill(&alpha(&env, DEMO_POLICY))).unwrap();
    handle
        .commands
        .send(Command::Reconnect("demo_alpha".into()))
        .unwrap();
    let mut texts = Vec::new();
    let result = loop {
        let BackendEvent::CommandResult(text) = next(&mut handle, "the reconnect", |e| {
            matches!(e, BackendEvent::CommandResult(_))
        })
        .await
        else {
            unreachable!()
        };
        texts.push(text.clone());
        if text.contains("`demo_alpha`") && !text.starts_with("config changed on disk") {
            break text;
        }
    };
    assert_eq!(
        result, "connected `demo_alpha`: 5 tools exposed",
        "{texts:#?}"
    );
    assert!(
        texts
            .iter()
            .any(|t| t.starts_with("config changed on disk: `demo_alpha`")),
        "the change is said: {texts:#?}"
    );
    stop(handle).await;
    env.assert_no_leaks();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_broken_edit_is_shown_and_never_applied_half() {
    let env = TestEnv::new();
    let mut handle = start(&env, &alpha(&env, DEMO_POLICY));
    connect(&mut handle, "demo_alpha").await;
    // `lookup` denied — and a typo in the same save: none of it applies.
    let broken = alpha(
        &env,
        &DEMO_POLICY.replace("lookup = \"allow\"", "lookup = \"deny\""),
    )
    .replace("args = [", "comand = \"x\"\nargs = [");
    save(&env, &broken);
    handle.commands.send(Command::Refresh).unwrap();
    let error = said(&mut handle, "servers.demo_alpha.comand").await;
    let file = env.path("config.toml").display().to_string();
    assert!(
        error.contains(&format!("config error in {file}"))
            && error.contains("did you mean `command`?"),
        "{error}"
    );
    assert!(
        error.contains("stays"),
        "the old config stays in force: {error}"
    );
    // The old policy holds, connected and after a reconnect: lookup runs.
    assert_eq!(
        call_by_hand(
            &mut handle,
            "mcp__demo_alpha__lookup",
            json!({"key": "apple"})
        )
        .await,
        None
    );
    assert_eq!(
        reconnect(&mut handle, "demo_alpha").await,
        "connected `demo_alpha`: 5 tools exposed"
    );
    // r again on the same broken file says it again.
    handle
        .commands
        .send(Command::Reconnect("demo_alpha".into()))
        .unwrap();
    said(&mut handle, "still cannot be used").await;
    said(&mut handle, "connected `demo_alpha`: 5 tools exposed").await;
    // Fixed: the policy applies to the live connection at once.
    save(
        &env,
        &alpha(
            &env,
            &DEMO_POLICY.replace("lookup = \"allow\"", "lookup = \"deny\""),
        ),
    );
    handle.commands.send(Command::Refresh).unwrap();
    said(
        &mut handle,
        "config changed on disk: `demo_alpha`'s policy changed",
    )
    .await;
    let done = said(&mut handle, "re-validated under its new policy").await;
    assert!(done.contains("4 tools exposed"), "{done}");
    let views = fresh_views(&mut handle).await;
    assert_eq!(server(&views, "demo_alpha").map(|s| s.exposed), Some(4));
    handle
        .commands
        .send(Command::CallTool {
            name: "mcp__demo_alpha__lookup".into(),
            arguments: json!({"key": "apple"}),
        })
        .unwrap();
    let BackendEvent::ToolCallFinished(done) = next(&mut handle, "the refusal", |e| {
        matches!(e, BackendEvent::ToolCallFinished(_))
    })
    .await
    else {
        unreachable!()
    };
    assert!(!done.ok, "lookup is denied now: {done:?}");
    stop(handle).await;
    env.assert_no_leaks();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_connected_alias_takes_its_policy_at_once_and_launch_settings_on_r() {
    let env = TestEnv::new();
    let mut handle = start(&env, &alpha(&env, DEMO_POLICY));
    connect(&mut handle, "demo_alpha").await;
    // `set` is confirm: a call by hand asks.
    let prompt = call_by_hand(
        &mut handle,
        "mcp__demo_alpha__set",
        json!({"key": "a", "value": "b"}),
    )
    .await;
    let prompt = prompt.expect("set asks first");
    handle
        .commands
        .send(Command::Approval {
            id: prompt.id,
            decision: mcp_harness::protocol::Decision::Deny,
        })
        .unwrap();
    next(&mut handle, "the denial", |e| {
        matches!(e, BackendEvent::ToolCallFinished(_))
    })
    .await;
    // set = allow, saved: in force for the live connection, no reconnect.
    save(
        &env,
        &alpha(
            &env,
            &DEMO_POLICY.replace("set = \"confirm\"", "set = \"allow\""),
        ),
    );
    handle.commands.send(Command::Refresh).unwrap();
    said(
        &mut handle,
        "re-validated under its new policy: 5 tools exposed",
    )
    .await;
    assert_eq!(
        call_by_hand(
            &mut handle,
            "mcp__demo_alpha__set",
            json!({"key": "a", "value": "b"})
        )
        .await,
        None,
        "set runs without a prompt now"
    );
    // A launch setting (a timeout, fixed when the connection opened): marked.
    let slower = alpha(
        &env,
        &DEMO_POLICY.replace("set = \"confirm\"", "set = \"allow\""),
    )
    .replace("args = [", "connect_timeout_ms = 20000\nargs = [");
    save(&env, &slower);
    handle.commands.send(Command::Refresh).unwrap();
    let text = said(&mut handle, "launch settings changed").await;
    assert!(text.contains("r reconnects it"), "{text}");
    let views = fresh_views(&mut handle).await;
    assert_eq!(
        server(&views, "demo_alpha").map(|s| s.config_changed),
        Some(true)
    );
    // r: reconnected under the new config, the mark is gone.
    assert_eq!(
        reconnect(&mut handle, "demo_alpha").await,
        "connected `demo_alpha`: 5 tools exposed"
    );
    let views = fresh_views(&mut handle).await;
    assert_eq!(
        server(&views, "demo_alpha").map(|s| s.config_changed),
        Some(false)
    );
    // What a session cannot change live says so.
    save(
        &env,
        &slower
            .replace(MODEL, "[model]\nprovider = \"scripted\"\nmax_tokens = 100\n[limits]\nmax_result_bytes = 5000\n"),
    );
    handle.commands.send(Command::Refresh).unwrap();
    let text = said(&mut handle, "config changed on disk").await;
    assert!(
        text.contains("[model] changed: the Lead keeps its model until the harness starts again")
            && text.contains("[limits] changed"),
        "{text}"
    );
    stop(handle).await;
    env.assert_no_leaks();
}

/// The watcher: nothing is sent to the backend, the saved file is noticed.
#[cfg(target_os = "linux")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn aliases_added_and_removed_on_disk_come_and_go() {
    let env = TestEnv::new();
    let mut handle = start(&env, &alpha(&env, DEMO_POLICY));
    connect(&mut handle, "demo_alpha").await;
    let beta = format!(
        "{MODEL}{}[servers.demo_beta.tools]\n{DEMO_POLICY}",
        env.demo("demo_beta", "beta", &[])
    );
    std::fs::write(env.path("config.toml"), env.fill(&beta)).unwrap();
    let text = said(&mut handle, "config changed on disk").await;
    assert!(
        text.contains("`demo_beta` added") && text.contains("`demo_alpha` removed: disconnected"),
        "{text}"
    );
    let BackendEvent::ToolsRevoked { alias, tools, .. } =
        next(&mut handle, "alpha's tools revoked", |e| {
            matches!(e, BackendEvent::ToolsRevoked { .. })
        })
        .await
    else {
        unreachable!()
    };
    assert_eq!((alias.as_str(), tools.len()), ("demo_alpha", 5));
    let views = fresh_views(&mut handle).await;
    let aliases: Vec<&str> = views.servers.iter().map(|s| s.alias.as_str()).collect();
    assert_eq!(aliases, ["demo_beta"]);
    assert!(views.snapshot > 0);
    connect(&mut handle, "demo_beta").await;
    // demo_alpha's process is gone with its alias.
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while env.tagged_processes().iter().any(|pid| {
        std::fs::read(format!("/proc/{pid}/cmdline"))
            .is_ok_and(|c| String::from_utf8_lossy(&c).contains("\0alpha\0"))
    }) {
        assert!(
            std::time::Instant::now() < deadline,
            "demo_alpha still runs"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    stop(handle).await;
    env.assert_no_leaks();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_policy_saved_while_the_alias_connects_applies_to_that_connection() {
    let env = TestEnv::new();
    let slow = |policy: &str| {
        format!(
            "{MODEL}{}[servers.demo_alpha.tools]\n{policy}",
            env.demo("demo_alpha", "alpha", &["--fault", "slow-initialize=2000"])
        )
    };
    let mut handle = start(&env, &slow(DEMO_POLICY));
    handle
        .commands
        .send(Command::Connect("demo_alpha".into()))
        .unwrap();
    // Until the attempt is under way (it read the old policy).
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    loop {
        let views = fresh_views(&mut handle).await;
        if server(&views, "demo_alpha")
            .is_some_and(|s| s.state == mcp_harness::protocol::AliasStatus::Connecting)
        {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "never connecting");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    save(
        &env,
        &slow(&DEMO_POLICY.replace("set = \"confirm\"", "set = \"allow\"")),
    );
    handle.commands.send(Command::Refresh).unwrap();
    said(&mut handle, "changed while it connects").await;
    said(&mut handle, "connected `demo_alpha`").await;
    said(
        &mut handle,
        "re-validated under its new policy: 5 tools exposed",
    )
    .await;
    assert_eq!(
        call_by_hand(
            &mut handle,
            "mcp__demo_alpha__set",
            json!({"key": "a", "value": "b"})
        )
        .await,
        None,
        "the connection opened under the old policy runs under the new one"
    );
    stop(handle).await;
    env.assert_no_leaks();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_new_policy_exposes_a_tool_only_pinned_and_revokes_what_it_no_longer_matches() {
    let env = TestEnv::new();
    let denied = DEMO_POLICY.replace("reset = \"confirm\"", "reset = \"deny\"");
    let mut handle = start(&env, &alpha(&env, &denied));
    connect(&mut handle, "demo_alpha").await;
    // `reset` was deny (never pinned): exposing it pins it first (trust on first use).
    save(&env, &alpha(&env, DEMO_POLICY));
    handle.commands.send(Command::Refresh).unwrap();
    let pinned = said(
        &mut handle,
        "pinned the definitions of 1 tool of `demo_alpha`",
    )
    .await;
    assert!(pinned.contains("reset"), "{pinned}");
    said(
        &mut handle,
        "re-validated under its new policy: 5 tools exposed",
    )
    .await;
    let lock = std::fs::read_to_string(env.path("mcp-harness.lock")).unwrap();
    assert!(lock.contains("reset"), "{lock}");
    // `slow` left out of the policy: the connection no longer matches it.
    save(
        &env,
        &alpha(&env, &DEMO_POLICY.replace("slow = \"allow\"\n", "")),
    );
    handle.commands.send(Command::Refresh).unwrap();
    let refused = said(&mut handle, "does not pass its new policy").await;
    assert!(
        refused.contains("policy_mismatch") && refused.contains("after the config changed"),
        "{refused}"
    );
    let views = fresh_views(&mut handle).await;
    let alpha = server(&views, "demo_alpha").unwrap();
    assert_eq!(alpha.state, mcp_harness::protocol::AliasStatus::Rejected);
    assert_eq!(alpha.policy_missing, ["slow"]);
    assert_eq!(views.snapshot, views.snapshot.max(1));
    stop(handle).await;
    env.assert_no_leaks();
}

/// `[flows]` edited on disk is in force at the next sink call: a sink in a
/// tainted session that the default (`confirm`) would ask about is refused
/// once the file says `on_trifecta = "deny"`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flows_change_on_disk_is_in_force_at_the_next_sink_call() {
    let env = TestEnv::new();
    let scenario = "delay_ms = 1\n[[act]]\n\
        [[act.turn]]\ntext = \"reading\"\ntool_calls = [\
          { name = \"connect_mcp\", arguments = { alias = \"demo_alpha\" } }]\n\
        [[act.turn]]\ntext = \"fetching\"\ntool_calls = [\
          { name = \"mcp__demo_alpha__lookup\", arguments = { key = \"apple\" } }]\n\
        [[act.turn]]\ntext = \"sending\"\ntool_calls = [\
          { name = \"mcp__demo_alpha__set\", arguments = { key = \"k\", value = \"v\" } }]\n\
        [[act.turn]]\ntext = \"done\"\n";
    std::fs::write(env.path("scenario.toml"), scenario).unwrap();
    let text = |flows: &str| {
        format!(
            "[model]\nprovider = \"scripted\"\nscenario = \"{{DIR}}/scenario.toml\"\n{flows}{}\
             [servers.demo_alpha.tools]\nlookup = \"allow\"\nset = \"allow\"\nreset = \"allow\"\n\
             fail = \"allow\"\nslow = \"allow\"\n[servers.demo_alpha.tool_labels]\n\
             lookup = [\"untrusted_content\", \"private_data\"]\nset = [\"external_sink\"]\n",
            env.demo("demo_alpha", "alpha", &[])
        )
    };
    let mut handle = start(&env, &text(""));
    save(&env, &text("[flows]\non_trifecta = \"deny\"\n"));
    handle.commands.send(Command::Refresh).unwrap();
    let applied = said(&mut handle, "[flows] changed").await;
    assert!(applied.contains("on_trifecta = \"deny\""), "{applied}");
    handle.commands.send(Command::Prompt("go".into())).unwrap();
    let BackendEvent::ToolCallFinished(sink) = next(&mut handle, "the sink's end", |e| {
        matches!(e, BackendEvent::ToolCallFinished(o) if o.code.as_deref() == Some("mcp_flow_denied"))
            || matches!(e, BackendEvent::ApprovalRequested(_))
    })
    .await
    else {
        panic!("the sink was asked about, not refused: the re-read [flows] was not applied");
    };
    assert_eq!(
        sink.decided,
        Some(mcp_harness::protocol::Decided::DeniedByFlow)
    );
    stop(handle).await;
}
