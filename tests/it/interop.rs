//! Interop with servers nobody here wrote: the official reference servers
//! (server-everything, server-filesystem, server-memory from npm) and
//! mcp-server-time (PyPI), pinned in `interop/` and installed by
//! `interop/install.sh`. Through the real binary, as an operator would use it.

use std::time::Duration;

use crate::common::interop::Interop;
use crate::common::{TestEnv, json, stderr, stdout};
use mcp_harness::mcp::{AliasState, FlagApprover, McpEvent};
use serde_json::{Value, json as j};

/// Node and Python servers start slowly when the whole suite loads two cores
/// (the time server's imports alone can pass the default 10 s): be generous.
const SLOW_START: &str = "connect_timeout_ms = 60000\n";

/// `[servers.ALIAS]` for a third-party server, tagged through its environment.
fn server(
    env: &TestEnv,
    alias: &str,
    command: &std::path::Path,
    args: &[String],
    extra_env: &str,
) -> String {
    let args: Vec<String> = args.iter().map(|a| format!("{a:?}")).collect();
    format!(
        "[servers.{alias}]\ncommand = {:?}\nargs = [{}]\nenv = {{ MCPH_TEST_TAG = \"{}\"{extra_env} }}\n{SLOW_START}",
        command.to_string_lossy(),
        args.join(", "),
        env.tag
    )
}

/// All four servers, without policies.
fn servers(env: &TestEnv, i: &Interop) -> String {
    let node = i.node();
    let entry = |p: &str| i.npm_entry(p).to_string_lossy().into_owned();
    let files = env.path("files");
    std::fs::create_dir_all(&files).unwrap();
    std::fs::write(files.join("hello.txt"), "hello from a test\n").unwrap();
    let memory = format!(
        ", MEMORY_FILE_PATH = {:?}",
        env.path("memory.jsonl").to_string_lossy()
    );
    [
        server(
            env,
            "everything",
            &node,
            &[entry("server-everything"), "stdio".into()],
            "",
        ),
        server(
            env,
            "fs",
            &node,
            &[
                entry("server-filesystem"),
                files.to_string_lossy().into_owned(),
            ],
            "",
        ),
        server(env, "memory", &node, &[entry("server-memory")], &memory),
        server(
            env,
            "time",
            &i.time_server(),
            &["--local-timezone".into(), "UTC".into()],
            "",
        ),
    ]
    .concat()
}

/// Runs `policy ALIAS` for every server and appends the blocks to the config.
fn with_printed_policies(env: &TestEnv, base: &str) -> String {
    env.config(base);
    let mut text = base.to_string();
    for alias in ["everything", "fs", "memory", "time"] {
        let out = env.run(&["policy", alias]);
        assert!(out.status.success(), "policy {alias}: {}", stderr(&out));
        text.push_str(&stdout(&out));
    }
    env.config(&text);
    text
}

#[cfg_attr(
    mcph_no_interop,
    ignore = "npm or python3 is missing: the interop tests install the pinned servers with them (docs/src/testing.md)"
)]
#[test]
fn check_passes_once_the_printed_policies_are_in_the_config() {
    let interop = Interop::get();
    let env = TestEnv::new();
    let base = servers(&env, &interop);
    env.config(&format!("[limits]\nconnect_timeout_ms = 60000\n{base}"));
    let out = env.run(&["check", "--json"]);
    assert_eq!(
        out.status.code(),
        Some(1),
        "no policy yet: {}",
        stdout(&out)
    );
    let report = json(&out);
    for s in report["servers"].as_array().unwrap() {
        assert_eq!(s["error"]["code"], "policy_mismatch", "{s}");
    }
    with_printed_policies(
        &env,
        &format!("[limits]\nconnect_timeout_ms = 60000\n{base}"),
    );
    let out = env.run(&["check", "--json"]);
    let report = json(&out);
    assert_eq!(out.status.code(), Some(0), "{report}");
    // Zero false positives: the poisoning screen flags none of their tools
    // (nor hidden text), so each was pinned on first use without a word.
    for server in report["servers"].as_array().unwrap() {
        assert!(server.get("instructions_suspicious").is_none(), "{server}");
        for tool in server["published"].as_array().unwrap() {
            assert_eq!(tool["flags"], j!([]), "{}: {tool}", server["alias"]);
        }
    }
    let everything = &report["servers"][0];
    // Its name has a slash, its tools kebab-case names: both handled.
    assert_eq!(everything["server"]["name"], "mcp-servers/everything");
    let exposed: Vec<&str> = everything["exposed"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert!(exposed.contains(&"mcp__everything__get_sum"), "{exposed:?}");
    assert!(exposed.contains(&"mcp__everything__trigger_long_running_operation"));
    let remote: Vec<&str> = everything["exposed"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["remote_name"].as_str())
        .collect();
    assert!(remote.contains(&"get-sum"), "{remote:?}");
    env.assert_no_leaks();
}

fn call(env: &TestEnv, alias: &str, tool: &str, args: Value, yes: bool) -> (Option<i32>, Value) {
    let args = args.to_string();
    let mut argv = vec!["call", alias, tool, "--args", &args, "--json"];
    if yes {
        argv.push("--yes");
    }
    let out = env.run(&argv);
    (out.status.code(), json(&out))
}

fn text_of(result: &Value) -> String {
    result["content"]
        .as_array()
        .map(|blocks| {
            blocks
                .iter()
                .filter_map(|b| b["text"].as_str())
                .collect::<Vec<_>>()
                .join("\n")
        })
        .unwrap_or_default()
}

#[cfg_attr(
    mcph_no_interop,
    ignore = "npm or python3 is missing: the interop tests install the pinned servers with them (docs/src/testing.md)"
)]
#[test]
fn calls_reach_every_server_through_the_full_pipeline() {
    let interop = Interop::get();
    let env = TestEnv::new();
    with_printed_policies(&env, &servers(&env, &interop));
    let (code, out) = call(
        &env,
        "everything",
        "echo",
        j!({"message": "hi there"}),
        true,
    );
    assert_eq!(code, Some(0), "{out}");
    assert!(text_of(&out).contains("hi there"), "{out}");
    let (code, out) = call(&env, "everything", "get-sum", j!({"a": 2, "b": 40}), true);
    assert_eq!(code, Some(0), "{out}");
    assert!(text_of(&out).contains("42"), "{out}");
    // Validated locally against the server's own schema: nothing is sent.
    let (_, out) = call(&env, "everything", "get-sum", j!({"a": "two"}), true);
    assert_eq!(out["error"]["code"], "mcp_invalid_arguments", "{out}");
    let files = env.path("files");
    let (code, out) = call(
        &env,
        "fs",
        "list_directory",
        j!({"path": files.to_string_lossy()}),
        true,
    );
    assert_eq!(code, Some(0), "{out}");
    assert!(text_of(&out).contains("hello.txt"), "{out}");
    let (code, out) = call(
        &env,
        "time",
        "get_current_time",
        j!({"timezone": "UTC"}),
        true,
    );
    assert_eq!(code, Some(0), "{out}");
    assert!(text_of(&out).contains("UTC"), "{out}");
    let entities =
        j!({"entities": [{"name": "harness", "entityType": "tool", "observations": ["works"]}]});
    let (code, out) = call(&env, "memory", "create_entities", entities, true);
    assert_eq!(code, Some(0), "{out}");
    let (code, out) = call(&env, "memory", "read_graph", j!({}), true);
    assert_eq!(code, Some(0), "{out}");
    assert!(text_of(&out).contains("harness"), "{out}");
    env.assert_no_leaks();
}

#[cfg_attr(
    mcph_no_interop,
    ignore = "npm or python3 is missing: the interop tests install the pinned servers with them (docs/src/testing.md)"
)]
#[test]
fn destructive_filesystem_tools_stay_confirm_whatever_their_annotations_say() {
    let interop = Interop::get();
    let env = TestEnv::new();
    with_printed_policies(&env, &servers(&env, &interop));
    let target = env.path("files").join("new.txt");
    let args = j!({"path": target.to_string_lossy(), "content": "x"});
    // The policy says confirm: without approval nothing reaches the server.
    let (code, out) = call(&env, "fs", "write_file", args.clone(), false);
    assert_eq!(code, Some(1));
    assert_eq!(out["error"]["code"], "mcp_permission_denied", "{out}");
    assert!(!target.exists());
    // A tool that claims readOnlyHint is not allowed for it either.
    let hello = env.path("files").join("hello.txt");
    let (_, out) = call(
        &env,
        "fs",
        "read_text_file",
        j!({"path": hello.to_string_lossy()}),
        false,
    );
    assert_eq!(out["error"]["code"], "mcp_permission_denied", "{out}");
    // With the operator's approval, the call goes through.
    let (code, out) = call(&env, "fs", "write_file", args, true);
    assert_eq!(code, Some(0), "{out}");
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "x");
    env.assert_no_leaks();
}

#[cfg_attr(
    mcph_no_interop,
    ignore = "npm or python3 is missing: the interop tests install the pinned servers with them (docs/src/testing.md)"
)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn everything_announcing_list_changed_right_after_initialize_is_handled() {
    let interop = Interop::get();
    let env = TestEnv::new();
    let text = with_printed_policies(&env, &servers(&env, &interop));
    let (hub, mut rx) = crate::common::hubs::hub(&env, &text);
    hub.connect("everything").await.unwrap().outcome.unwrap();
    let notified = tokio::time::timeout(Duration::from_secs(30), async {
        loop {
            if let Some(McpEvent::ToolListChanged { .. }) = rx.recv().await {
                return;
            }
        }
    })
    .await;
    assert!(
        notified.is_ok(),
        "server-everything sends tools/list_changed after initialize"
    );
    // The coalesced re-list finds the same tools: nothing revoked or replaced.
    tokio::time::sleep(Duration::from_millis(1000)).await;
    while let Ok(event) = rx.try_recv() {
        assert!(
            !matches!(
                event,
                McpEvent::Revoked { .. } | McpEvent::ToolsChanged { .. }
            ),
            "{event:?}"
        );
    }
    let (_, state) = hub.aliases().remove(0);
    assert!(matches!(state, AliasState::Ready { .. }), "{state:?}");
    let outcome = hub
        .call(
            &hub.snapshot(),
            "mcp__everything__echo",
            j!({"message": "still here"}),
            &FlagApprover { approve: true },
        )
        .await;
    assert!(outcome.result.is_ok(), "{:?}", outcome.result);
    hub.shutdown().await;
    env.assert_no_leaks();
}

/// server-everything's `simulate-research-query` says `taskSupport:
/// "required"` (issue 11: every call of it used to fail with -32601). It runs
/// as a 2025-11-25 experimental task — created, polled, its result fetched —
/// and `call --json` prints an ordinary result.
#[cfg_attr(
    mcph_no_interop,
    ignore = "npm or python3 is missing: the interop tests install the pinned servers with them (docs/src/testing.md)"
)]
#[test]
fn server_everythings_task_tool_runs_as_a_task() {
    let interop = Interop::get();
    let env = TestEnv::new();
    let entry = interop.npm_entry("server-everything");
    let base = server(
        &env,
        "everything",
        &interop.node(),
        &[entry.to_string_lossy().into_owned(), "stdio".into()],
        "",
    );
    env.config(&base);
    let out = env.run(&["policy", "everything"]);
    assert!(out.status.success(), "{}", stderr(&out));
    env.config(&format!("{base}{}", stdout(&out)));
    let (code, out) = call(
        &env,
        "everything",
        "simulate-research-query",
        j!({"topic": "tides"}),
        true,
    );
    assert_eq!(code, Some(0), "{out}");
    assert_eq!(out["ok"], true, "{out}");
    assert!(text_of(&out).contains("Research Report: tides"), "{out}");
    env.assert_no_leaks();
}
