//! Resources and prompts through `mcp-harness serve --http`, under their read
//! policy, driven by the official TypeScript SDK's client (`serve.rs` has the
//! gateway and the client; `tests/it/fixtures/serve_client.mjs`).

use serde_json::{Value, json};

use crate::common::interop::Interop;
use crate::common::{TestEnv, tagged_processes};
use crate::serve::{Gateway, TOKEN_A, TOKEN_B, TsClient, audit_records};

const ALPHA: &str = "mcp-harness://demo_alpha/demo://demo-alpha";

/// alpha: resources read `allow`; beta: `deny`; a hostile alias whose every
/// text carries invisible characters, read `allow`. `claude` sees them all,
/// `ci` only demo_alpha.
fn config(env: &TestEnv, alpha_read: &str) {
    let tools = |reset: &str| {
        format!(
            "lookup = \"allow\"\nset = \"confirm\"\nreset = \"{reset}\"\nfail = \"allow\"\nslow = \"allow\"\n"
        )
    };
    env.config(&format!(
        "{}[servers.demo_alpha.tools]\n{}[servers.demo_alpha.resources]\nread = \"{alpha_read}\"\n\
         {}[servers.demo_beta.tools]\n{}[servers.demo_beta.resources]\nread = \"deny\"\n\
         {}[servers.hostile.tools]\n{}[servers.hostile.resources]\nread = \"allow\"\n\
         [serve.clients.claude]\ntoken_env = \"MCPH_TEST_TOKEN_A\"\n\
         [serve.clients.ci]\ntoken_env = \"MCPH_TEST_TOKEN_B\"\nservers = [\"demo_alpha\"]\n",
        env.demo("demo_alpha", "alpha", &[]),
        tools("confirm"),
        env.demo("demo_beta", "beta", &[]),
        tools("deny"),
        env.demo("hostile", "alpha", &["--fault", "hidden-text"]),
        tools("confirm"),
    ));
}

fn uris(listed: &Value, key: &str, field: &str) -> Vec<String> {
    listed[key]
        .as_array()
        .unwrap_or_else(|| panic!("no {key}: {listed}"))
        .iter()
        .map(|r| r[field].as_str().unwrap().to_string())
        .collect()
}

fn read(client: &mut TsClient, uri: &str) -> Value {
    client.ask(json!({"op": "read", "uri": uri}))
}

/// A refusal: a JSON-RPC error whose data is the harness's envelope.
fn refusal(answer: &Value, rpc_code: i64, envelope_code: &str) {
    assert_eq!(answer["code"], rpc_code, "{answer}");
    assert_eq!(answer["data"]["code"], envelope_code, "{answer}");
    assert!(answer["data"]["message"].as_str().is_some(), "{answer}");
}

fn invisible(text: &str) -> bool {
    text.chars().any(|c| {
        matches!(c as u32, 0x200B..=0x200F | 0x2060..=0x2064 | 0xFE00..=0xFE0F | 0xE0000..=0xE007F)
    })
}

#[cfg_attr(
    mcph_no_interop,
    ignore = "npm or python3 is missing: the interop tests install the pinned servers with them (docs/src/testing.md)"
)]
#[test]
fn serve_offers_resources_and_prompts_under_their_read_policy() {
    let interop = Interop::get();
    let env = TestEnv::new();
    config(&env, "allow");
    let gateway = Gateway::start(&env);
    let mut claude = TsClient::start(&interop, &gateway.url, Some(TOKEN_A), None);
    assert_eq!(claude.connect()["ok"], true);
    let caps = claude.ask(json!({"op": "capabilities"}));
    assert_eq!(
        caps["capabilities"]["resources"]["listChanged"], true,
        "{caps}"
    );
    assert_eq!(
        caps["capabilities"]["prompts"]["listChanged"], true,
        "{caps}"
    );

    // alpha's resources under outside URIs; beta's (read = deny) not at all.
    let listed = claude.ask(json!({"op": "resources"}));
    let resources = uris(&listed, "resources", "uri");
    for uri in [format!("{ALPHA}/readme"), format!("{ALPHA}/table")] {
        assert!(resources.contains(&uri), "{uri} missing: {resources:?}");
    }
    assert!(
        resources.iter().all(|u| !u.contains("demo_beta")),
        "{resources:?}"
    );
    let templates = uris(&listed, "templates", "uriTemplate");
    assert!(
        templates.contains(&format!("{ALPHA}/entry/{{key}}")),
        "{templates:?}"
    );
    // The hostile server's texts arrive without their invisible characters,
    // and a URI carrying them (its readme) is not offered at all.
    assert!(!invisible(&listed.to_string()), "{listed}");
    assert!(
        resources
            .iter()
            .any(|u| u == "mcp-harness://hostile/demo://demo-alpha/table"),
        "{resources:?}"
    );
    assert!(
        !resources
            .iter()
            .any(|u| u.starts_with("mcp-harness://hostile/demo://demo-alpha/readme")),
        "{resources:?}"
    );

    let readme = read(&mut claude, &format!("{ALPHA}/readme"));
    let content = &readme["result"]["contents"][0];
    assert_eq!(content["uri"], format!("{ALPHA}/readme"), "{readme}");
    assert!(
        content["text"].as_str().unwrap().contains("demo-alpha"),
        "{readme}"
    );
    // A template filled in by the client.
    let entry = read(&mut claude, &format!("{ALPHA}/entry/apple"));
    assert!(
        entry["result"]["contents"][0]["text"]
            .as_str()
            .unwrap()
            .contains("red"),
        "{entry}"
    );
    // Refused: a deny alias, an upstream URI given bare, a URI nothing lists,
    // and an upstream failure in the harness's words (its secret withheld).
    refusal(
        &read(
            &mut claude,
            "mcp-harness://demo_beta/demo://demo-beta/readme",
        ),
        -32600,
        "mcp_permission_denied",
    );
    refusal(
        &read(&mut claude, "demo://demo-alpha/readme"),
        -32002,
        "mcp_unknown_tool",
    );
    refusal(
        &read(&mut claude, &format!("{ALPHA}/nothing-here")),
        -32002,
        "mcp_unknown_tool",
    );
    let broken = read(&mut claude, &format!("{ALPHA}/broken"));
    refusal(&broken, -32603, "mcp_remote_error");
    assert!(!broken.to_string().contains("sk-demo"), "{broken}");

    // Prompts, named ALIAS__NAME; a get with its arguments, and without.
    let prompts = claude.ask(json!({"op": "prompts"}));
    let names = uris(&prompts, "prompts", "name");
    for name in ["demo_alpha__summarize", "demo_beta__quiz"] {
        assert!(names.contains(&name.to_string()), "{names:?}");
    }
    assert!(!invisible(&prompts.to_string()), "{prompts}");
    let got = claude.ask(json!({"op": "get_prompt", "name": "demo_alpha__summarize",
        "arguments": {"topic": "apple"}}));
    assert!(
        got["result"]["messages"][0]["content"]["text"]
            .as_str()
            .unwrap()
            .contains("apple"),
        "{got}"
    );
    let missing = claude.ask(json!({"op": "get_prompt", "name": "demo_alpha__summarize"}));
    refusal(&missing, -32602, "mcp_invalid_arguments");
    let hostile = claude.ask(json!({"op": "get_prompt", "name": "hostile__quiz"}));
    assert!(hostile.get("result").is_some(), "{hostile}");
    assert!(!invisible(&hostile.to_string()), "{hostile}");

    // Another client's profile: demo_alpha only; beta's URIs are not found
    // (the same answer as for a URI nobody lists), its prompts not listed.
    let mut ci = TsClient::start(&interop, &gateway.url, Some(TOKEN_B), None);
    assert_eq!(ci.connect()["ok"], true);
    let listed = ci.ask(json!({"op": "resources"}));
    assert!(
        uris(&listed, "resources", "uri")
            .iter()
            .all(|u| u.starts_with(ALPHA)),
        "{listed}"
    );
    refusal(
        &read(&mut ci, "mcp-harness://demo_beta/demo://demo-beta/readme"),
        -32002,
        "mcp_unknown_tool",
    );
    let prompts = ci.ask(json!({"op": "prompts"}));
    assert!(
        uris(&prompts, "prompts", "name")
            .iter()
            .all(|n| n.starts_with("demo_alpha__")),
        "{prompts}"
    );
    let foreign = ci.ask(json!({"op": "get_prompt", "name": "demo_beta__quiz"}));
    refusal(&foreign, -32602, "mcp_unknown_tool");

    // Disconnecting an upstream (its process killed): the client whose
    // prompts came from it is told; ci, who never saw it, is not asked to.
    let beta = tagged_processes(&env.tag)
        .into_iter()
        .filter(|pid| {
            let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
            let args: Vec<&[u8]> = cmdline.split(|b| *b == 0).collect();
            args.contains(&b"beta".as_slice())
                && args.contains(&b"demo-server".as_slice())
                && !args.contains(&b"__shim".as_slice())
        })
        .collect::<Vec<_>>();
    assert_eq!(beta.len(), 1, "one demo_beta server: {beta:?}");
    std::process::Command::new("kill")
        .args(["-9", &beta[0].to_string()])
        .status()
        .unwrap();
    let changed = claude.ask(json!({"op": "wait_list_changed", "of": "prompts"}));
    assert!(changed["list_changed"].as_u64().unwrap() >= 1, "{changed}");
    let prompts = claude.ask(json!({"op": "prompts"}));
    assert!(
        uris(&prompts, "prompts", "name")
            .iter()
            .all(|n| !n.starts_with("demo_beta__")),
        "{prompts}"
    );
    gateway.stop();

    // Every read and get is audited under the client's name, by method.
    let records = audit_records(&env, "client_call");
    let readme = records
        .iter()
        .find(|r| r["method"] == "resources/read" && r["tool"] == format!("{ALPHA}/readme"))
        .unwrap_or_else(|| panic!("no record of the readme's read: {records:#?}"));
    assert_eq!(readme["client"], "claude");
    assert_eq!(readme["alias"], "demo_alpha");
    assert_eq!(readme["decision"], "allow");
    assert!(
        readme["timing"]["gateway_ms"].as_f64().is_some(),
        "{readme}"
    );
    assert!(
        records.iter().any(|r| r["method"] == "prompts/get"
            && r["client"] == "ci"
            && r["outcome"]["code"] == "mcp_unknown_tool"),
        "{records:#?}"
    );
    env.assert_no_leaks();
}

/// `confirm` reads go to the approver as the client's: headless, `--approve
/// never` refuses them saying how to approve, and `--approve always` lets
/// them through.
#[cfg_attr(
    mcph_no_interop,
    ignore = "npm or python3 is missing: the interop tests install the pinned servers with them (docs/src/testing.md)"
)]
#[test]
fn serve_asks_the_approver_for_a_confirm_read() {
    let interop = Interop::get();
    for (flags, approved) in [(&[][..], false), (&["--approve", "always"][..], true)] {
        let env = TestEnv::new();
        config(&env, "confirm");
        let gateway = Gateway::start_with(&env, flags);
        let mut claude = TsClient::start(&interop, &gateway.url, Some(TOKEN_A), None);
        assert_eq!(claude.connect()["ok"], true);
        let answer = read(&mut claude, &format!("{ALPHA}/readme"));
        if approved {
            assert!(answer.get("result").is_some(), "{answer}");
        } else {
            refusal(&answer, -32600, "mcp_permission_denied");
            assert!(
                answer["data"]["message"]
                    .as_str()
                    .unwrap()
                    .contains("--approve always"),
                "{answer}"
            );
        }
        gateway.stop();
        let records = audit_records(&env, "client_call");
        let read = records
            .iter()
            .find(|r| r["method"] == "resources/read")
            .unwrap_or_else(|| panic!("no read record: {records:#?}"));
        assert_eq!(
            read["decision"],
            if approved { "approved" } else { "denied" },
            "{read}"
        );
        env.assert_no_leaks();
    }
}
