//! Server content the operator brings in through the TUI's backend (issue 14),
//! against the real demo server and a model API on loopback: `@alias:uri`
//! resources are read and follow the message under a header saying whose words
//! they are; a resource that cannot be read is said in its place (its server's
//! error text never reaches the model); `/alias:prompt` inserts the prompt's
//! messages; a prompt the server refuses sends nothing to the model; a `deny`
//! read policy holds against the operator's own attachment too.

use std::collections::BTreeMap;

use mcp_harness::backend::{self, BackendHandle};
use mcp_harness::config::{self, ConfigSource};
use mcp_harness::protocol::{
    BackendEvent, Command, ContentSource, PromptUse, ResourceRef, ServerContentView, UserMessage,
};
use mcp_harness::session::SessionOptions;

use super::{connect, next, stop};
use crate::common::TestEnv;
use crate::common::hubs::DEMO_POLICY;
use crate::common::model_stub::ModelStub;
use crate::provider_openai::wire::text;

fn start(env: &TestEnv, stub: &ModelStub, extra: &str) -> BackendHandle {
    let text = format!(
        "[model]\nprovider = \"openai\"\nbase_url = \"{}/v1\"\nmodel = \"gpt-test\"\n{}[servers.demo_alpha.tools]\n{DEMO_POLICY}{extra}",
        stub.url(),
        env.demo("demo_alpha", "alpha", &[])
    );
    let path = env.config(&text);
    let config = config::parse(&env.fill(&text), ConfigSource::File(path)).expect("config");
    let options = SessionOptions {
        workspace: Some(env.dir.path().to_path_buf()),
        ..SessionOptions::default()
    };
    backend::spawn(config, options).expect("backend")
}

fn attach(uri: &str) -> ResourceRef {
    ResourceRef {
        alias: "demo_alpha".into(),
        uri: uri.into(),
    }
}

async fn content(handle: &mut BackendHandle) -> ServerContentView {
    match next(handle, "server content", |e| {
        matches!(e, BackendEvent::ServerContent(_))
    })
    .await
    {
        BackendEvent::ServerContent(view) => view,
        _ => unreachable!(),
    }
}

async fn turn_ended(handle: &mut BackendHandle) {
    next(handle, "the turn's end", |e| {
        matches!(e, BackendEvent::TurnEnded(_))
    })
    .await;
}

/// The text of the last user message of the model request `i`.
fn user_text(stub: &ModelStub, i: usize) -> String {
    let requests = stub.requests();
    let messages = requests[i].body["messages"]
        .as_array()
        .expect("messages")
        .clone();
    let last = messages
        .iter()
        .rev()
        .find(|m| m["role"] == "user")
        .expect("a user message");
    last["content"].as_str().expect("text").to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn attached_resources_and_prompts_reach_the_model_marked_as_the_servers() {
    let env = TestEnv::new();
    let stub = ModelStub::start(vec![text("read it"), text("summarized")]).await;
    let mut handle = start(&env, &stub, "");
    connect(&mut handle, "demo_alpha").await;
    let message = UserMessage {
        text: "compare @demo_alpha:demo://demo-alpha/readme".into(),
        resources: vec![
            attach("demo://demo-alpha/readme"),
            attach("demo://demo-alpha/broken"),
        ],
    };
    handle
        .commands
        .send(Command::Prompt(message))
        .expect("send");
    let readme = content(&mut handle).await;
    assert_eq!(readme.error, None, "{readme:?}");
    assert!(
        matches!(&readme.source, ContentSource::Resource { uri } if uri == "demo://demo-alpha/readme")
    );
    assert!(
        readme.parts.iter().any(|p| p.text.contains("# demo-alpha")),
        "{readme:?}"
    );
    let broken = content(&mut handle).await;
    let error = broken.error.clone().expect("the broken resource fails");
    assert!(error.starts_with("mcp_remote_error"), "{error}");
    assert!(!error.contains("sk-demo"), "{error}");
    turn_ended(&mut handle).await;
    let sent = user_text(&stub, 0);
    assert!(
        sent.starts_with("compare @demo_alpha:demo://demo-alpha/readme"),
        "{sent}"
    );
    assert!(
        sent.contains("server content from MCP server `demo_alpha`: its words, untrusted"),
        "{sent}"
    );
    assert!(sent.contains("# demo-alpha"), "{sent}");
    assert!(
        sent.contains("could not be read (mcp_remote_error"),
        "{sent}"
    );
    assert!(
        !sent.contains("sk-demo"),
        "the server's error text stays out: {sent}"
    );

    let used = |arguments: &[(&str, &str)]| PromptUse {
        alias: "demo_alpha".into(),
        name: "summarize".into(),
        arguments: arguments
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect::<BTreeMap<_, _>>(),
    };
    // Refused by the listing's check: nothing goes to the model.
    handle
        .commands
        .send(Command::UsePrompt(used(&[("style", "short")])))
        .expect("send");
    let refused = content(&mut handle).await;
    let error = refused.error.expect("a missing argument");
    assert!(error.contains("topic"), "{error}");
    turn_ended(&mut handle).await;
    assert_eq!(stub.requests().len(), 1, "a refused prompt sends nothing");

    handle
        .commands
        .send(Command::UsePrompt(used(&[("topic", "rust traits")])))
        .expect("send");
    let prompt = content(&mut handle).await;
    assert_eq!(prompt.error, None, "{prompt:?}");
    assert!(
        prompt
            .parts
            .iter()
            .all(|p| p.label == "user" || p.label == "assistant")
    );
    assert!(
        prompt.parts.iter().any(|p| p.text.contains("rust traits")),
        "{prompt:?}"
    );
    turn_ended(&mut handle).await;
    let sent = user_text(&stub, 1);
    assert!(
        sent.starts_with("[The operator used the prompt `summarize` of MCP server `demo_alpha` with topic=rust traits."),
        "{sent}"
    );
    assert!(sent.contains("rust traits"), "{sent}");
    stop(handle).await;
    env.assert_no_leaks();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deny_read_policy_holds_against_the_operators_attachment() {
    let env = TestEnv::new();
    let stub = ModelStub::start(vec![text("ok")]).await;
    let mut handle = start(
        &env,
        &stub,
        "[servers.demo_alpha.resources]\nread = \"deny\"\n",
    );
    connect(&mut handle, "demo_alpha").await;
    let message = UserMessage {
        text: "see @demo_alpha:demo://demo-alpha/readme".into(),
        resources: vec![attach("demo://demo-alpha/readme")],
    };
    handle
        .commands
        .send(Command::Prompt(message))
        .expect("send");
    let denied = content(&mut handle).await;
    let error = denied.error.expect("denied");
    assert!(error.starts_with("mcp_permission_denied"), "{error}");
    assert!(error.contains("read = \"deny\""), "{error}");
    turn_ended(&mut handle).await;
    let sent = user_text(&stub, 0);
    assert!(!sent.contains("# demo-alpha"), "{sent}");
    assert!(
        sent.contains("could not be read (mcp_permission_denied"),
        "{sent}"
    );
    stop(handle).await;
    env.assert_no_leaks();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_resources_window_reads_for_the_operator_alone_under_the_read_policy() {
    let env = TestEnv::new();
    let stub = ModelStub::start(vec![]).await;
    // `confirm`: the operator's Enter is the approval; no prompt follows.
    let mut handle = start(
        &env,
        &stub,
        "[servers.demo_alpha.resources]\nread = \"confirm\"\n",
    );
    connect(&mut handle, "demo_alpha").await;
    handle
        .commands
        .send(Command::ReadResource(attach("demo://demo-alpha/readme")))
        .expect("send");
    let read = content(&mut handle).await;
    assert_eq!(read.error, None, "{read:?}");
    assert!(
        matches!(&read.source, ContentSource::Read { uri } if uri == "demo://demo-alpha/readme"),
        "{read:?}"
    );
    assert!(
        read.parts.iter().any(|p| p.text.contains("# demo-alpha")),
        "{read:?}"
    );
    assert!(stub.requests().is_empty(), "the model gets none of it");
    stop(handle).await;

    let mut handle = start(
        &env,
        &stub,
        "[servers.demo_alpha.resources]\nread = \"deny\"\n",
    );
    connect(&mut handle, "demo_alpha").await;
    handle
        .commands
        .send(Command::ReadResource(attach("demo://demo-alpha/readme")))
        .expect("send");
    let denied = content(&mut handle).await;
    let error = denied.error.clone().expect("denied");
    assert!(error.starts_with("mcp_permission_denied"), "{error}");
    assert!(error.contains("read = \"deny\""), "{error}");
    assert!(denied.parts.is_empty(), "{denied:?}");
    stop(handle).await;
    env.assert_no_leaks();
}
