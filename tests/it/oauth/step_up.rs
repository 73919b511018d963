//! A step-up challenge mid-session (issue 21, item 3): after a normal sign-in,
//! one well-formed `403 insufficient_scope` (`scope`, `resource_metadata`,
//! `error_description`) fails only that call, as `mcp_auth_required`, saying how
//! to sign in; the connection and its tools stay (the next call works). It used
//! to end the call as `mcp_connection_lost` and revoke the alias's tools.

use super::*;
use crate::common::headless::{of, run};
use crate::common::model_stub::{ModelStub, Reply};
use crate::hidden_text::tool_calls;
use crate::provider_openai::wire;
use serde_json::json as j;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_step_up_challenge_fails_only_that_call_and_keeps_the_connection() {
    let f = fixture(Knobs::default(), &["--oauth-step-up", "reset"], 10_000);
    let signed_in = tokio::task::block_in_place(|| login(&f, no_paste));
    assert_eq!(signed_in.status, 0, "{}", signed_in.text());
    let stub = ModelStub::start(vec![
        tool_calls("c", &[("connect_mcp", j!({"alias": "remote"}))]),
        tool_calls("r", &[("mcp__remote__reset", j!({}))]),
        tool_calls("l", &[("mcp__remote__lookup", j!({"key": "apple"}))]),
        Reply::sse(wire::text_reply(&["done"])),
    ])
    .await;
    f.env.config(&format!(
        "[model]\nprovider = \"openai\"\nbase_url = \"{}/v1\"\nmodel = \"gpt-test\"\n\
         [servers.remote]\nurl = \"{}\"\n{POLICY}",
        stub.url(),
        f.url
    ));
    let (out, events) = tokio::task::block_in_place(|| {
        run(
            &f.env,
            &["--prompt", "reset it", "--json", "--approve", "always"],
        )
    });
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let requests = stub.requests();
    assert_eq!(requests.len(), 4, "{requests:#?}");
    let result = |id: &str| -> String {
        requests[3].body["messages"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["role"] == "tool" && m["tool_call_id"] == id)
            .map(|m| m["content"].to_string())
            .unwrap_or_else(|| panic!("no result for {id}"))
    };
    let reset = result("r_0");
    assert!(reset.contains("mcp_auth_required"), "{reset}");
    assert!(reset.contains("The connection is kept"), "{reset}");
    assert!(reset.contains("mcp-harness login remote"), "{reset}");
    assert!(reset.contains("`scopes` under [servers.remote]"), "{reset}");
    let lookup = result("l_0");
    assert!(
        lookup.contains("red"),
        "the connection and its tools stayed: {lookup}"
    );
    assert!(
        of(&events, "registry")
            .iter()
            .all(|e| e["change"] != "revoked" || e["cause"]["kind"] == "shutdown"),
        "nothing was revoked before the run ended: {events:#?}"
    );
    assert_no_token(&f, &format!("{}{}", stdout(&out), stderr(&out)));
}
