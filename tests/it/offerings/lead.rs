//! The Lead's own way to resources, end to end: `list_mcp_resources` and
//! `read_mcp_resource` through `run --json` with a model on loopback.

use serde_json::json;

use crate::common::hubs::DEMO_POLICY;
use crate::common::{TestEnv, stderr};

/// The Lead's built-ins through `run --json` with a model on loopback: the
/// listing, a read under `confirm` (denied by `--approve never`, run by
/// `--approve always`), and a failed read whose server text stays out of the
/// envelope.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_lead_lists_and_reads_resources_under_the_read_policy() {
    use crate::common::headless::{of, run};
    use crate::common::model_stub::ModelStub;
    use crate::provider_openai::wire::{calls, text};
    let readme = "demo://demo-alpha/readme";
    let script = || {
        vec![
            calls(&[("connect_mcp", json!({"alias": "demo_alpha"}))]),
            calls(&[
                ("list_mcp_resources", json!({"alias": "demo_alpha"})),
                (
                    "read_mcp_resource",
                    json!({"alias": "demo_alpha", "uri": readme}),
                ),
                (
                    "read_mcp_resource",
                    json!({"alias": "demo_alpha", "uri": "demo://demo-alpha/broken"}),
                ),
            ]),
            text("done"),
        ]
    };
    for approve in ["never", "always"] {
        let env = TestEnv::new();
        let stub = ModelStub::start(script()).await;
        env.config(&format!(
            "[model]\nprovider = \"openai\"\nbase_url = \"{}/v1\"\nmodel = \"gpt-test\"\n{}[servers.demo_alpha.tools]\n{DEMO_POLICY}",
            stub.url(),
            env.demo("demo_alpha", "alpha", &[])
        ));
        let (out, events) = tokio::task::block_in_place(|| {
            run(&env, &["--prompt", "read", "--json", "--approve", approve])
        });
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        let results = of(&events, "tool_result");
        let by_id = |id: &str| {
            results
                .iter()
                .find(|r| r["id"] == id)
                .unwrap_or_else(|| panic!("no result {id}: {results:?}"))
        };
        let listing = by_id("call_0_list_mcp_resources");
        assert_eq!(listing["ok"], true, "{listing}");
        let listing = listing["content"].as_str().unwrap();
        assert!(listing.contains("<demo://demo-alpha/readme>"), "{listing}");
        assert!(
            listing.contains("the operator confirms each read"),
            "{listing}"
        );
        let read = by_id("call_1_read_mcp_resource");
        let broken = by_id("call_2_read_mcp_resource");
        if approve == "never" {
            assert_eq!(read["ok"], false, "{read}");
            assert_eq!(read["error"]["code"], "mcp_permission_denied", "{read}");
        } else {
            assert_eq!(read["ok"], true, "{read}");
            assert!(
                read["content"].as_str().unwrap().contains("# demo-alpha"),
                "{read}"
            );
            assert_eq!(broken["error"]["code"], "mcp_remote_error", "{broken}");
            assert!(!broken["error"].to_string().contains("sk-demo"), "{broken}");
        }
        env.assert_no_leaks();
    }
}
