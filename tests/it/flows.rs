//! Flow control (SPEC rule 20) with a scripted model on loopback and real demo
//! servers: demo_beta's `lookup` is labelled `untrusted_content` (a page that
//! carries someone else's instructions), the built-in `read_file` reads
//! private data, and demo_alpha's `set` is an `external_sink` whose policy is
//! `allow`. Read both, then call the sink: escalated (denied under
//! `--approve never` with the flow's reason), or refused under
//! `on_trifecta = "deny"`. The benign twins never ask.

use crate::common::TestEnv;
use crate::common::headless::of;
use crate::common::model_stub::{ModelStub, Reply};
use crate::provider_openai::wire::{calls, text};
use serde_json::{Value, json};

const ALLOW_ALL: &str =
    "lookup = \"allow\"\nset = \"allow\"\nreset = \"allow\"\nfail = \"allow\"\nslow = \"allow\"\n";

/// The config: the labels above, and `flows` as the `[flows]` table's body.
fn config(env: &TestEnv, stub: &ModelStub, flows: &str) -> String {
    format!(
        "[model]\nprovider = \"openai\"\nbase_url = \"{}/v1\"\nmodel = \"gpt-test\"\n\
         [flows]\n{flows}\n\
         {}[servers.demo_alpha.tools]\n{ALLOW_ALL}[servers.demo_alpha.tool_labels]\nset = [\"external_sink\"]\n\
         {}[servers.demo_beta.tools]\n{ALLOW_ALL}[servers.demo_beta.tool_labels]\nlookup = [\"untrusted_content\"]\n",
        stub.url(),
        env.demo("demo_alpha", "alpha", &[]),
        env.demo("demo_beta", "beta", &[]),
    )
}

fn connect_both() -> Reply {
    calls(&[
        ("connect_mcp", json!({"alias": "demo_alpha"})),
        ("connect_mcp", json!({"alias": "demo_beta"})),
    ])
}

fn fetch() -> Reply {
    calls(&[("mcp__demo_beta__lookup", json!({"key": "oslo"}))])
}

fn read_private() -> Reply {
    calls(&[("read_file", json!({"path": "secrets.txt"}))])
}

fn sink() -> Reply {
    calls(&[(
        "mcp__demo_alpha__set",
        json!({"key": "exfil", "value": "the file's contents"}),
    )])
}

/// `run --json` in the test's folder (the workspace `read_file` reads).
fn run(env: &TestEnv, approve: &str) -> (std::process::Output, Vec<Value>) {
    std::fs::write(
        env.dir.path().join("secrets.txt"),
        "the user's private notes",
    )
    .unwrap();
    let out = env
        .command(&["run", "--prompt", "go", "--json", "--approve", approve])
        .current_dir(env.dir.path())
        .env_remove("ANTHROPIC_API_KEY")
        .env_remove("OPENAI_API_KEY")
        .output()
        .unwrap();
    let events = crate::common::stdout(&out)
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect();
    (out, events)
}

fn result_of<'a>(events: &'a [Value], id: &str) -> &'a Value {
    events
        .iter()
        .find(|e| e["event"] == "tool_result" && e["id"] == id)
        .unwrap_or_else(|| panic!("no result for {id}: {events:?}"))
}

fn audit(env: &TestEnv, events: &[Value]) -> Vec<Value> {
    let session = events.last().unwrap()["session"]
        .as_str()
        .unwrap()
        .to_string();
    std::fs::read_to_string(
        env.dir
            .path()
            .join("xdg-data/mcp-harness/sessions")
            .join(session)
            .join("audit.jsonl"),
    )
    .unwrap()
    .lines()
    .map(|l| serde_json::from_str(l).unwrap())
    .collect()
}

const SINK: &str = "call_0_mcp__demo_alpha__set";
const FETCH: &str = "call_0_mcp__demo_beta__lookup";
const READ: &str = "call_0_read_file";

fn tainted_by() -> Value {
    json!([
        {"call": FETCH, "tool": "mcp__demo_beta__lookup"},
        {"call": READ, "tool": "read_file"},
    ])
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sink_after_untrusted_content_and_private_data_is_escalated_even_under_allow() {
    let env = TestEnv::new();
    let stub = ModelStub::start(vec![
        connect_both(),
        fetch(),
        read_private(),
        sink(),
        text("done"),
    ])
    .await;
    env.config(&config(&env, &stub, ""));
    let (out, events) = tokio::task::block_in_place(|| run(&env, "never"));
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        crate::common::stderr(&out)
    );
    // The fetch and the read ran; the sink was asked about and, with nobody
    // to approve, denied with the flow's reason, nothing sent.
    assert_eq!(result_of(&events, FETCH)["ok"], true);
    assert_eq!(result_of(&events, READ)["ok"], true);
    let sink = result_of(&events, SINK);
    assert_eq!(sink["ok"], false, "{sink}");
    assert_eq!(sink["error"]["code"], "mcp_permission_denied");
    let message = sink["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("on_trifecta") && message.contains(FETCH) && message.contains(READ),
        "{message}"
    );
    let escalated = of(&events, "flow_escalated");
    assert_eq!(escalated.len(), 1, "{events:?}");
    assert_eq!(escalated[0]["id"], SINK);
    assert_eq!(escalated[0]["rule"], "trifecta");
    assert_eq!(escalated[0]["tainted_by"], tainted_by());
    // The audit log says the same, by call id.
    let records = audit(&env, &events);
    let flow: Vec<&Value> = records
        .iter()
        .filter(|r| r["event"] == "flow_escalated")
        .collect();
    assert_eq!(flow.len(), 1, "{records:?}");
    assert_eq!(flow[0]["call"], SINK);
    assert_eq!(flow[0]["tainted_by"], tainted_by());
    // The model was told why (the harness's words).
    let requests = stub.requests();
    let told = crate::common::lead_session::tool_result(&requests[4], SINK);
    assert_eq!(told["error"]["code"], "mcp_permission_denied", "{told}");
    env.assert_no_leaks();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn under_deny_the_sink_is_refused_with_mcp_flow_denied() {
    let env = TestEnv::new();
    let stub = ModelStub::start(vec![
        connect_both(),
        fetch(),
        read_private(),
        sink(),
        text("done"),
    ])
    .await;
    env.config(&config(&env, &stub, "on_trifecta = \"deny\""));
    // Even an operator who approves everything does not get asked: refused.
    let (out, events) = tokio::task::block_in_place(|| run(&env, "always"));
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        crate::common::stderr(&out)
    );
    let sink = result_of(&events, SINK);
    assert_eq!(sink["error"]["code"], "mcp_flow_denied", "{sink}");
    let denied = of(&events, "flow_denied");
    assert_eq!(denied.len(), 1, "{events:?}");
    assert_eq!(denied[0]["tainted_by"], tainted_by());
    assert!(of(&events, "flow_escalated").is_empty());
    let records = audit(&env, &events);
    assert!(
        records
            .iter()
            .any(|r| r["event"] == "flow_denied" && r["call"] == SINK),
        "{records:?}"
    );
    // Nothing reached the server: the table has no `exfil`.
    env.assert_no_leaks();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn benign_twins_a_fetch_then_a_local_write_and_a_sink_after_private_data_alone_never_ask() {
    let env = TestEnv::new();
    let stub = ModelStub::start(vec![
        connect_both(),
        // A fetch, then a write that sends nothing out (`reset` has no label).
        fetch(),
        calls(&[("mcp__demo_alpha__reset", json!({}))]),
        text("first done"),
    ])
    .await;
    env.config(&config(&env, &stub, ""));
    let (out, events) = tokio::task::block_in_place(|| run(&env, "never"));
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        crate::common::stderr(&out)
    );
    assert_eq!(
        result_of(&events, "call_0_mcp__demo_alpha__reset")["ok"],
        true
    );
    assert!(of(&events, "flow_escalated").is_empty() && of(&events, "flow_denied").is_empty());

    let stub = ModelStub::start(vec![
        connect_both(),
        // Private data, then a sink, with no untrusted content: it runs.
        read_private(),
        sink(),
        text("second done"),
    ])
    .await;
    env.config(&config(&env, &stub, ""));
    let (out, events) = tokio::task::block_in_place(|| run(&env, "never"));
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        crate::common::stderr(&out)
    );
    assert_eq!(result_of(&events, SINK)["ok"], true, "{events:?}");
    assert!(of(&events, "flow_escalated").is_empty() && of(&events, "flow_denied").is_empty());
    env.assert_no_leaks();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn untrusted_sink_confirm_escalates_a_sink_after_untrusted_content_alone() {
    let env = TestEnv::new();
    let stub = ModelStub::start(vec![connect_both(), fetch(), sink(), text("done")]).await;
    env.config(&config(&env, &stub, "untrusted_sink = \"confirm\""));
    let (out, events) = tokio::task::block_in_place(|| run(&env, "always"));
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        crate::common::stderr(&out)
    );
    // Asked (and approved by the flag): it ran, and the escalation is on record.
    assert_eq!(result_of(&events, SINK)["ok"], true, "{events:?}");
    let escalated = of(&events, "flow_escalated");
    assert_eq!(escalated.len(), 1);
    assert_eq!(escalated[0]["rule"], "untrusted_sink");
    assert_eq!(
        escalated[0]["tainted_by"],
        json!([{"call": FETCH, "tool": "mcp__demo_beta__lookup"}])
    );
    env.assert_no_leaks();
}

#[test]
fn an_unknown_label_is_a_config_error_naming_the_key_and_the_valid_ones() {
    let env = TestEnv::new();
    env.config(&format!(
        "{}labels = [\"external_snk\"]\n[servers.demo_alpha.tools]\n{ALLOW_ALL}",
        env.demo("demo_alpha", "alpha", &[])
    ));
    let out = env.run(&["check"]);
    assert_eq!(out.status.code(), Some(2));
    let err = crate::common::stderr(&out);
    assert!(err.contains("servers.demo_alpha.labels"), "{err}");
    assert!(
        err.contains("untrusted_content") && err.contains("private_data"),
        "{err}"
    );
    assert!(err.contains("did you mean `external_sink`?"), "{err}");

    env.config(&format!(
        "{}[servers.demo_alpha.tools]\n{ALLOW_ALL}[servers.demo_alpha.tool_labels]\nsett = [\"external_sink\"]\n",
        env.demo("demo_alpha", "alpha", &[])
    ));
    let out = env.run(&["check"]);
    assert_eq!(out.status.code(), Some(2));
    let err = crate::common::stderr(&out);
    assert!(err.contains("servers.demo_alpha.tool_labels.sett"), "{err}");
    assert!(err.contains("did you mean `set`?"), "{err}");
}

#[test]
fn check_json_gives_each_published_tool_its_local_labels() {
    let env = TestEnv::new();
    env.config(&format!(
        "{}labels = [\"private_data\"]\n[servers.demo_alpha.tools]\n{ALLOW_ALL}\
         [servers.demo_alpha.tool_labels]\nset = [\"external_sink\"]\nreset = []\n",
        env.demo("demo_alpha", "alpha", &[])
    ));
    let out = env.run(&["check", "--json"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        crate::common::stderr(&out)
    );
    let report = crate::common::json(&out);
    let labels: Vec<(String, Value)> = report["servers"][0]["published"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| (t["name"].as_str().unwrap().to_string(), t["labels"].clone()))
        .collect();
    let of = |name: &str| labels.iter().find(|(n, _)| n == name).unwrap().1.clone();
    assert_eq!(of("lookup"), json!(["private_data"]), "the server's labels");
    assert_eq!(
        of("set"),
        json!(["external_sink"]),
        "a tool's own replace them"
    );
    assert_eq!(of("reset"), json!([]), "…even with none");
    env.assert_no_leaks();
}

/// What a session read stays read: a resumed session (`run --resume`) still
/// holds the taint its audit log recorded, so a sink is escalated at once,
/// naming the calls of the earlier run.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_resumed_session_keeps_its_taint() {
    let env = TestEnv::new();
    let stub = ModelStub::start(vec![connect_both(), fetch(), read_private(), text("read")]).await;
    env.config(&config(&env, &stub, ""));
    let (out, events) = tokio::task::block_in_place(|| run(&env, "never"));
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        crate::common::stderr(&out)
    );
    assert!(of(&events, "flow_escalated").is_empty());

    let stub = ModelStub::start(vec![connect_both(), sink(), text("done")]).await;
    env.config(&config(&env, &stub, ""));
    let out = tokio::task::block_in_place(|| {
        env.command(&[
            "run",
            "--prompt",
            "again",
            "--json",
            "--approve",
            "never",
            "--resume",
        ])
        .current_dir(env.dir.path())
        .env_remove("ANTHROPIC_API_KEY")
        .env_remove("OPENAI_API_KEY")
        .output()
        .unwrap()
    });
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        crate::common::stderr(&out)
    );
    let events: Vec<Value> = crate::common::stdout(&out)
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect();
    let escalated = of(&events, "flow_escalated");
    assert_eq!(escalated.len(), 1, "{events:?}");
    assert_eq!(escalated[0]["tainted_by"], tainted_by());
    assert_eq!(
        result_of(&events, SINK)["error"]["code"],
        "mcp_permission_denied"
    );
    env.assert_no_leaks();
}
