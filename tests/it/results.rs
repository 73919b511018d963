//! Results of any size: the whole text saved, `read_result` paging through it
//! to the last byte, and a results directory that cannot be written.

use mcp_harness::mcp::{CallIdentity, FlagApprover};
use serde_json::json;

/// A page of a saved result as the model gets it (`read_result`).
fn read_result(
    hub: &mcp_harness::mcp::Hub,
    arguments: &serde_json::Value,
) -> Result<String, mcp_harness::mcp::ToolError> {
    mcp_harness::agent::tools::lead_only::read_result(
        hub,
        arguments,
        &mcp_harness::mcp::CallIdentity::lead("read_1"),
    )
    .0
}

use crate::common::TestEnv;
use crate::common::hubs::{DEMO_POLICY, hub_builder};

fn config(env: &TestEnv, bytes: usize) -> String {
    format!(
        "{}[servers.s.tools]\n{DEMO_POLICY}",
        env.demo("s", "alpha", &["--fault", &format!("huge-result={bytes}")])
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn read_result_pages_through_the_whole_text() {
    let env = TestEnv::new();
    let (hub, _events) = hub_builder(&env, &config(&env, 324_000));
    let hub = hub.results_dir(env.path("results")).build();
    hub.connect("s").await.unwrap().outcome.unwrap();
    let outcome = hub
        .call_as(
            &hub.snapshot(),
            "mcp__s__lookup",
            json!({"key": "apple"}),
            &FlagApprover { approve: false },
            &CallIdentity::lead("toolu_01"),
        )
        .await;
    let output = outcome.result.unwrap();
    let head = output.content[0]["text"].as_str().unwrap().to_string();
    let whole = std::fs::read_to_string(env.path("results/toolu_01.txt")).unwrap();
    assert_eq!(whole.len(), 324_000);
    // Page on from where the head stopped, as the notice says, to the end.
    let mut read = head.clone();
    let mut offset = head.len() as u64;
    let mut pages = 0;
    while offset < whole.len() as u64 {
        let page = read_result(&hub, &json!({"call_id": "toolu_01", "offset": offset})).unwrap();
        let (header, rest) = page.split_once('\n').unwrap();
        assert!(
            header.starts_with("[results/toolu_01.txt: bytes "),
            "{header}"
        );
        let body = rest.split("\n[mcp-harness: ").next().unwrap();
        read.push_str(body);
        offset += body.len() as u64;
        pages += 1;
        assert!(pages < 10, "read_result does not advance");
    }
    assert_eq!(read, whole);
    let past = read_result(&hub, &json!({"call_id": "toolu_01", "offset": 999_999})).unwrap_err();
    assert!(past.message.contains("past the end"), "{past:?}");
    let unknown = read_result(&hub, &json!({"call_id": "nope"})).unwrap_err();
    assert!(unknown.message.contains("no saved result"), "{unknown:?}");
    hub.shutdown().await;
    env.assert_no_leaks();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unwritable_results_dir_is_said_and_the_head_still_arrives() {
    let env = TestEnv::new();
    let (hub, _events) = hub_builder(&env, &config(&env, 300_000));
    // A file where the directory should be: nothing can be created in it.
    std::fs::write(env.path("results"), "").unwrap();
    let hub = hub.results_dir(env.path("results")).build();
    hub.connect("s").await.unwrap().outcome.unwrap();
    let output = hub
        .call_as(
            &hub.snapshot(),
            "mcp__s__lookup",
            json!({"key": "apple"}),
            &FlagApprover { approve: false },
            &CallIdentity::lead("c1"),
        )
        .await
        .result
        .unwrap();
    assert!(output.truncated);
    let notice = output.content.last().unwrap()["text"].as_str().unwrap();
    assert!(notice.contains("The rest is not saved:"), "{notice}");
    assert_eq!(output.content[0]["text"].as_str().unwrap().len(), 100_000);
    hub.shutdown().await;
    env.assert_no_leaks();
}
