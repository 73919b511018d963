//! Claude Code, the real host (pinned in `interop/`), attached to the gateway
//! as the Streamable HTTP server `h`. Its model is a loopback stand-in for the
//! Anthropic Messages API (`common/model_stub.rs`, streaming the API's events)
//! that answers Claude Code's first request with tool calls and its second with
//! text, and records both: the tools Claude Code offered the model, and the
//! results it sent back. Nothing leaves loopback: Claude Code runs with
//! `CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1`, the autoupdater off and a
//! private HOME.

pub(crate) mod control_room;

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::mpsc::channel;
use std::time::Duration;

use serde_json::{Value, json};

use crate::common::TestEnv;
use crate::common::interop::Interop;
use crate::common::model_stub::{ModelStub, Recorded, Reply};
use crate::provider_anthropic::wire::{end, json_delta, start, stop, text_reply, tool_start};
use crate::serve::{Gateway, TOKEN_A, client_calls, config};

/// Generous: two cores shared by the whole suite.
const WAIT: Duration = Duration::from_secs(120);

/// The model stub, on a runtime of its own: the tests around it block.
pub(crate) struct Model {
    pub(crate) stub: ModelStub,
    // Dropped after the stub, whose task it runs.
    _runtime: tokio::runtime::Runtime,
}

impl Model {
    pub(crate) fn start(script: Vec<Reply>) -> Self {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .unwrap();
        let stub = runtime.block_on(ModelStub::start(script));
        Self {
            stub,
            _runtime: runtime,
        }
    }
}

/// The model's first answer: these tool calls (Claude Code's names for them,
/// `mcp__h__` + the gateway's `ALIAS__TOOL`), each under the id `toolu_N`.
pub(crate) fn tool_calls(calls: &[(&str, Value)]) -> Reply {
    let mut events = vec![start()];
    for (i, (name, input)) in calls.iter().enumerate() {
        let index = i as u64;
        events.push(tool_start(index, &format!("toolu_{i}"), name));
        events.push(json_delta(index, &input.to_string()));
        events.push(stop(index));
    }
    events.extend(end("tool_use"));
    Reply::sse(events)
}

/// The gateway over Streamable HTTP at `url`, as Claude Code's server `h`:
/// the token from the environment (`${CLAUDE_TOKEN}`, expanded by Claude
/// Code), as the docs say.
pub(crate) fn over_http(url: &str) -> Value {
    json!({
        "type": "http",
        "url": url,
        "headers": {"Authorization": "Bearer ${CLAUDE_TOKEN}"},
    })
}

/// The MCP config Claude Code is given: `server` as `h`.
fn mcp_config(env: &TestEnv, server: Value) -> PathBuf {
    let path = env.path("claude-mcp.json");
    let config = json!({"mcpServers": {"h": server}});
    std::fs::write(&path, config.to_string()).unwrap();
    path
}

/// Runs `claude -p` headless against the model stub and the gateway `server`,
/// in an environment of its own (nothing of the test's is inherited), and
/// waits for it to exit.
pub(crate) fn claude_print(
    interop: &Interop,
    env: &TestEnv,
    model: &Model,
    server: Value,
) -> Output {
    let binary = interop.claude_code();
    assert!(
        binary.is_file(),
        "Claude Code's native binary is not at {} (interop/install.sh installs it)",
        binary.display()
    );
    let home = env.path("claude-home");
    let mut command = host_command(&binary, env, &home, &env.path("claude-work"));
    command
        .args([
            "-p",
            "Set apple to blue in demo_alpha, and reset demo_beta.",
        ])
        .arg("--mcp-config")
        .arg(mcp_config(env, server))
        .args(["--strict-mcp-config", "--allowedTools", "mcp__h"])
        .arg("--no-session-persistence")
        .env("ANTHROPIC_BASE_URL", model.stub.url())
        .env("ANTHROPIC_API_KEY", "sk-ant-test-key")
        .env("CLAUDE_TOKEN", TOKEN_A)
        .env("DISABLE_AUTOUPDATER", "1")
        .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
        // Otherwise Claude Code defers MCP tools behind its ToolSearch tool
        // and offers the model only their names.
        .env("ENABLE_TOOL_SEARCH", "false");
    output_within(command, "claude -p", model)
}

/// A host's headless command in an environment of its own: nothing of the
/// test's is inherited but PATH, with `home` as HOME and `work` as its
/// directory (both made), stdin closed, its output captured.
pub(crate) fn host_command(binary: &Path, env: &TestEnv, home: &Path, work: &Path) -> Command {
    std::fs::create_dir_all(home).unwrap();
    std::fs::create_dir_all(work).unwrap();
    let mut command = Command::new(binary);
    command
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", home)
        // Found by the leak check, as every process a test starts.
        .env("MCPH_TEST_TAG", &env.tag)
        .current_dir(work)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    command
}

/// Runs a host's `command` to its end, or kills it after `WAIT` and fails,
/// saying what the model stub was asked meanwhile.
pub(crate) fn output_within(mut command: Command, what: &str, model: &Model) -> Output {
    let child = command
        .spawn()
        .unwrap_or_else(|e| panic!("spawn {what}: {e}"));
    let pid = child.id();
    let (tx, rx) = channel();
    std::thread::spawn(move || drop(tx.send(child.wait_with_output())));
    match rx.recv_timeout(WAIT) {
        Ok(output) => output.unwrap_or_else(|e| panic!("{what}'s output: {e}")),
        Err(_) => {
            let _ = Command::new("kill").args(["-9", &pid.to_string()]).status();
            panic!(
                "{what} did not exit within {WAIT:?}; the model was asked: {:#?}",
                model.stub.requests()
            );
        }
    }
}

/// The names of the tools a request offered the model.
fn offered(request: &Recorded) -> Vec<String> {
    request.body["tools"]
        .as_array()
        .unwrap_or_else(|| panic!("no tools in {}", request.body))
        .iter()
        .filter_map(|t| t["name"].as_str().map(String::from))
        .collect()
}

/// The tool result for `id` in a request: whether it is an error, and its
/// text (Claude Code sends it as a string or as text blocks).
pub(crate) fn tool_result(request: &Recorded, id: &str) -> (bool, String) {
    let messages = request.body["messages"].as_array().expect("messages");
    let result = messages
        .iter()
        .filter_map(|m| m["content"].as_array())
        .flatten()
        .find(|b| b["type"] == "tool_result" && b["tool_use_id"] == id)
        .unwrap_or_else(|| panic!("no tool_result for {id} in {}", request.body));
    let text = match &result["content"] {
        Value::String(text) => text.clone(),
        Value::Array(blocks) => blocks
            .iter()
            .filter_map(|b| b["text"].as_str())
            .collect::<Vec<_>>()
            .join(""),
        other => panic!("tool_result content {other}"),
    };
    (result["is_error"] == true, text)
}

/// The two requests of one host's run (`what`) that ended with "done": the
/// question, then the results; each a POST to the model API's endpoint.
pub(crate) fn two_requests(
    model: &Model,
    output: &Output,
    what: &str,
    is_endpoint: impl Fn(&str) -> bool,
) -> (Recorded, Recorded) {
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "{what} failed ({}):\nstdout: {stdout}\nstderr: {stderr}",
        output.status
    );
    assert_eq!(stdout.trim(), "done", "stderr: {stderr}");
    let requests = model.stub.requests();
    assert_eq!(requests.len(), 2, "{requests:#?}");
    for request in &requests {
        assert!(
            request.method == "POST" && is_endpoint(&request.path),
            "{} {}",
            request.method,
            request.path
        );
    }
    (requests[0].clone(), requests[1].clone())
}

/// Claude Code's requests go to the Messages API.
pub(crate) fn messages_api(path: &str) -> bool {
    path.starts_with("/v1/messages")
}

/// Headless `serve --http --approve never`: Claude Code is offered what passed
/// the pipeline, gets an `allow` tool's answer back into its next model
/// request, gets the gateway's envelope for a `confirm` tool nobody can
/// approve, and a `deny` tool, never offered, does not reach the gateway at all.
#[cfg_attr(
    mcph_no_interop,
    ignore = "npm or python3 is missing: the interop tests install the pinned servers with them (docs/src/testing.md)"
)]
#[test]
fn claude_code_calls_through_serve_http() {
    let interop = Interop::get();
    let env = TestEnv::new();
    config(&env);
    let gateway = Gateway::start_with(&env, &["--approve", "never"]);
    let model = Model::start(vec![
        tool_calls(&[
            ("mcp__h__demo_alpha__lookup", json!({"key": "apple"})),
            ("mcp__h__demo_beta__reset", json!({})),
            (
                "mcp__h__demo_alpha__set",
                json!({"key": "apple", "value": "blue"}),
            ),
        ]),
        Reply::sse(text_reply(&["done"])),
    ]);
    let output = claude_print(&interop, &env, &model, over_http(&gateway.url));
    let (asked, answered) = two_requests(&model, &output, "claude -p", messages_api);

    // What Claude Code offered its model: the gateway's tools under its own
    // prefix; demo_beta's `reset` (deny) is not among them.
    let tools = offered(&asked);
    for name in [
        "mcp__h__demo_alpha__lookup",
        "mcp__h__demo_alpha__set",
        "mcp__h__demo_beta__lookup",
    ] {
        assert!(tools.contains(&name.to_string()), "{name}: {tools:?}");
    }
    assert!(
        !tools.contains(&"mcp__h__demo_beta__reset".to_string()),
        "{tools:?}"
    );

    // `allow`: the upstream's answer, through the gateway, in the next request.
    let (is_error, text) = tool_result(&answered, "toolu_0");
    assert!(!is_error, "{text}");
    assert_eq!(text, "apple = red (demo-alpha)");

    // `deny`: not offered, so Claude Code refuses the call itself and nothing
    // is sent (the audit log below has no record of it).
    let (is_error, text) = tool_result(&answered, "toolu_1");
    assert!(is_error, "{text}");
    assert!(text.contains("No such tool available"), "{text}");

    // `confirm` under --approve never: the gateway's envelope, as the text
    // Claude Code hands its model.
    let (is_error, text) = tool_result(&answered, "toolu_2");
    assert!(is_error, "{text}");
    let envelope: Value = serde_json::from_str(&text).expect("the envelope's JSON");
    assert_eq!(envelope["code"], "mcp_permission_denied", "{envelope}");
    assert_eq!(envelope["tool"], "demo_alpha__set", "{envelope}");
    assert!(
        envelope["message"]
            .as_str()
            .unwrap()
            .contains("--approve always"),
        "{envelope}"
    );

    gateway.stop();
    let records = client_calls(&env);
    let of = |tool: &str| {
        records
            .iter()
            .filter(|r| r["tool"] == tool)
            .cloned()
            .collect::<Vec<_>>()
    };
    let lookup = of("demo_alpha__lookup");
    assert_eq!(lookup.len(), 1, "{records:#?}");
    assert_eq!(lookup[0]["client"], "claude");
    assert_eq!(lookup[0]["decision"], "allow");
    let set = of("demo_alpha__set");
    assert_eq!(set.len(), 1, "{records:#?}");
    assert_eq!(set[0]["decision"], "denied");
    assert!(of("demo_beta__reset").is_empty(), "{records:#?}");
    env.assert_no_leaks();
}

/// Headless `--approve always`: Claude Code's `confirm` call runs, and the
/// upstream's answer reaches its model.
#[cfg_attr(
    mcph_no_interop,
    ignore = "npm or python3 is missing: the interop tests install the pinned servers with them (docs/src/testing.md)"
)]
#[test]
fn claude_codes_confirm_call_runs_under_approve_always() {
    let interop = Interop::get();
    let env = TestEnv::new();
    config(&env);
    let gateway = Gateway::start_with(&env, &["--approve", "always"]);
    let model = Model::start(vec![
        tool_calls(&[(
            "mcp__h__demo_alpha__set",
            json!({"key": "apple", "value": "blue"}),
        )]),
        Reply::sse(text_reply(&["done"])),
    ]);
    let output = claude_print(&interop, &env, &model, over_http(&gateway.url));
    let (_, answered) = two_requests(&model, &output, "claude -p", messages_api);
    let (is_error, text) = tool_result(&answered, "toolu_0");
    assert!(!is_error, "{text}");
    assert_eq!(text, "stored apple = blue");
    gateway.stop();
    let records = client_calls(&env);
    assert_eq!(records.len(), 1, "{records:#?}");
    assert_eq!(records[0]["tool"], "demo_alpha__set");
    assert_eq!(records[0]["client"], "claude");
    env.assert_no_leaks();
}
