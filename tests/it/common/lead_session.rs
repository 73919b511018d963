//! A Lead session over a model stub (Chat Completions) with the two demo
//! servers, and reading what the model was sent back out of the stub's records.

use std::sync::Arc;

use mcp_harness::config::{self, ConfigSource};
use mcp_harness::mcp::{Approver, FlagApprover};
use mcp_harness::session::{self, Session, SessionOptions};
use serde_json::Value;

use super::TestEnv;
use super::model_stub::{ModelStub, Recorded};

const POLICY: &str = "lookup = \"allow\"\nset = \"confirm\"\nreset = \"confirm\"\nfail = \"allow\"\nslow = \"allow\"\n";

/// A session whose model is `stub` (as `openai`), every `confirm` approved;
/// `alpha_extra` are demo_alpha's extra arguments, `extra` more config text.
pub async fn session(
    env: &TestEnv,
    stub: &ModelStub,
    alpha_extra: &[&str],
    extra: &str,
) -> Session {
    session_with(
        env,
        stub,
        alpha_extra,
        extra,
        Arc::new(FlagApprover { approve: true }),
    )
}

/// [`session`] with `approver` deciding the `confirm` calls.
pub fn session_with(
    env: &TestEnv,
    stub: &ModelStub,
    alpha_extra: &[&str],
    extra: &str,
    approver: Arc<dyn Approver>,
) -> Session {
    let text = format!(
        "[model]\nprovider = \"openai\"\nbase_url = \"{}/v1\"\nmodel = \"gpt-test\"\n{extra}{}[servers.demo_alpha.tools]\n{POLICY}{}[servers.demo_beta.tools]\n{POLICY}",
        stub.url(),
        env.demo("demo_alpha", "alpha", alpha_extra),
        env.demo("demo_beta", "beta", &[]),
    );
    let config = config::parse(&env.fill(&text), ConfigSource::Embedded).expect("config");
    let options = SessionOptions {
        resume: None,
        persist: false,
        workspace: Some(env.dir.path().to_path_buf()),
        data_dir: None,
    };
    session::start(&config, approver, options).expect("session")
}

pub fn tool_names(request: &Recorded) -> Vec<String> {
    request.body["tools"]
        .as_array()
        .map(|tools| {
            tools
                .iter()
                .map(|t| t["function"]["name"].as_str().unwrap_or("").to_string())
                .collect()
        })
        .unwrap_or_default()
}

/// The tool messages of a request, by call id.
pub fn tool_result(request: &Recorded, call_id: &str) -> Value {
    let message = request.body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "tool" && m["tool_call_id"] == call_id)
        .unwrap_or_else(|| panic!("no result for {call_id} in {}", request.body));
    let content = message["content"].as_str().unwrap_or_default();
    // The Chat Completions dialect has no is_error field: errors are marked in the text.
    let content = content.strip_prefix("[error] ").unwrap_or(content);
    serde_json::from_str(content).unwrap_or(Value::String(content.to_string()))
}
