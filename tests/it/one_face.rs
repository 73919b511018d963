//! One face for every mode (SPEC rule 16): the harness advertises the same
//! client capabilities in the TUI and in every headless command, so a server
//! that publishes tools by capability (server-everything publishes
//! `trigger-elicitation-request` only to clients that advertise elicitation)
//! shows `policy`, `check`, `call`, `run` and the TUI's backend one tool set,
//! and the block `policy` prints is the policy the TUI needs.

use crate::provider_openai::wire;

use std::collections::BTreeSet;
use std::time::Duration;

use crate::common::headless::{of, run};
use crate::common::interop::Interop;
use crate::common::model_stub::{ModelStub, Reply};
use crate::common::{TestEnv, json, stderr, stdout};
use mcp_harness::backend;
use mcp_harness::config::{self, ConfigSource};
use mcp_harness::protocol::{AliasStatus, Command};
use mcp_harness::session::SessionOptions;
use serde_json::{Value, json as j};

fn everything(env: &TestEnv, i: &Interop) -> String {
    format!(
        "[servers.everything]\ncommand = {:?}\nargs = [{:?}, \"stdio\"]\nenv = {{ MCPH_TEST_TAG = \"{}\" }}\nconnect_timeout_ms = 60000\n",
        i.node().to_string_lossy(),
        i.npm_entry("server-everything").to_string_lossy(),
        env.tag
    )
}

fn names(values: &Value, field: &str) -> BTreeSet<String> {
    values
        .as_array()
        .unwrap_or_else(|| panic!("not an array: {values}"))
        .iter()
        .map(|v| v[field].as_str().unwrap().to_string())
        .collect()
}

#[cfg_attr(
    mcph_no_interop,
    ignore = "npm or python3 is missing: the interop tests install the pinned servers with them (docs/src/testing.md)"
)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn policy_check_call_run_and_the_tui_see_one_tool_set() {
    let interop = Interop::get();
    let env = TestEnv::new();
    let server = everything(&env, &interop);
    env.config(&server);

    // `policy`: the block for what the server publishes to a headless command.
    let out = tokio::task::block_in_place(|| env.run(&["policy", "everything"]));
    assert!(out.status.success(), "policy: {}", stderr(&out));
    let block = stdout(&out);
    assert!(
        block
            .lines()
            .any(|l| l.starts_with("trigger-elicitation-request =")),
        "a headless command advertises elicitation like the TUI: {block}"
    );
    let config_text = format!("{server}{block}[model]\nprovider = \"scripted\"\n");
    env.config(&config_text);

    // `check`: that block is exactly the policy.
    let out = tokio::task::block_in_place(|| env.run(&["check", "--json"]));
    let report = json(&out);
    let s = &report["servers"][0];
    assert_eq!(s["status"], "ready", "{s}");
    let published = names(&s["published"], "name");
    let exposed = names(&s["exposed"], "name");
    assert!(published.contains("trigger-elicitation-request"), "{s}");

    // `call`: the tool is there; nobody can answer, so the server is told `decline`.
    let out = tokio::task::block_in_place(|| {
        env.run(&[
            "call",
            "everything",
            "trigger-elicitation-request",
            "--yes",
            "--json",
        ])
    });
    let line = json(&out);
    assert_eq!(line["ok"], true, "{line}");
    assert!(line.to_string().contains("decline"), "{line}");

    // `run`: the Lead connects it and gets the same tools.
    let model = ModelStub::start(vec![
        Reply::sse({
            let mut chunks = vec![wire::chunk(
                j!({"role": "assistant", "content": null}),
                None,
            )];
            chunks.push(wire::tool_fragment(
                0,
                Some("c0"),
                Some("connect_mcp"),
                &j!({"alias": "everything"}).to_string(),
            ));
            chunks.extend(wire::end("tool_calls"));
            chunks
        }),
        Reply::sse(wire::text_reply(&["connected"])),
    ])
    .await;
    env.config(&format!(
        "{server}{block}[model]\nprovider = \"openai\"\nbase_url = \"{}/v1\"\nmodel = \"gpt-test\"\n",
        model.url()
    ));
    let (out, events) =
        tokio::task::block_in_place(|| run(&env, &["--prompt", "connect", "--json"]));
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let registered = of(&events, "registry")
        .into_iter()
        .find(|e| e["change"] == "registered")
        .unwrap_or_else(|| panic!("no registration in {events:#?}"));
    let run_tools: BTreeSet<String> = registered["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_str().unwrap().to_string())
        .collect();
    assert_eq!(run_tools, exposed, "run vs check");

    // The TUI's backend (its own elicitor installed): ready with the same tools.
    let config = config::parse(&config_text, ConfigSource::Embedded).expect("config");
    let options = SessionOptions {
        workspace: Some(env.dir.path().to_path_buf()),
        ..SessionOptions::default()
    };
    let mut handle = backend::spawn(config, options).expect("backend");
    handle
        .commands
        .send(Command::Connect("everything".into()))
        .expect("connect");
    // Views replace each other over the backend's watch channel.
    let view = tokio::time::timeout(Duration::from_secs(90), async {
        loop {
            let settled = handle
                .views
                .borrow_and_update()
                .servers
                .iter()
                .find(|v| v.alias == "everything")
                .filter(|v| !matches!(v.state, AliasStatus::Connecting | AliasStatus::Disconnected))
                .cloned();
            if let Some(view) = settled {
                return view;
            }
            handle.views.changed().await.expect("views");
        }
    })
    .await
    .expect("the TUI's connect ended");
    assert_eq!(
        view.state,
        AliasStatus::Ready,
        "{:?} {:?}",
        view.code,
        view.detail
    );
    let tui_published: BTreeSet<String> = view.published.iter().map(|t| t.name.clone()).collect();
    let tui_exposed: BTreeSet<String> = view
        .published
        .iter()
        .filter_map(|t| t.exposed_as.clone())
        .collect();
    assert_eq!(tui_published, published, "the TUI vs check");
    assert_eq!(tui_exposed, exposed, "the TUI vs check");
    handle.commands.send(Command::Quit).expect("quit");
    let _ = tokio::time::timeout(Duration::from_secs(30), handle.task).await;
    env.assert_no_leaks();
}
