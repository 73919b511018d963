//! Elicitation (a server asking the operator for input mid-call): headless
//! commands advertise the capability like the TUI and decline; an installed elicitor
//! answers, and its answer is checked against the server's own schema.

use std::path::PathBuf;
use std::sync::Arc;

use crate::common::{BIN, TestEnv, json};
use futures::future::BoxFuture;
use mcp_harness::config::{self, ConfigSource};
use mcp_harness::mcp::{
    DefaultsElicitor, ElicitationRequest, ElicitationResponse, Elicitor, EventSink, FlagApprover,
    Hub, Vars,
};
use serde_json::{Value, json as j};

const POLICY: &str = "[servers.s.tools]\nlookup = \"allow\"\n";

fn config(env: &TestEnv) -> String {
    let text = format!(
        "{}{POLICY}",
        env.demo("s", "hostile", &["--scenario", "elicit-on-call"])
    );
    env.config(&text);
    env.fill(&text)
}

#[test]
fn headless_calls_decline_elicitation() {
    let env = TestEnv::new();
    config(&env);
    let out = env.run(&["call", "s", "lookup", "--args", r#"{"key":"k"}"#, "--json"]);
    let out = json(&out);
    assert_eq!(out["ok"], true, "{out}");
    assert_eq!(
        out["content"][0]["text"], "elicitation answered: decline null",
        "{out}"
    );
    env.assert_no_leaks();
}

async fn answer(env: &TestEnv, elicitor: Arc<dyn Elicitor>) -> String {
    let config = config::parse(&config(env), ConfigSource::Embedded).unwrap();
    let hub = Hub::builder(
        config.servers,
        config.limits,
        Vars::new(PathBuf::from(BIN)),
        EventSink::discard(),
    )
    .elicitor(elicitor)
    .build();
    hub.connect("s").await.unwrap().outcome.unwrap();
    let outcome = hub
        .call(
            &hub.snapshot(),
            "mcp__s__lookup",
            j!({"key": "k"}),
            &FlagApprover { approve: true },
        )
        .await;
    hub.shutdown().await;
    let output = outcome.result.expect("call");
    output.content[0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_installed_elicitor_answers_with_the_schema_defaults() {
    let env = TestEnv::new();
    let text = answer(&env, Arc::new(DefaultsElicitor)).await;
    let content: Value =
        serde_json::from_str(text.trim_start_matches("elicitation answered: accept ")).unwrap();
    assert_eq!(content, j!({"colour": "green", "shade": 5}), "{text}");
    env.assert_no_leaks();
}

/// Answers with something the server's schema refuses.
struct Careless;

impl Elicitor for Careless {
    fn elicit(&self, request: ElicitationRequest) -> BoxFuture<'_, ElicitationResponse> {
        assert_eq!(request.message, "Which colour should the harness use?");
        let mut content = serde_json::Map::new();
        content.insert("colour".into(), j!("purple"));
        Box::pin(async move { ElicitationResponse::Accept { content } })
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_answer_that_breaks_the_requested_schema_is_sent_as_cancel() {
    let env = TestEnv::new();
    let text = answer(&env, Arc::new(Careless)).await;
    assert_eq!(text, "elicitation answered: cancel null");
    env.assert_no_leaks();
}
