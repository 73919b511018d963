//! Multi-round input (issue 11, deliverable 3): a server's `InputRequiredResult`
//! on a 2026-07-28 connection goes to the operator exactly like an elicitation
//! on a handshake connection (the same request reaches the same elicitor), the
//! call is retried with the answers and the `requestState` byte for byte (the
//! demo's `guarded_set` refuses a state that came back altered), a decline is
//! sent back as the answer, and rounds and state size are bounded.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use futures::future::BoxFuture;
use mcp_harness::config::{self, ConfigSource};
use mcp_harness::mcp::{
    DefaultsElicitor, ElicitationRequest, ElicitationResponse, Elicitor, EventSink, FlagApprover,
    Hub, ToolErrorCode, Vars,
};
use serde_json::{Value, json as j};

use crate::common::{BIN, TestEnv, json, records};

const POLICY: &str = "[servers.s.tools]\nlookup = \"allow\"\nset = \"allow\"\nreset = \"allow\"\nfail = \"allow\"\nslow = \"allow\"\nresearch = \"allow\"\nguarded_set = \"allow\"\n";

/// `[servers.s]`: demo alpha with its extras, speaking `mode`, recording.
fn config(env: &TestEnv, mode: &str, faults: &[&str], limits: &str) -> String {
    let record = env.path("record.jsonl");
    let mut args = vec![
        "--protocol",
        mode,
        "--extras",
        "--record",
        record.to_str().unwrap(),
    ];
    args.extend_from_slice(faults);
    let text = format!(
        "[limits]\n{limits}{}{POLICY}",
        env.demo("s", "alpha", &args)
    );
    env.config(&text);
    env.fill(&text)
}

fn hub(text: &str, elicitor: Arc<dyn Elicitor>) -> Hub {
    let config = config::parse(text, ConfigSource::Embedded).unwrap();
    Hub::builder(
        config.servers,
        config.limits,
        Vars::new(PathBuf::from(BIN)),
        EventSink::discard(),
    )
    .elicitor(elicitor)
    .build()
}

async fn call(hub: &Hub, tool: &str, arguments: Value) -> Result<String, (ToolErrorCode, String)> {
    let outcome = hub
        .call(
            &hub.snapshot(),
            &format!("mcp__s__{tool}"),
            arguments,
            &FlagApprover { approve: true },
        )
        .await;
    outcome
        .result
        .map(|o| {
            o.content[0]["text"]
                .as_str()
                .unwrap_or_default()
                .to_string()
        })
        .map_err(|e| (e.code, e.message))
}

/// Accepts with the form's defaults, remembering what was asked.
#[derive(Default)]
struct Recording(Mutex<Vec<(String, Value)>>);

impl Elicitor for Recording {
    fn elicit(&self, request: ElicitationRequest) -> BoxFuture<'_, ElicitationResponse> {
        self.0
            .lock()
            .unwrap()
            .push((request.message.clone(), request.requested_schema.clone()));
        DefaultsElicitor.elicit(request)
    }
}

#[test]
fn headless_declines_and_the_server_gets_the_decline_on_the_retry() {
    let env = TestEnv::new();
    config(&env, "2026-07-28", &[], "");
    let out = env.run(&[
        "call",
        "s",
        "guarded_set",
        "--args",
        r#"{"key":"k","value":"v"}"#,
        "--json",
    ]);
    let line = json(&out);
    assert_eq!(line["ok"], true, "{line}");
    assert_eq!(
        line["content"][0]["text"],
        "not stored: the operator did not confirm (decline)"
    );
    // The original call, then its retry carrying the decline.
    let calls: Vec<Value> = records(&env.path("record.jsonl"));
    assert_eq!(calls.len(), 2, "{calls:?}");
    assert!(calls.iter().all(|c| c["name"] == "guarded_set"));
    env.assert_no_leaks();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn both_eras_ask_the_operator_the_same_question_and_store_on_accept() {
    let mut asked = Vec::new();
    for mode in ["2026-07-28", "2025-11-25"] {
        let env = TestEnv::new();
        let recording = Arc::new(Recording::default());
        let hub = hub(&config(&env, mode, &[], ""), recording.clone());
        hub.connect("s").await.unwrap().outcome.unwrap();
        let stored = call(&hub, "guarded_set", j!({"key": "k", "value": "v"})).await;
        assert_eq!(stored.as_deref(), Ok("stored k = v"), "{mode}");
        let looked = call(&hub, "lookup", j!({"key": "k"})).await.unwrap();
        assert!(looked.contains('v'), "{mode}: {looked}");
        hub.shutdown().await;
        asked.push(recording.0.lock().unwrap().clone());
        env.assert_no_leaks();
    }
    assert_eq!(asked[0].len(), 1, "{asked:?}");
    assert_eq!(asked[0], asked[1], "the same form on both revisions");
    assert_eq!(asked[0][0].0, "Store k = v?");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_input_loop_ends_at_max_input_rounds_and_the_connection_stays() {
    let env = TestEnv::new();
    let text = config(
        &env,
        "2026-07-28",
        &["--fault", "input-loop"],
        "max_input_rounds = 3\n",
    );
    let hub = hub(&text, Arc::new(DefaultsElicitor));
    hub.connect("s").await.unwrap().outcome.unwrap();
    let (code, message) = call(&hub, "guarded_set", j!({"key": "k", "value": "v"}))
        .await
        .unwrap_err();
    assert_eq!(code, ToolErrorCode::McpRemoteError);
    assert!(message.contains("asked for input 4 times"), "{message}");
    assert!(message.contains("max_input_rounds"), "{message}");
    // Three answered rounds: the first call and three retries reached the server.
    let calls = records(&env.path("record.jsonl"));
    assert_eq!(calls.len(), 4, "{calls:?}");
    // The connection's other tools keep working.
    let looked = call(&hub, "lookup", j!({"key": "apple"})).await.unwrap();
    assert!(looked.contains("red"), "{looked}");
    hub.shutdown().await;
    env.assert_no_leaks();
}

/// Issue 21, item 2: a 10 MiB `requestState` (the default limit is 1 MiB)
/// used to be cut to the limit as it streamed in and sent back, round after
/// round. It is never altered: the call ends at once, in the harness's words,
/// and nothing goes back to the server.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_oversized_request_state_is_never_cut_and_sent_back() {
    let env = TestEnv::new();
    let text = config(
        &env,
        "2026-07-28",
        &[
            "--fault",
            "input-loop",
            "--fault",
            "request-state-bytes=10485760",
        ],
        "",
    );
    let hub = hub(&text, Arc::new(DefaultsElicitor));
    hub.connect("s").await.unwrap().outcome.unwrap();
    let (_, message) = call(&hub, "guarded_set", j!({"key": "k", "value": "v"}))
        .await
        .unwrap_err();
    assert!(
        message.contains("requestState has 10485760 bytes"),
        "{message}"
    );
    assert!(
        message.contains("the limit is 1048576 (max_request_state_bytes)"),
        "{message}"
    );
    assert_eq!(
        records(&env.path("record.jsonl")).len(),
        1,
        "the state never went back to the server"
    );
    let looked = call(&hub, "lookup", j!({"key": "apple"})).await.unwrap();
    assert!(looked.contains("red"), "{looked}");
    hub.shutdown().await;
    env.assert_no_leaks();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_state_that_grows_is_refused_at_the_limit() {
    let env = TestEnv::new();
    let text = config(
        &env,
        "2026-07-28",
        &["--fault", "input-loop", "--fault", "state-grows"],
        "max_request_state_bytes = 200000\n",
    );
    let hub = hub(&text, Arc::new(DefaultsElicitor));
    hub.connect("s").await.unwrap().outcome.unwrap();
    let (code, message) = call(&hub, "guarded_set", j!({"key": "k", "value": "v"}))
        .await
        .unwrap_err();
    assert_eq!(code, ToolErrorCode::McpRemoteError);
    assert!(message.contains("requestState has 262"), "{message}");
    assert!(message.contains("max_request_state_bytes"), "{message}");
    // 64 KiB and 128 KiB states were echoed intact (the server checks them).
    assert_eq!(records(&env.path("record.jsonl")).len(), 3);
    let looked = call(&hub, "lookup", j!({"key": "apple"})).await.unwrap();
    assert!(looked.contains("red"), "{looked}");
    hub.shutdown().await;
    env.assert_no_leaks();
}
