//! Upstreams that go away behind `serve --http`: a Streamable HTTP server
//! killed with SIGKILL while the gateway runs is revoked (there is no process
//! to watch: its broken streams tell), and the outside client — the official
//! TypeScript SDK's, `fixtures/serve_client.mjs` — gets `list_changed`, then a
//! list without that alias's tools, and the local envelope for a call.

use std::process::Child;

use serde_json::json;

use crate::common::TestEnv;
use crate::common::hubs::{DEMO_POLICY, http_demo};
use crate::common::interop::Interop;
use crate::serve::{Gateway, TOKEN_A, TsClient, envelope};

/// An HTTP upstream to kill: which demo server, its tools' policy, a tool
/// to call by its outside name.
struct Upstream {
    server: &'static str,
    tools: String,
    call: &'static str,
    arguments: serde_json::Value,
}

fn demo() -> Upstream {
    Upstream {
        server: "alpha",
        tools: DEMO_POLICY.to_string(),
        call: "web__lookup",
        arguments: json!({"key": "apple"}),
    }
}

/// `demo-server conformance`: it declares no `tools.listChanged`, so a
/// 2026-07-28 connection to it has no `subscriptions/listen` open.
fn conformance() -> Upstream {
    Upstream {
        server: "conformance",
        tools: crate::serve_subscribe::conformance_tools(),
        call: "web__test_simple_text",
        arguments: json!({}),
    }
}

/// `web` over Streamable HTTP at `url`, `demo_beta` over stdio; one client.
fn config(env: &TestEnv, url: &str, tools: &str) {
    env.config(&format!(
        "[servers.web]\nurl = \"{url}\"\n[servers.web.tools]\n{tools}\
         {}[servers.demo_beta.tools]\n{DEMO_POLICY}\
         [serve.clients.claude]\ntoken_env = \"MCPH_TEST_TOKEN_A\"\n",
        env.demo("demo_beta", "beta", &[]),
    ));
}

fn kill(server: &mut Child) {
    // SIGKILL: no goodbye, no closed session; the sockets just go.
    server.kill().unwrap();
    server.wait().unwrap();
}

macro_rules! killed_upstream_tests {
    ($($name:ident: $upstream:expr, $protocol:expr;)*) => {$(
        #[cfg_attr(
            mcph_no_interop,
            ignore = "npm or python3 is missing: the interop tests install the pinned servers with them (docs/src/testing.md)"
        )]
        #[test]
        fn $name() {
            killed_http_upstream($upstream, $protocol);
        }
    )*};
}

killed_upstream_tests! {
    a_killed_handshake_http_upstream_is_revoked_and_the_client_told: demo(), "2025-11-25";
    a_killed_2026_07_28_http_upstream_is_revoked_and_the_client_told: demo(), "2026-07-28";
    a_killed_http_upstream_without_list_changed_is_revoked_at_2026_07_28: conformance(), "2026-07-28";
    a_killed_http_upstream_without_list_changed_is_revoked_at_2025_11_25: conformance(), "2025-11-25";
}

fn killed_http_upstream(upstream: Upstream, protocol: &str) {
    let interop = Interop::get();
    let env = TestEnv::new();
    let (mut server, url) = http_demo(&env, upstream.server, &["--protocol", protocol]);
    config(&env, &url, &upstream.tools);
    let gateway = Gateway::start(&env);
    let mut claude = TsClient::start(&interop, &gateway.url, Some(TOKEN_A), None);
    assert_eq!(claude.connect()["ok"], true);
    let names = claude.names();
    assert!(names.contains(&upstream.call.to_string()), "{names:?}");
    let alive = claude.call(upstream.call, upstream.arguments.clone());
    assert_eq!(alive["isError"], false, "{alive}");

    kill(&mut server);

    // No call is made: the gateway notices by itself and tells the client.
    let changed = claude.ask(json!({"op": "wait_list_changed"}));
    assert!(changed["list_changed"].as_u64().unwrap() >= 1, "{changed}");
    let names = claude.names();
    assert!(names.iter().all(|n| !n.starts_with("web__")), "{names:?}");
    assert!(
        names.contains(&"demo_beta__lookup".to_string()),
        "{names:?}"
    );
    // A host that ignores list_changed gets the local envelope.
    let gone = claude.call(upstream.call, upstream.arguments.clone());
    assert_eq!(envelope(&gone)["code"], "mcp_unknown_tool", "{gone}");
    gateway.stop();
    env.assert_no_leaks();
}
