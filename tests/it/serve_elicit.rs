//! An upstream's question during an outside client's call is the operator's:
//! headless `serve` has none, so it declines — never answers on the user's
//! behalf, never asks the client — and tells the operator on stderr whose
//! call it was and how to answer such questions (the control room). The
//! control room's side is `tui_e2e/control_room_elicit.rs`.

use serde_json::json;

use crate::common::TestEnv;
use crate::common::interop::Interop;
use crate::serve::{Gateway, TOKEN_A, TsClient};

/// demo alpha with its extras (`guarded_set` asks before it stores),
/// speaking `protocol`; one client.
pub(crate) fn config(env: &TestEnv, protocol: &str, clients: &str) {
    env.config(&format!(
        "{}[servers.demo_alpha.tools]\nlookup = \"allow\"\nset = \"allow\"\nreset = \"allow\"\n\
         fail = \"allow\"\nslow = \"allow\"\nresearch = \"allow\"\nguarded_set = \"allow\"\n\
         {clients}",
        env.demo("demo_alpha", "alpha", &["--protocol", protocol, "--extras"]),
    ));
}

#[cfg_attr(
    mcph_no_interop,
    ignore = "npm or python3 is missing: the interop tests install the pinned servers with them (docs/src/testing.md)"
)]
#[test]
fn headless_serve_declines_an_upstreams_question_and_says_how_to_answer_it() {
    let interop = Interop::get();
    // A question by elicitation/create (2025-11-25) and by an input round
    // (2026-07-28): both reach the same elicitor with the client's call.
    for protocol in ["2025-11-25", "2026-07-28"] {
        let env = TestEnv::new();
        config(
            &env,
            protocol,
            "[serve.clients.claude]\ntoken_env = \"MCPH_TEST_TOKEN_A\"\n",
        );
        let gateway = Gateway::start(&env);
        let mut claude = TsClient::start(&interop, &gateway.url, Some(TOKEN_A), None);
        assert_eq!(claude.connect()["ok"], true);
        let result = claude.call(
            "demo_alpha__guarded_set",
            json!({"key": "apple", "value": "gold"}),
        );
        let text = result["content"][0]["text"].as_str().unwrap_or_default();
        assert!(
            text.contains("not stored") && text.contains("decline"),
            "{protocol}: the server heard a decline: {result}"
        );
        let lookup = claude.call("demo_alpha__lookup", json!({"key": "apple"}));
        assert!(
            !lookup.to_string().contains("gold"),
            "{protocol}: nothing stored: {lookup}"
        );
        let stderr = std::fs::read_to_string(env.path("serve.stderr")).unwrap();
        let notice = stderr
            .lines()
            .find(|l| l.contains("asked a question"))
            .unwrap_or_else(|| panic!("{protocol}: no notice on stderr:\n{stderr}"));
        assert!(
            notice.contains("`demo_alpha` asked a question during client claude's call gw-")
                && notice.contains("Store apple = gold?")
                && notice.contains("declined")
                && notice.contains("mcp-harness --serve"),
            "{protocol}: {notice}"
        );
        gateway.stop();
    }
}
