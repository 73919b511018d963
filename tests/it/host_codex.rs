//! Codex, the real host (pinned in `interop/`), attached to the gateway as the
//! Streamable HTTP server `h` (`[mcp_servers.h] url`, `bearer_token_env_var`).
//! Its model provider is a loopback stand-in for the OpenAI Responses API
//! (`common/model_stub.rs`, streaming the API's events) that answers Codex's
//! first request with function calls and its second with text, and records
//! both. Nothing leaves loopback: Codex runs with a private HOME and
//! CODEX_HOME, and every request it would make elsewhere goes to a proxy on a
//! closed loopback port (it looks up github.com and chatgpt.com on start).

use std::path::PathBuf;
use std::process::Output;

use serde_json::{Value, json};

use crate::common::TestEnv;
use crate::common::interop::Interop;
use crate::common::model_stub::{Recorded, Reply, sse_event};
use crate::host_claude_code::control_room::{approve_green, close_room, open_room};
use crate::host_claude_code::{Model, host_command, output_within, two_requests};
use crate::serve::{Gateway, TOKEN_A, client_calls};

fn event(data: Value) -> String {
    let name = data["type"].as_str().expect("an event type").to_string();
    sse_event(Some(&name), &data.to_string())
}

fn completed(id: &str) -> String {
    event(
        json!({"type": "response.completed", "response": {"id": id, "usage": {
        "input_tokens": 10, "input_tokens_details": null, "output_tokens": 5,
        "output_tokens_details": null, "total_tokens": 15}}}),
    )
}

/// The model's first answer: calls of these tools of the namespace `mcp__h`
/// (the gateway's `ALIAS__TOOL` names), each under the call id `call_N`.
fn function_calls(calls: &[(&str, Value)]) -> Reply {
    let mut events = vec![event(
        json!({"type": "response.created", "response": {"id": "resp_1"}}),
    )];
    for (i, (name, arguments)) in calls.iter().enumerate() {
        events.push(event(
            json!({"type": "response.output_item.done", "output_index": i,
            "item": {"type": "function_call", "id": format!("fc_{i}"),
                "call_id": format!("call_{i}"), "namespace": "mcp__h", "name": name,
                "arguments": arguments.to_string(), "status": "completed"}}),
        ));
    }
    events.push(completed("resp_1"));
    Reply::sse(events)
}

/// The model's last answer: `text`.
fn message(text: &str) -> Reply {
    Reply::sse([
        event(json!({"type": "response.created", "response": {"id": "resp_2"}})),
        event(
            json!({"type": "response.output_item.done", "output_index": 0,
            "item": {"type": "message", "role": "assistant", "id": "msg_1",
                "status": "completed",
                "content": [{"type": "output_text", "text": text, "annotations": []}]}}),
        ),
        completed("resp_2"),
    ])
}

/// demo_alpha (`set` confirm, `reset` deny); Codex is the client `codex`.
fn gateway_config(env: &TestEnv) {
    env.config(&format!(
        "{}[servers.demo_alpha.tools]\nlookup = \"allow\"\nset = \"confirm\"\nreset = \"deny\"\n\
         fail = \"allow\"\nslow = \"allow\"\n\
         [serve.clients.codex]\ntoken_env = \"MCPH_TEST_TOKEN_A\"\n",
        env.demo("demo_alpha", "alpha", &[]),
    ));
}

/// `$CODEX_HOME/config.toml`: the stand-in model, and the gateway as `h`, its
/// token from the environment (`CODEX_TOKEN`), as the docs say.
fn codex_home(env: &TestEnv, model: &Model, url: &str) -> PathBuf {
    let home = env.path("codex-home");
    std::fs::create_dir_all(&home).unwrap();
    let config = format!(
        "model = \"test-model\"\nmodel_provider = \"stub\"\napproval_policy = \"never\"\n\
         sandbox_mode = \"read-only\"\ncheck_for_update_on_startup = false\n\n\
         [analytics]\nenabled = false\n\n\
         [model_providers.stub]\nname = \"stub\"\nbase_url = \"{}/v1\"\n\
         wire_api = \"responses\"\nenv_key = \"STUB_KEY\"\n\n\
         [mcp_servers.h]\nurl = \"{url}\"\nbearer_token_env_var = \"CODEX_TOKEN\"\n\
         default_tools_approval_mode = \"approve\"\ntool_timeout_sec = 900\n",
        model.stub.url()
    );
    std::fs::write(home.join("config.toml"), config).unwrap();
    home
}

/// A loopback URL nothing listens on (bound, then released): Codex's proxy.
fn closed_port_url() -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    format!("http://{}", listener.local_addr().unwrap())
}

/// Runs `codex exec` against the model stub and the gateway at `url`, in an
/// environment of its own (nothing of the test's is inherited), and waits for
/// it to exit.
fn codex_exec(interop: &Interop, env: &TestEnv, model: &Model, url: &str) -> Output {
    let binary = interop.codex();
    assert!(
        binary.is_file(),
        "Codex's native binary is not at {} (interop/install.sh installs it)",
        binary.display()
    );
    let proxy = closed_port_url();
    let home = env.path("codex-user");
    let mut command = host_command(&binary, env, &home, &env.path("codex-work"));
    command
        .args(["exec", "--skip-git-repo-check"])
        .arg("Look up apple in demo_alpha, then set it to green.")
        .env("CODEX_HOME", codex_home(env, model, url))
        .env("STUB_KEY", "sk-test-key")
        .env("CODEX_TOKEN", TOKEN_A)
        .env("HTTPS_PROXY", &proxy)
        .env("HTTP_PROXY", &proxy)
        .env("NO_PROXY", "127.0.0.1,localhost");
    output_within(command, "codex exec", model)
}

/// The names of the tools of the namespace `mcp__h` a request offered.
fn offered(request: &Recorded) -> Vec<String> {
    let tools = request.body["tools"].as_array().expect("tools");
    let namespace = tools
        .iter()
        .find(|t| t["type"] == "namespace" && t["name"] == "mcp__h")
        .unwrap_or_else(|| panic!("no namespace mcp__h in {tools:?}"));
    namespace["tools"]
        .as_array()
        .expect("the namespace's tools")
        .iter()
        .filter_map(|t| t["name"].as_str().map(String::from))
        .collect()
}

/// The text of the output for `call_id` in a request (a string, or text parts).
fn call_output(request: &Recorded, call_id: &str) -> String {
    let input = request.body["input"].as_array().expect("input");
    let output = input
        .iter()
        .find(|i| i["type"] == "function_call_output" && i["call_id"] == call_id)
        .unwrap_or_else(|| panic!("no output for {call_id} in {input:?}"));
    match &output["output"] {
        Value::String(text) => text.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter_map(|p| p["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n"),
        other => panic!("function_call_output {other}"),
    }
}

/// Headless `serve --http --approve never`: Codex is offered what passed the
/// pipeline, gets an `allow` tool's answer back into its next model request
/// and the gateway's envelope for a `confirm` tool nobody can approve; a
/// `deny` tool, never offered, does not reach the gateway.
#[cfg_attr(
    mcph_no_interop,
    ignore = "npm or python3 is missing: the interop tests install the pinned servers with them (docs/src/testing.md)"
)]
#[test]
fn codex_calls_through_serve_http() {
    let interop = Interop::get();
    let env = TestEnv::new();
    gateway_config(&env);
    let gateway = Gateway::start_with(&env, &["--approve", "never"]);
    let model = Model::start(vec![
        function_calls(&[
            ("demo_alpha__lookup", json!({"key": "apple"})),
            ("demo_alpha__set", json!({"key": "apple", "value": "green"})),
            ("demo_alpha__reset", json!({})),
        ]),
        message("done"),
    ]);
    let output = codex_exec(&interop, &env, &model, &gateway.url);
    let (asked, answered) = two_requests(&model, &output, "codex exec", |p| p == "/v1/responses");

    let mut tools = offered(&asked);
    tools.sort();
    assert_eq!(
        tools,
        [
            "demo_alpha__fail",
            "demo_alpha__lookup",
            "demo_alpha__set",
            "demo_alpha__slow"
        ]
    );

    // `allow`: the upstream's answer, through the gateway.
    let looked_up = call_output(&answered, "call_0");
    assert!(
        looked_up.ends_with("apple = red (demo-alpha)"),
        "{looked_up}"
    );

    // `confirm` under --approve never: the gateway's envelope, as text after
    // Codex's own preamble (`Wall time: … Output:`).
    let refused = call_output(&answered, "call_1");
    let envelope: Value = refused
        .find('{')
        .and_then(|at| serde_json::from_str(&refused[at..]).ok())
        .unwrap_or_else(|| panic!("no envelope in {refused}"));
    assert_eq!(envelope["code"], "mcp_permission_denied", "{envelope}");
    assert_eq!(envelope["tool"], "demo_alpha__set", "{envelope}");
    assert!(
        envelope["message"]
            .as_str()
            .unwrap()
            .contains("--approve always"),
        "{envelope}"
    );

    // `deny`: not offered; Codex refuses the call itself and nothing is sent.
    let unknown = call_output(&answered, "call_2");
    assert!(unknown.starts_with("unsupported call"), "{unknown}");

    gateway.stop();
    let records = client_calls(&env);
    let decisions: Vec<String> = records
        .iter()
        .map(|r| format!("{} {} {}", r["client"], r["tool"], r["decision"]))
        .collect();
    assert_eq!(
        decisions.len(),
        2,
        "the deny tool never reached the gateway: {records:#?}"
    );
    assert!(
        decisions.contains(&r#""codex" "demo_alpha__lookup" "allow""#.to_string()),
        "{decisions:?}"
    );
    assert!(
        decisions.contains(&r#""codex" "demo_alpha__set" "denied""#.to_string()),
        "{decisions:?}"
    );
    env.assert_no_leaks();
}

/// The control room (`mcp-harness --serve` in tmux): Codex's `confirm` call
/// waits for the operator's `y`, and the upstream's answer reaches its model.
#[cfg_attr(
    mcph_no_tmux,
    ignore = "tmux is not installed: install it (apt-get install tmux) to run the TUI tests"
)]
#[cfg_attr(
    mcph_no_interop,
    ignore = "npm or python3 is missing: the interop tests install the pinned servers with them (docs/src/testing.md)"
)]
#[test]
fn codexs_confirm_call_is_approved_in_the_control_room() {
    let interop = Interop::get();
    let env = TestEnv::new();
    let (tmux, url) = open_room(&env, "codex");
    let model = Model::start(vec![
        function_calls(&[
            ("demo_alpha__lookup", json!({"key": "apple"})),
            ("demo_alpha__set", json!({"key": "apple", "value": "green"})),
        ]),
        message("done"),
    ]);
    let output = std::thread::scope(|scope| {
        let codex = scope.spawn(|| codex_exec(&interop, &env, &model, &url));
        approve_green(&tmux, "codex");
        codex.join().unwrap()
    });
    let (_, answered) = two_requests(&model, &output, "codex exec", |p| p == "/v1/responses");
    let looked_up = call_output(&answered, "call_0");
    assert!(
        looked_up.ends_with("apple = red (demo-alpha)"),
        "{looked_up}"
    );
    let stored = call_output(&answered, "call_1");
    assert!(stored.ends_with("stored apple = green"), "{stored}");
    close_room(&tmux, &env, "codex");
}
