//! Nothing a server says that is private reaches the model, whatever the server
//! does (SPEC rule 9): isError texts with secrets, JSON-RPC errors, crashes, torn
//! lines, timeouts and escape sequences, checked in the request bodies a model API
//! on loopback received during a headless run.

use crate::provider_openai::wire;

use crate::common::TestEnv;
use crate::common::headless::{of, run};
use crate::common::model_stub::{ModelStub, Reply};
use serde_json::{Value, json};

/// A model reply with these tool calls (ids `{prefix}_{i}`), in one streamed message.
fn tool_calls(prefix: &str, list: &[(&str, Value)]) -> Reply {
    let mut chunks = vec![wire::chunk(
        json!({"role": "assistant", "content": null}),
        None,
    )];
    for (i, (name, args)) in list.iter().enumerate() {
        let id = format!("{prefix}_{i}");
        chunks.push(wire::tool_fragment(
            i as u64,
            Some(&id),
            Some(name),
            &args.to_string(),
        ));
    }
    chunks.extend(wire::end("tool_calls"));
    Reply::sse(chunks)
}

/// Every string inside `value`, decoded (so an escape is the real character).
fn strings(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::String(s) => out.push(s.clone()),
        Value::Array(items) => items.iter().for_each(|v| strings(v, out)),
        Value::Object(map) => map.values().for_each(|v| strings(v, out)),
        _ => {}
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_server_text_reaches_the_model_whatever_the_server_does() {
    let env = TestEnv::new();
    // Every tool allowed, so each call really goes to its server.
    let allow = "lookup = \"allow\"\nset = \"allow\"\nreset = \"allow\"\nfail = \"allow\"\nslow = \"allow\"\n";
    let server = |alias: &str, faults: &[&str], extra: &str| {
        format!(
            "{}{extra}[servers.{alias}.tools]\n{allow}",
            env.demo(alias, "alpha", faults)
        )
    };
    let servers = [
        // isError with a stack trace and a secret, a JSON-RPC error leaking the
        // same, escapes in every text (and on stderr).
        server(
            "leaky",
            &["--fault", "escapes", "--fault", "rpc-error-on=reset"],
            "",
        ),
        server("crashy", &["--fault", "crash-on-call"], ""),
        server("torn", &["--fault", "crash-on-call-partial"], ""),
        server(
            "hung",
            &["--fault", "hang-on-call"],
            "call_timeout_ms = 1500\n",
        ),
    ];
    let calls = [
        (
            "mcp__leaky__fail",
            json!({"reason": "because"}),
            "mcp_remote_error",
        ),
        ("mcp__leaky__reset", json!({}), "mcp_remote_error"),
        (
            "mcp__crashy__lookup",
            json!({"key": "apple"}),
            "mcp_connection_lost",
        ),
        (
            "mcp__torn__lookup",
            json!({"key": "apple"}),
            "mcp_connection_lost",
        ),
        ("mcp__hung__lookup", json!({"key": "apple"}), "mcp_timeout"),
    ];
    let connects: Vec<(&str, Value)> = ["leaky", "crashy", "torn", "hung"]
        .iter()
        .map(|alias| ("connect_mcp", json!({ "alias": alias })))
        .collect();
    let faulty: Vec<(&str, Value)> = calls.iter().map(|(n, a, _)| (*n, a.clone())).collect();
    let stub = ModelStub::start(vec![
        tool_calls("connect", &connects),
        tool_calls("call", &faulty),
        Reply::sse(wire::text_reply(&["all done"])),
    ])
    .await;
    env.config(&format!(
        "[limits]\nclose_grace_ms = 300\n[model]\nprovider = \"openai\"\nbase_url = \"{}/v1\"\nmodel = \"gpt-test\"\n{}",
        stub.url(),
        servers.concat()
    ));
    let (out, events) =
        tokio::task::block_in_place(|| run(&env, &["--prompt", "call them all", "--json"]));
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        crate::common::stderr(&out)
    );
    let requests = stub.requests();
    assert_eq!(requests.len(), 3, "{requests:#?}");

    // The envelopes the model got, with the right codes.
    let messages = requests[2].body["messages"].as_array().unwrap();
    for (i, (name, _, code)) in calls.iter().enumerate() {
        let id = format!("call_{i}");
        let result = messages
            .iter()
            .find(|m| m["role"] == "tool" && m["tool_call_id"] == id.as_str())
            .unwrap_or_else(|| panic!("no result for {name} in {messages:#?}"));
        let content = result["content"].as_str().unwrap_or_default();
        let envelope: Value =
            serde_json::from_str(content.strip_prefix("[error] ").unwrap_or(content))
                .unwrap_or_else(|e| panic!("{name}: not an envelope ({e}): {content}"));
        assert_eq!(envelope["error"]["code"], *code, "{name}: {envelope}");
        assert_eq!(envelope["error"]["tool"], *name, "{name}: {envelope}");
    }

    // Nothing the servers said, in any message of any request: no secret, no
    // trace, no private path, no stderr line, no escape.
    let mut said = Vec::new();
    for request in &requests {
        strings(&request.body["messages"], &mut said);
    }
    let said = said.join("\n");
    for private in [
        "sk-demo-0123456789abcdef",
        "Traceback",
        "/srv/demo",
        "credentials.json",
        "unhandled exception",
        "demo-alpha",
        "crash-on-call",
        "hang-on-call",
        "pwned",
    ] {
        assert!(
            !said.contains(private),
            "{private:?} reached the model:\n{said}"
        );
    }
    for raw in ['\u{1b}', '\u{7}', '\u{9b}', '\u{202e}'] {
        assert!(
            !said.contains(raw),
            "raw {raw:?} reached the model:\n{said}"
        );
    }

    // The tool descriptions the model reads are server text too: inert, and
    // without invisible characters.
    let tools = requests[1].body["tools"].as_array().unwrap();
    let leaky = tools
        .iter()
        .map(|t| &t["function"])
        .find(|f| f["name"] == "mcp__leaky__lookup")
        .expect("leaky's lookup offered");
    let description = leaky["description"].as_str().unwrap();
    // Controls and whole escape sequences removed (issue 21, item 4), bidi
    // controls too, being invisible (rule 15): nothing of them is left.
    assert_eq!(
        description,
        "Look up the colour of a fruit in demo-alpha's in-memory table."
    );
    for raw in ['\u{1b}', '\u{7}', '\u{9b}', '\u{202e}'] {
        assert!(!description.contains(raw), "raw {raw:?}: {description}");
    }

    // The operator still sees what the servers said, marked as theirs.
    let results: Vec<&Value> = of(&events, "tool_result");
    let operator = |name: &str| {
        results
            .iter()
            .find(|e| e["name"] == name)
            .map(|e| e["server_output"].as_str().unwrap_or_default().to_owned())
            .unwrap_or_default()
    };
    assert!(operator("mcp__leaky__fail").contains("sk-demo-0123456789abcdef"));
    assert!(operator("mcp__leaky__reset").contains("unhandled exception"));
    env.assert_no_leaks();
}
