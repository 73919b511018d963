//! Tool search for large tool sets: over `max_tools_in_request`, a request
//! carries the tools used or found lately plus `search_tools`; what a search
//! finds is offered from the next request, never in the same reply (rule 6).

use std::sync::Arc;

use crate::common::TestEnv;
use crate::common::lead_session::{tool_names, tool_result};
use crate::common::model_stub::ModelStub;
use crate::provider_openai::wire::{calls, text};
use mcp_harness::agent::events::{AgentEvent, TurnEnd};
use mcp_harness::config::{self, ConfigSource};
use mcp_harness::mcp::FlagApprover;
use mcp_harness::session::{self, SessionEvent, SessionOptions};
use serde_json::json;
use tokio_util::sync::CancellationToken;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn found_tools_join_the_next_request_only() {
    let env = TestEnv::new();
    let stub = ModelStub::start(vec![
        calls(&[("connect_mcp", json!({"alias": "big"}))]),
        calls(&[
            ("search_tools", json!({"query": "tool_00042"})),
            ("mcp__big__tool_00042", json!({"key": "x"})),
        ]),
        calls(&[("mcp__big__tool_00042", json!({"key": "x"}))]),
        text("done"),
    ])
    .await;
    let policy: String = (0..200)
        .map(|i| format!("tool_{i:05} = \"allow\"\n"))
        .collect();
    let text = format!(
        "[limits]\nmax_tools_in_request = 10\n[model]\nprovider = \"openai\"\nbase_url = \"{}/v1\"\nmodel = \"gpt-test\"\n{}[servers.big.tools]\n{policy}",
        stub.url(),
        env.demo("big", "alpha", &["--tools", "200"]),
    );
    let config = config::parse(&env.fill(&text), ConfigSource::Embedded).expect("config");
    let options = SessionOptions {
        resume: None,
        persist: false,
        workspace: Some(env.dir.path().to_path_buf()),
        data_dir: Some(env.path("data")),
    };
    let mut s = session::start(&config, Arc::new(FlagApprover { approve: true }), options)
        .expect("session");
    let end = s.lead.send("find tool 42", &CancellationToken::new()).await;
    assert_eq!(end, TurnEnd::Completed);
    let requests = stub.requests();
    assert_eq!(requests.len(), 4);
    let mcp = |i: usize| -> Vec<String> {
        tool_names(&requests[i])
            .into_iter()
            .filter(|n| n.starts_with("mcp__"))
            .collect()
    };
    // Before the connect: no MCP tools, no search.
    assert!(!tool_names(&requests[0]).contains(&"search_tools".to_string()));
    // 200 tools > 10: none used yet, so only search_tools stands for them.
    assert!(tool_names(&requests[1]).contains(&"search_tools".to_string()));
    assert!(mcp(1).is_empty(), "{:?}", mcp(1));
    let found = tool_result(&requests[2], "call_0_search_tools");
    assert!(
        found.as_str().unwrap().contains("- mcp__big__tool_00042:"),
        "{found}"
    );
    // The same reply cannot call what its search found.
    let early = &tool_result(&requests[2], "call_1_mcp__big__tool_00042")["error"];
    assert_eq!(early["code"], "mcp_unknown_tool", "{early}");
    assert!(
        early["message"]
            .as_str()
            .unwrap()
            .contains("offered from your next request")
    );
    // The next request carries it, and the call works.
    // (the best match first; the rest of the ten best matches with it)
    assert_eq!(mcp(2)[0], "mcp__big__tool_00042");
    assert!(mcp(2).len() <= 10, "{:?}", mcp(2));
    let ok = tool_result(&requests[3], "call_0_mcp__big__tool_00042");
    assert!(ok.as_str().unwrap().contains("tool_00042 called"), "{ok}");
    // The operator sees what each request offered.
    let mut offers = Vec::new();
    while let Ok(event) = s.events.try_recv() {
        if let SessionEvent::Agent(AgentEvent::Request {
            offered,
            searched_from,
            ..
        }) = event
        {
            offers.push((offered.len(), searched_from));
        }
    }
    assert_eq!(offers.len(), 4, "{offers:?}");
    assert_eq!(offers[0].1, None);
    assert_eq!(offers[1].1, Some(200));
    assert!(offers[1].0 < 20, "{offers:?}");
    s.hub.shutdown().await;
    env.assert_no_leaks();
}

/// The Lead's tool box over a hub with one server of `n` generated tools.
async fn lead_over(
    env: &TestEnv,
    n: usize,
    max_in_request: usize,
) -> (mcp_harness::mcp::Hub, mcp_harness::agent::lead::LeadTools) {
    use mcp_harness::agent::subagent::{AgentSettings, Crew};
    let policy: String = (0..n)
        .map(|i| format!("tool_{i:05} = \"allow\"\n"))
        .collect();
    let text = format!(
        "[limits]\nmax_tools_in_request = {max_in_request}\nmax_tool_tokens_in_request = {}\nconnect_timeout_ms = 60000\n{}[servers.big.tools]\n{policy}",
        max_in_request.max(20_000),
        env.demo(
            "big",
            "alpha",
            &["--tools", &n.to_string(), "--page-size", "500"]
        ),
    );
    let (hub, _events) = crate::common::hubs::hub(env, &text);
    hub.connect("big").await.unwrap().outcome.unwrap();
    let model = mcp_harness::agent::model::select::select(
        None,
        mcp_harness::agent::model::select::Fallback::Demo,
        &|_| None,
    )
    .unwrap()
    .provider;
    let workspace = mcp_harness::agent::tools::readonly::Workspace::new(env.dir.path()).unwrap();
    let settings = AgentSettings {
        max_tokens: 1024,
        context_tokens: 100_000,
        max_steps: 10,
    };
    let crew = Arc::new(Crew::new(
        model,
        Arc::new(FlagApprover { approve: true }),
        mcp_harness::agent::events::AgentEvents::discard(),
        Arc::new(mcp_harness::agent::runner::NoJournal),
        &Default::default(),
        workspace,
        settings,
        Vec::new(),
    ));
    let lead = mcp_harness::agent::lead::LeadTools::new(hub.clone(), crew, &Default::default());
    (hub, lead)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn at_2000_tools_the_tool_section_is_under_a_tenth_of_the_full_list() {
    use mcp_harness::agent::toolbox::ToolBox;
    let env = TestEnv::new();
    let (hub, searching) = lead_over(&env, 2_000, 64).await;
    // A steady state: 64 tools used lately.
    for i in 0..64 {
        searching.remember(&format!("mcp__big__tool_{:05}", i * 31));
    }
    let (other, full) = lead_over(&env, 2_000, 1_000_000).await;
    let size = |lead: &mcp_harness::agent::lead::LeadTools, hub: &mcp_harness::mcp::Hub| {
        let tools = lead.definitions(&hub.snapshot());
        (tools.len(), serde_json::to_string(&tools).unwrap().len())
    };
    let (n_search, bytes_search) = size(&searching, &hub);
    let (n_full, bytes_full) = size(&full, &other);
    eprintln!(
        "2,000 tools: {n_search} tools / {bytes_search} bytes with tool search, {n_full} tools / {bytes_full} bytes without ({:.1}%)",
        100.0 * bytes_search as f64 / bytes_full as f64
    );
    // Every built-in but search_tools (only offered when tools are left out).
    use mcp_harness::agent::tools::{LEAD_ONLY, READ_ONLY};
    let builtins = READ_ONLY.len() + LEAD_ONLY.len();
    assert_eq!(n_full, 2_000 + builtins - 1);
    assert!(n_search <= 64 + builtins, "{n_search}");
    assert!(
        bytes_search * 10 < bytes_full,
        "{bytes_search} of {bytes_full}"
    );
    hub.shutdown().await;
    other.shutdown().await;
    env.assert_no_leaks();
}
