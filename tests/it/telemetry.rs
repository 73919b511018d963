//! `[telemetry]`: the real binary exports to an OTLP receiver on loopback that
//! decodes what it gets — a `tool_call` span per call with the documented
//! attributes, connect / revocation / approval events, no arguments unless
//! asked for, no secret ever; a collector that is down is reported, not waited for.

use std::process::Output;
use std::time::{Duration, Instant};

use crate::common::otlp::{Receiver, Span};
use crate::common::{TestEnv, stderr, stdout};

const POLICY: &str = "[servers.demo_alpha.tools]\nlookup = \"allow\"\nset = \"confirm\"\nreset = \"deny\"\nfail = \"allow\"\nslow = \"allow\"\n";
/// Sent as a header value: must reach the collector as a header, and nowhere else.
const TOKEN: &str = "tok-telemetry-5ecret";
/// In a call's arguments: must not leave the machine unless asked for.
const MARKER: &str = "apple-7f3a";

fn config(env: &TestEnv, telemetry: &str) {
    env.config(&format!(
        "{telemetry}\n{}{POLICY}",
        env.demo("demo_alpha", "alpha", &[])
    ));
}

/// Runs a command on a worker that may block (the receiver keeps serving).
fn run(env: &TestEnv, args: &[&str]) -> Output {
    tokio::task::block_in_place(|| {
        env.command(args)
            .env("MCPH_OTLP_TOKEN", TOKEN)
            .output()
            .expect("run mcp-harness")
    })
}

fn call(env: &TestEnv, tool: &str, args: &str, yes: bool) -> Output {
    let mut argv = vec!["call", "demo_alpha", tool, "--args", args];
    if yes {
        argv.push("--yes");
    }
    run(env, &argv)
}

fn span<'a>(spans: &'a [Span], tool: &str, decision: &str) -> &'a Span {
    spans
        .iter()
        .find(|s| s.attributes["mcp.tool"] == tool && s.attributes["mcp.decision"] == decision)
        .unwrap_or_else(|| panic!("no {tool}/{decision} span in {spans:#?}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn calls_are_spans_and_connects_revocations_and_approvals_are_events() {
    let receiver = Receiver::start().await;
    let env = TestEnv::new();
    config(
        &env,
        &format!(
            "[telemetry]\notlp_endpoint = \"{}/\"\nheaders = {{ Authorization = \"Bearer ${{MCPH_OTLP_TOKEN}}\" }}",
            receiver.url()
        ),
    );
    let lookup = call(&env, "lookup", &format!(r#"{{"key":"{MARKER}"}}"#), false);
    assert_eq!(lookup.status.code(), Some(0), "{}", stderr(&lookup));
    let set = r#"{"key":"apple","value":"blue"}"#;
    assert_eq!(call(&env, "set", set, true).status.code(), Some(0));
    assert_eq!(call(&env, "set", set, false).status.code(), Some(1));
    let fail = call(&env, "fail", "{}", false);
    assert_eq!(fail.status.code(), Some(1));
    // Each command flushed before it exited: everything is there, nothing was lost.
    for out in [&lookup, &fail] {
        assert!(!stderr(out).contains("telemetry"), "{}", stderr(out));
    }
    receiver.wait_for("4 spans", |r| r.spans().len() == 4).await;

    let spans = receiver.spans();
    assert!(spans.iter().all(|s| s.name == "tool_call"), "{spans:#?}");
    let ok = span(&spans, "lookup", "allow");
    for (key, value) in [
        ("mcp.alias", "demo_alpha"),
        ("mcp.exposed_name", "mcp__demo_alpha__lookup"),
        ("mcp.effect", "allow"),
        ("mcp.outcome", "ok"),
        ("mcp.requested_by", "lead"),
    ] {
        assert_eq!(ok.attributes[key], value, "{key}: {ok:#?}");
    }
    let latency: f64 = ok.attributes["mcp.latency_ms"].parse().unwrap();
    assert!(latency > 0.0 && !ok.error, "{ok:#?}");
    assert!(ok.duration > Duration::ZERO, "{ok:#?}");
    assert!(!ok.attributes.contains_key("mcp.arguments"), "{ok:#?}");
    let approved = span(&spans, "set", "approved");
    assert_eq!(approved.attributes["mcp.effect"], "confirm");
    assert_eq!(
        approved.attributes["mcp.decider"],
        "command-line flag (approve all)"
    );
    assert_eq!(approved.attributes["mcp.outcome"], "ok");
    let denied = span(&spans, "set", "denied");
    assert_eq!(denied.attributes["mcp.outcome"], "mcp_permission_denied");
    assert!(denied.error);
    let failed = span(&spans, "fail", "allow");
    assert_eq!(failed.attributes["mcp.outcome"], "mcp_remote_error");
    assert!(failed.error);

    let events = receiver.events();
    let named = |name: &str| events.iter().filter(|e| e.name == name).collect::<Vec<_>>();
    let connects = named("mcp.connect");
    assert_eq!(connects.len(), 4, "one per command: {events:#?}");
    assert!(connects.iter().all(|e| e.attributes["mcp.state"] == "ready"
        && e.attributes["mcp.alias"] == "demo_alpha"
        && e.attributes["mcp.exposed_tools"] == "4"));
    let approvals = named("mcp.approval");
    let decisions: Vec<&str> = approvals
        .iter()
        .map(|e| e.attributes["mcp.decision"].as_str())
        .collect();
    assert_eq!(decisions.len(), 2, "{approvals:#?}");
    assert!(decisions.contains(&"approved") && decisions.contains(&"denied"));
    assert!(approvals.iter().all(|e| e.linked_to_span), "{approvals:#?}");
    let revocations = named("mcp.revocation");
    assert_eq!(revocations.len(), 4, "{events:#?}");
    assert!(
        revocations
            .iter()
            .all(|e| e.attributes["mcp.cause"] == "shutdown")
    );
    assert_eq!(receiver.resource()["service.name"], "mcp-harness");

    // Headers go as headers; secrets and arguments go nowhere.
    let received = receiver.received();
    assert!(received.iter().all(|r| {
        r.headers.get("authorization").map(String::as_str) == Some(&*format!("Bearer {TOKEN}"))
            && r.headers["content-type"] == "application/x-protobuf"
    }));
    for r in &received {
        let body = String::from_utf8_lossy(&r.body);
        for secret in [TOKEN, MARKER, "sk-demo", "Traceback"] {
            assert!(
                !body.contains(secret),
                "{secret} in an export to {}",
                r.path
            );
        }
    }
    env.assert_no_leaks();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn arguments_go_only_when_the_operator_asks() {
    let receiver = Receiver::start().await;
    let env = TestEnv::new();
    config(
        &env,
        &format!(
            "[telemetry]\notlp_endpoint = \"{}\"\ninclude_arguments = true",
            receiver.url()
        ),
    );
    let out = call(&env, "lookup", &format!(r#"{{"key":"{MARKER}"}}"#), false);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    receiver.wait_for("a span", |r| !r.spans().is_empty()).await;
    let spans = receiver.spans();
    let arguments: serde_json::Value =
        serde_json::from_str(&spans[0].attributes["mcp.arguments"]).unwrap();
    assert_eq!(arguments, serde_json::json!({"key": MARKER}));
    env.assert_no_leaks();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_collector_that_is_down_is_reported_not_waited_for() {
    // A port nobody listens on.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let env = TestEnv::new();
    config(
        &env,
        &format!("[telemetry]\notlp_endpoint = \"http://127.0.0.1:{port}\""),
    );
    let started = Instant::now();
    let out = call(&env, "lookup", r#"{"key":"apple"}"#, false);
    let elapsed = started.elapsed();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stdout(&out).contains("apple = red"), "{}", stdout(&out));
    let said = stderr(&out);
    assert!(
        said.contains(&format!(
            "telemetry: 1 of 1 spans and 2 of 2 events did not reach http://127.0.0.1:{port}"
        )),
        "{said}"
    );
    // Generous (a loaded machine); the budget itself is 2 s for the flush.
    assert!(elapsed < Duration::from_secs(20), "{elapsed:?}");
    env.assert_no_leaks();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_header_naming_an_unset_variable_is_a_config_error() {
    let env = TestEnv::new();
    config(
        &env,
        "[telemetry]\notlp_endpoint = \"http://127.0.0.1:9\"\nheaders = { Authorization = \"${MCPH_NO_SUCH_VAR}\" }",
    );
    let out = call(&env, "lookup", r#"{"key":"apple"}"#, false);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let said = stderr(&out);
    assert!(said.contains("telemetry.headers.Authorization"), "{said}");
    assert!(said.contains("MCPH_NO_SUCH_VAR"), "{said}");
    env.assert_no_leaks();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_run_exports_its_calls_and_its_revocations() {
    let receiver = Receiver::start().await;
    let env = TestEnv::new();
    let policy = "lookup = \"allow\"\nset = \"confirm\"\nreset = \"confirm\"\nfail = \"allow\"\nslow = \"allow\"\n";
    env.config(&format!(
        "[telemetry]\notlp_endpoint = \"{}\"\n[model]\nprovider = \"scripted\"\n{}[servers.demo_alpha.tools]\n{policy}{}[servers.demo_beta.tools]\n{policy}",
        receiver.url(),
        env.demo("demo_alpha", "alpha", &[]),
        env.demo("demo_beta", "beta", &[])
    ));
    // The scripted demo: connects both servers, calls lookup on each, is
    // refused `set` (confirm, --approve never), disconnects demo_alpha.
    let out = run(&env, &["run", "--prompt", "show me", "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(!stderr(&out).contains("telemetry"), "{}", stderr(&out));
    let spans = receiver.spans();
    let beta = spans
        .iter()
        .find(|s| s.attributes.get("mcp.alias").map(String::as_str) == Some("demo_beta"))
        .unwrap_or_else(|| panic!("{spans:#?}"));
    assert_eq!(beta.attributes["mcp.tool"], "lookup");
    assert_eq!(beta.attributes["mcp.requested_by"], "lead");
    assert_eq!(beta.attributes["mcp.outcome"], "ok");
    let refused = span(&spans, "set", "denied");
    assert_eq!(refused.attributes["mcp.alias"], "demo_alpha");
    let events = receiver.events();
    assert!(
        events.iter().any(|e| e.name == "mcp.revocation"
            && e.attributes["mcp.alias"] == "demo_alpha"
            && e.attributes["mcp.cause"] == "disconnected"),
        "{events:#?}"
    );
    env.assert_no_leaks();
}

/// Through the gateway: the call's `tool_call` span names the client, and the
/// gateway's own `client_call` span (the same call id) says where the time
/// went — the upstream exchange, the approval, and what the gateway added.
#[cfg_attr(
    mcph_no_interop,
    ignore = "npm or python3 is missing: the interop tests install the pinned servers with them (docs/src/testing.md)"
)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_gateway_call_names_its_client_and_what_the_gateway_added() {
    use crate::serve::{Gateway, TOKEN_A, TsClient};
    use serde_json::json;
    let receiver = Receiver::start().await;
    let env = TestEnv::new();
    env.config(&format!(
        "[telemetry]\notlp_endpoint = \"{}/\"\n{}{POLICY}[servers.demo_alpha.resources]\nread = \"allow\"\n\
         [serve.clients.claude]\ntoken_env = \"MCPH_TEST_TOKEN_A\"\n",
        receiver.url(),
        env.demo("demo_alpha", "alpha", &[])
    ));
    let interop = crate::common::interop::Interop::get();
    let gateway = tokio::task::block_in_place(|| {
        let gateway = Gateway::start(&env);
        let mut claude = TsClient::start(&interop, &gateway.url, Some(TOKEN_A), None);
        assert_eq!(claude.connect()["ok"], true);
        let looked_up = claude.call("demo_alpha__lookup", json!({"key": "apple"}));
        assert_eq!(looked_up["isError"], false, "{looked_up}");
        let read = claude.ask(json!({"op": "read",
            "uri": "mcp-harness://demo_alpha/demo://demo-alpha/readme"}));
        assert!(read.get("result").is_some(), "{read}");
        gateway
    });
    receiver
        .wait_for("a tool_call and two client_call spans", |r| {
            let spans = r.spans();
            spans.iter().filter(|s| s.name == "client_call").count() == 2
                && spans.iter().any(|s| s.name == "tool_call")
        })
        .await;
    tokio::task::block_in_place(|| gateway.stop());
    let spans = receiver.spans();
    let tool_call = spans.iter().find(|s| s.name == "tool_call").unwrap();
    assert_eq!(
        tool_call.attributes["mcp.client"], "claude",
        "{tool_call:#?}"
    );
    assert_eq!(tool_call.attributes["mcp.requested_by"], "client claude");
    let of = |method: &str| {
        spans
            .iter()
            .find(|s| s.name == "client_call" && s.attributes["mcp.method"] == method)
            .unwrap_or_else(|| panic!("no {method} client_call span: {spans:#?}"))
    };
    let call = of("tools/call");
    assert_eq!(call.attributes["mcp.client"], "claude");
    assert_eq!(call.attributes["mcp.outside_name"], "demo_alpha__lookup");
    assert_eq!(call.attributes["mcp.alias"], "demo_alpha");
    assert_eq!(call.attributes["mcp.outcome"], "ok");
    assert_eq!(
        call.attributes["mcp.call_id"], tool_call.attributes["mcp.call_id"],
        "the two spans of one call share its id"
    );
    let number = |span: &Span, key: &str| -> f64 {
        span.attributes[key]
            .parse()
            .unwrap_or_else(|_| panic!("{key} is not a number: {span:#?}"))
    };
    let (total, upstream, added) = (
        number(call, "mcp.latency_ms"),
        number(call, "mcp.upstream_ms"),
        number(call, "mcp.gateway.added_ms"),
    );
    assert!(upstream > 0.0 && added > 0.0, "{call:#?}");
    assert!(
        (total - upstream - number(call, "mcp.approval_ms") - added).abs() < 0.01,
        "the parts add up to the whole: {call:#?}"
    );
    let read = of("resources/read");
    assert_eq!(read.attributes["mcp.client"], "claude");
    assert_eq!(read.attributes["mcp.decision"], "allow");
    assert!(number(read, "mcp.gateway.added_ms") >= 0.0, "{read:#?}");
}
