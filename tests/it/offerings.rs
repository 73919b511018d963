//! Resources and prompts (issue 14, deliverables 2 and 3): headless
//! `resources` / `prompts` through the real binary, the read policy
//! (`[servers.ALIAS.resources] read`), the Lead's `list_mcp_resources` text,
//! large reads saved whole, and hostile servers whose names, URIs and texts
//! carry escapes and invisible characters. Against the demo servers and
//! server-everything.

use std::collections::BTreeMap;

/// A page of a saved result as the model gets it (`read_result`).
fn read_result(
    hub: &mcp_harness::mcp::Hub,
    arguments: &serde_json::Value,
) -> Result<String, mcp_harness::mcp::ToolError> {
    mcp_harness::agent::tools::lead_only::read_result(
        hub,
        arguments,
        &mcp_harness::mcp::CallIdentity::lead("read_1"),
    )
    .0
}

use mcp_harness::agent::tools::lead_only::resources_text;
use mcp_harness::mcp::{CallIdentity, FlagApprover, ToolErrorCode};
use serde_json::json;

use crate::common::hubs::{DEMO_POLICY, hub, hub_builder};
use crate::common::{TestEnv, json, stderr, stdout};

mod everything;
mod lead;

/// Demo server `s` (alpha) with its tool policy and `extra` config lines.
fn config(env: &TestEnv, args: &[&str], extra: &str) -> String {
    format!(
        "{}{extra}[servers.s.tools]\n{DEMO_POLICY}",
        env.demo("s", "alpha", args)
    )
}

/// No terminal control, no invisible code point: what rule 13/15 promise.
fn assert_inert(text: &str) {
    for c in text.chars() {
        assert!(
            c == '\n' || c == '\t' || !(c.is_control()),
            "a control character {:?} in {text:?}",
            c
        );
        assert!(
            !mcp_harness::sanitize::hidden::is_invisible(c),
            "an invisible character U+{:04X} in {text:?}",
            c as u32
        );
    }
}

#[test]
fn resources_lists_resources_and_templates_with_the_read_policy() {
    let env = TestEnv::new();
    env.config(&config(&env, &[], ""));
    let out = env.run(&["resources", "s"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(
        text.contains("4 resources of `s` (reading them: confirm)"),
        "{text}"
    );
    assert!(text.contains("demo://demo-alpha/readme"), "{text}");
    assert!(text.contains("300.0 kB"), "{text}");
    assert!(text.contains("demo://demo-alpha/entry/{key}"), "{text}");
    let out = env.run(&["resources", "s", "--json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let v = json(&out);
    assert_eq!(v["ok"], true);
    assert_eq!(v["read"], "confirm");
    assert_eq!(v["resources"][0]["uri"], "demo://demo-alpha/readme");
    assert_eq!(v["resources"][0]["mimeType"], "text/markdown");
    assert_eq!(v["resources"][2]["size"], 300 * 1024);
    assert_eq!(
        v["templates"][0]["uriTemplate"],
        "demo://demo-alpha/entry/{key}"
    );
    env.assert_no_leaks();
}

#[test]
fn a_confirm_read_needs_yes_allow_reads_and_deny_refuses_everything() {
    let env = TestEnv::new();
    env.config(&config(&env, &[], ""));
    let uri = "demo://demo-alpha/entry/apple";
    let out = env.run(&["resources", "s", "--read", uri]);
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    assert!(
        stderr(&out).contains("mcp_permission_denied"),
        "{}",
        stderr(&out)
    );
    assert!(stderr(&out).contains("pass --yes"), "{}", stderr(&out));
    let out = env.run(&["resources", "s", "--read", uri, "--yes"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).contains("apple: red"), "{}", stdout(&out));

    env.config(&config(
        &env,
        &[],
        "[servers.s.resources]\nread = \"allow\"\n",
    ));
    let out = env.run(&["resources", "s", "--read", uri, "--json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let v = json(&out);
    assert_eq!(v["content"][0]["resource"]["text"], "apple: red");

    env.config(&config(
        &env,
        &[],
        "[servers.s.resources]\nread = \"deny\"\n",
    ));
    for args in [
        vec!["resources", "s"],
        vec!["resources", "s", "--read", uri, "--yes"],
    ] {
        let out = env.run(&args);
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        assert!(
            stderr(&out).contains("denied by local policy"),
            "{}",
            stderr(&out)
        );
    }
    let out = env.run(&["check"]);
    assert!(
        out.status.success(),
        "the resources table is a valid key: {}",
        stderr(&out)
    );
    env.assert_no_leaks();
}

#[test]
fn a_bad_read_policy_names_its_key() {
    let env = TestEnv::new();
    env.config(&config(
        &env,
        &[],
        "[servers.s.resources]\nread = \"sometimes\"\n",
    ));
    let out = env.run(&["resources", "s"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("servers.s.resources.read"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn the_servers_error_text_never_reaches_an_error_field() {
    let env = TestEnv::new();
    env.config(&config(
        &env,
        &[],
        "[servers.s.resources]\nread = \"allow\"\n",
    ));
    let out = env.run(&[
        "resources",
        "s",
        "--read",
        "demo://demo-alpha/broken",
        "--json",
    ]);
    assert_eq!(out.status.code(), Some(1));
    let v = json(&out);
    assert_eq!(v["error"]["code"], "mcp_remote_error");
    let error = v["error"].to_string();
    for secret in ["sk-demo", "/srv/demo", "handlers.py"] {
        assert!(!error.contains(secret), "{secret} in {error}");
    }
    assert!(
        v["server_output"].as_str().unwrap().contains("sk-demo"),
        "{v}"
    );
    // Without --json the server's words are marked as such.
    let out = env.run(&["resources", "s", "--read", "demo://demo-alpha/broken"]);
    let err = stderr(&out);
    let first = err.lines().next().unwrap();
    assert!(!first.contains("sk-demo"), "{first}");
    env.assert_no_leaks();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_large_resource_is_capped_and_saved_whole_for_read_result() {
    let env = TestEnv::new();
    let (hub, _events) = hub_builder(
        &env,
        &config(&env, &[], "[servers.s.resources]\nread = \"allow\"\n"),
    );
    let hub = hub.results_dir(env.path("results")).build();
    hub.connect("s").await.unwrap().outcome.unwrap();
    let outcome = hub
        .read_resource(
            "s",
            "demo://demo-alpha/large",
            &FlagApprover { approve: false },
            &CallIdentity::lead("toolu_r1"),
        )
        .await;
    let output = outcome.result.unwrap();
    assert!(output.truncated);
    let whole = std::fs::read_to_string(env.path("results/toolu_r1.txt")).unwrap();
    assert_eq!(whole.len(), 300 * 1024);
    assert!(whole.ends_with("END\n"));
    let head = output.content[0]["resource"]["text"].as_str().unwrap();
    assert!(head.len() < whole.len() && whole.starts_with(head));
    let notice = output.content.last().unwrap().to_string();
    assert!(notice.contains("toolu_r1"), "{notice}");
    let page = read_result(
        &hub,
        &json!({"call_id": "toolu_r1", "offset": whole.len() - 10}),
    )
    .unwrap();
    assert!(page.ends_with("END\n"), "{page}");
    hub.shutdown().await;
    env.assert_no_leaks();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hostile_servers_resources_reach_the_model_and_the_terminal_inert() {
    let env = TestEnv::new();
    let args = ["--fault", "escapes", "--fault", "hidden-text"];
    let text = config(&env, &args, "[servers.s.resources]\nread = \"allow\"\n");
    let (hub, _events) = hub(&env, &text);
    hub.connect("s").await.unwrap().outcome.unwrap();
    let list = hub.list_resources("s").await.result.unwrap();
    // The server's own strings are kept as sent (for --json)…
    assert!(list.resources[0].uri.contains('\x1b'));
    // …and the resource is flagged for them (issue 21, item 4).
    assert_eq!(
        list.resources[0].flags,
        [mcp_harness::mcp::published::ToolFlag::HiddenText]
    );
    // …and what the model gets is inert, every line of it.
    let for_model = resources_text("s", &list);
    assert_inert(&for_model);
    assert!(
        for_model.contains("demo://demo-alpha/readme"),
        "{for_model}"
    );
    // A read of the hostile URI: the text for the model has no hidden part.
    let uri = list.resources[0].uri.clone();
    let run = mcp_harness::agent::toolbox::from_mcp(
        hub.read_resource(
            "s",
            &uri,
            &FlagApprover { approve: false },
            &CallIdentity::lead("c1"),
        )
        .await,
    );
    let parts = run.outcome.unwrap();
    let text = format!("{parts:?}");
    assert!(
        !text.contains('\u{200B}') && !text.contains('\u{E0049}'),
        "{text}"
    );
    // Nor a control or an escape sequence (issue 21, item 4): ESC, BEL and the
    // C1 CSI went in as data before.
    let raw: String = parts
        .iter()
        .filter_map(|p| match p {
            mcp_harness::agent::conversation::ResultPart::Text { text } => Some(text.as_str()),
            _ => None,
        })
        .collect();
    assert!(
        !raw.contains('\x1b') && !raw.contains('\x07') && !raw.contains('\u{9b}'),
        "{raw:?}"
    );
    assert!(!raw.contains("]0;pwned") && !raw.contains("[2J"), "{raw:?}");
    // The hostile prompt, by its hostile name and argument, as listed.
    let prompts = hub.list_prompts("s").await.result.unwrap();
    assert!(prompts[0].name.contains('\x1b'), "{:?}", prompts[0].name);
    let arguments = [(prompts[0].arguments[0].name.clone(), "apples".to_string())]
        .into_iter()
        .collect();
    let got = hub
        .get_prompt("s", &prompts[0].name, &arguments)
        .await
        .result
        .unwrap();
    let said = got.messages[0].content["text"].as_str().unwrap();
    assert!(said.contains("apples"), "{said}");
    hub.shutdown().await;
    // Headless: nothing the terminal would act on.
    env.config(&text_config(&env, &args));
    for argv in [vec!["resources", "s"], vec!["prompts", "s"]] {
        let out = env.run(&argv);
        assert!(out.status.success(), "{argv:?}: {}", stderr(&out));
        assert_inert(&stdout(&out));
    }
    let out = env.run(&["prompts", "s", "--get", "quiz"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_inert(&stdout(&out));
    env.assert_no_leaks();
}

fn text_config(env: &TestEnv, args: &[&str]) -> String {
    config(env, args, "")
}

#[test]
fn prompts_lists_and_gets_with_local_argument_checks() {
    let env = TestEnv::new();
    env.config(&config(&env, &[], ""));
    let out = env.run(&["prompts", "s"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.contains("2 prompts of `s`"), "{text}");
    assert!(text.contains("summarize topic [style]"), "{text}");
    let out = env.run(&[
        "prompts",
        "s",
        "--get",
        "summarize",
        "topic=plums",
        "style=detailed",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(
        text.contains("[user]\nGive a detailed summary of plums"),
        "{text}"
    );
    assert!(
        text.contains("[assistant]\nI will look it up first."),
        "{text}"
    );
    let out = env.run(&[
        "prompts",
        "s",
        "--get",
        "summarize",
        "--json",
        "topic=plums",
    ]);
    let v = json(&out);
    assert_eq!(v["messages"][0]["role"], "user");
    // Checked before anything is sent.
    let out = env.run(&["prompts", "s", "--get", "summarize"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("needs an argument: topic"),
        "{}",
        stderr(&out)
    );
    let out = env.run(&[
        "prompts",
        "s",
        "--get",
        "summarize",
        "topic=x",
        "colour=red",
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("no argument colour"),
        "{}",
        stderr(&out)
    );
    let out = env.run(&["prompts", "s", "--get", "nope"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("lists no such prompt"),
        "{}",
        stderr(&out)
    );
    let out = env.run(&["prompts", "s", "--get", "summarize", "not-a-pair"]);
    assert_eq!(out.status.code(), Some(2));
    env.assert_no_leaks();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unconnected_or_unknown_alias_is_a_clear_error() {
    let env = TestEnv::new();
    let (hub, _events) = hub(&env, &config(&env, &[], ""));
    let e = hub.list_resources("s").await.result.unwrap_err();
    assert_eq!(e.code, ToolErrorCode::McpNotConnected);
    assert!(e.message.contains("not connected"), "{e:?}");
    let e = hub.list_prompts("ghost").await.result.unwrap_err();
    assert!(e.message.contains("known aliases: s"), "{e:?}");
    let e = hub
        .get_prompt("s", "summarize", &BTreeMap::new())
        .await
        .result
        .unwrap_err();
    assert_eq!(e.code, ToolErrorCode::McpNotConnected);
    hub.shutdown().await;
}
