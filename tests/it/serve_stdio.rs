//! `mcp-harness serve --stdio`: the gateway spawned by its host, as Claude
//! Code, Cursor or Codex spawn a stdio server — here the official TypeScript
//! SDK's `StdioClientTransport` (pinned in `interop/`) — in front of the real
//! demo-server processes. The same pipeline as over HTTP: what passed it,
//! refusals as local envelopes, every call audited under the client's name,
//! and nothing left running when the host goes.

use serde_json::json;

use crate::common::TestEnv;
use crate::common::interop::Interop;
use crate::serve::{TsClient, client_calls, config, envelope};

#[cfg_attr(
    mcph_no_interop,
    ignore = "npm or python3 is missing: the interop tests install the pinned servers with them (docs/src/testing.md)"
)]
#[test]
fn a_host_that_spawns_serve_stdio_gets_the_same_gateway() {
    let interop = Interop::get();
    let env = TestEnv::new();
    config(&env);
    let mut host = TsClient::stdio(&interop, &env, &[]);
    let connected = host.connect();
    assert_eq!(connected["ok"], true, "{connected}");

    // The `stdio` profile sees every alias, through the whole pipeline.
    let names = host.names();
    for name in ["demo_alpha__lookup", "demo_beta__lookup"] {
        assert!(names.contains(&name.to_string()), "{name}: {names:?}");
    }
    assert!(
        !names.contains(&"demo_beta__reset".to_string()),
        "{names:?}"
    );

    let looked_up = host.call("demo_alpha__lookup", json!({"key": "apple"}));
    assert_eq!(looked_up["isError"], false, "{looked_up}");
    assert!(looked_up.to_string().contains("red"), "{looked_up}");
    let denied = host.call("demo_beta__reset", json!({}));
    assert_eq!(envelope(&denied)["code"], "mcp_permission_denied");
    let unapproved = host.call("demo_alpha__set", json!({"key": "apple", "value": "blue"}));
    let e = envelope(&unapproved);
    assert_eq!(e["code"], "mcp_permission_denied", "{unapproved}");
    let failed = host.call("demo_alpha__fail", json!({}));
    assert_eq!(envelope(&failed)["code"], "mcp_remote_error");
    assert!(!failed.to_string().contains("sk-demo"), "{failed}");

    // The host closes stdin: the harness ends, its servers with it, and the
    // audit log has every call under the client's name.
    assert_eq!(host.ask(json!({"op": "close"}))["ok"], true);
    env.assert_no_leaks();
    let audited = client_calls(&env);
    assert_eq!(audited.len(), 4, "{audited:?}");
    assert!(
        audited.iter().all(|r| r["client"] == "stdio"),
        "{audited:?}"
    );
    let decisions: Vec<&str> = audited
        .iter()
        .map(|r| r["decision"].as_str().unwrap())
        .collect();
    assert_eq!(
        decisions,
        ["allow", "denied_by_policy", "denied", "allow"],
        "{audited:?}"
    );
}

#[cfg_attr(
    mcph_no_interop,
    ignore = "npm or python3 is missing: the interop tests install the pinned servers with them (docs/src/testing.md)"
)]
#[test]
fn serve_stdio_with_a_client_profile_offers_that_profile_alone() {
    let interop = Interop::get();
    let env = TestEnv::new();
    config(&env);
    let mut ci = TsClient::stdio(&interop, &env, &["--client", "ci"]);
    assert_eq!(ci.connect()["ok"], true);
    let names = ci.names();
    assert!(
        names.contains(&"demo_alpha__lookup".to_string()),
        "{names:?}"
    );
    assert!(
        names.iter().all(|n| n.starts_with("demo_alpha__")),
        "{names:?}"
    );
    let foreign = ci.call("demo_beta__lookup", json!({"key": "lima"}));
    assert_eq!(envelope(&foreign)["code"], "mcp_unknown_tool", "{foreign}");
    assert_eq!(ci.ask(json!({"op": "close"}))["ok"], true);
    env.assert_no_leaks();
    assert!(client_calls(&env).iter().all(|r| r["client"] == "ci"));

    // A profile the config does not have: refused before anything starts,
    // naming the ones it has; stdout stays empty (it is the host's stream).
    let out = env.run(&["serve", "--stdio", "--client", "nobody"]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("no client `nobody`"), "{stderr}");
    assert!(stderr.contains("claude, ci"), "{stderr}");
    assert!(
        out.stdout.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}

/// A client without `token_env` comes in over stdio only: with no other,
/// `serve --http` has nobody to let in and says so.
#[test]
fn a_stdio_only_client_is_never_let_in_over_http() {
    let env = TestEnv::new();
    let text = format!(
        "{}[serve.clients.cursor]\nservers = [\"demo_alpha\"]\n",
        env.demo("demo_alpha", "alpha", &[])
    );
    env.config(&text);
    let out = env.run(&["serve", "--http", "127.0.0.1:0"]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("no client can come in over HTTP"),
        "{stderr}"
    );
    env.assert_no_leaks();
}
