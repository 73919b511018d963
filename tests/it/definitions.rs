//! What 2026-07-28 and output schemas add to a tool's definition (issue 11,
//! deliverables 1, 6, 7): an invalid `x-mcp-header` rejects an HTTP connection
//! naming the tool (`deny` keeps the server), a `null` for an optional
//! property that does not admit it is dropped and said so, and a
//! `structuredContent` that breaks its `outputSchema` becomes a local
//! `mcp_remote_error` with the instance paths for the operator.

use serde_json::{Value, json as j};

use crate::common::hubs::http_demo;
use crate::common::{TestEnv, json};

fn call(env: &TestEnv, tool: &str, args: Value) -> Value {
    json(&env.run(&["call", "s", tool, "--args", &args.to_string(), "--json"]))
}

#[test]
fn an_invalid_x_mcp_header_rejects_the_http_connection_unless_denied() {
    let env = TestEnv::new();
    let (mut server, url) = http_demo(&env, "alpha", &["--toolset", "headers"]);
    let config = |bad: &str| {
        env.config(&format!(
            "[servers.s]\nurl = \"{url}\"\n[servers.s.tools]\nlookup = \"allow\"\nbad_header = \"{bad}\"\n"
        ))
    };
    config("allow");
    let line = call(&env, "lookup", j!({"key": "k"}));
    assert_eq!(line["error"]["code"], "invalid_tool_definition", "{line}");
    assert_eq!(line["error"]["tools"], j!(["bad_header"]), "{line}");
    let message = line["error"]["message"].as_str().unwrap();
    assert!(message.contains("header rule"), "{message}");
    assert!(
        message.contains("`bad_header`: property `filter`"),
        "{message}"
    );
    // `check` lists it too: never dropped silently.
    let report = json(&env.run(&["check", "--json"]));
    let names: Vec<&str> = report["servers"][0]["published"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["lookup", "bad_header"], "{report}");
    // A deny keeps the server; the valid tool is called (its header sent).
    config("deny");
    let line = call(&env, "lookup", j!({"key": "k"}));
    assert_eq!(line["ok"], true, "{line}");
    let _ = server.kill();
    let _ = server.wait();
}

#[test]
fn over_stdio_x_mcp_header_is_no_rule() {
    let env = TestEnv::new();
    env.config(&format!(
        "{}[servers.s.tools]\nlookup = \"allow\"\nbad_header = \"allow\"\n",
        env.demo("s", "alpha", &["--toolset", "headers"])
    ));
    assert_eq!(call(&env, "lookup", j!({"key": "k"}))["ok"], true);
    env.assert_no_leaks();
}

fn structured(env: &TestEnv) {
    env.config(&format!(
        "{}[servers.s.tools]\nreport = \"allow\"\nbad_report = \"allow\"\n",
        env.demo("s", "alpha", &["--toolset", "structured"])
    ));
}

#[test]
fn a_null_for_an_optional_property_is_dropped_and_said_so() {
    let env = TestEnv::new();
    structured(&env);
    let line = call(&env, "report", j!({"topic": "tides", "note": null}));
    assert_eq!(line["ok"], true, "{line}");
    assert_eq!(line["dropped_nulls"], j!(["/note"]), "{line}");
    // The server never saw the null.
    let text = line["content"][0]["text"].as_str().unwrap();
    assert!(text.ends_with(r#"(arguments {"topic":"tides"})"#), "{text}");
    // Everything else is validated as before: a null for a required property,
    // a wrong type for the optional one.
    for args in [j!({"topic": null}), j!({"topic": "tides", "note": 5})] {
        let line = call(&env, "report", args.clone());
        assert_eq!(
            line["error"]["code"], "mcp_invalid_arguments",
            "{args}: {line}"
        );
        assert!(line.get("dropped_nulls").is_none(), "{line}");
    }
    env.assert_no_leaks();
}

#[test]
fn structured_content_is_held_to_the_output_schema() {
    let env = TestEnv::new();
    structured(&env);
    let line = call(&env, "report", j!({"topic": "tides"}));
    assert_eq!(line["ok"], true, "{line}");
    assert_eq!(
        line["structured_content"],
        j!({"count": 3, "topic": "tides"})
    );
    let line = call(&env, "bad_report", j!({"topic": "tides"}));
    assert_eq!(line["error"]["code"], "mcp_remote_error", "{line}");
    let message = line["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("does not match the outputSchema"),
        "{message}"
    );
    assert!(
        !message.contains("three"),
        "server data stays out: {message}"
    );
    let output = line["server_output"].as_str().unwrap();
    assert!(output.contains("/count"), "{output}");
    env.assert_no_leaks();
}
