//! `completion/complete` through `mcp-harness serve --http`, driven by the
//! official TypeScript SDK's client: a prompt argument and a resource
//! template resolved under their outside names in what the asking client is
//! offered, answered by `demo-server conformance`, values capped at 100.

use serde_json::{Value, json};

use crate::common::TestEnv;
use crate::common::hubs::http_demo;
use crate::common::interop::Interop;
use crate::serve::{Gateway, TOKEN_A, TOKEN_B, TsClient};
use crate::serve_conformance::every_tool_allowed;

const PROMPT: &str = "conf__test_prompt_with_arguments";
const TEMPLATE: &str = "mcp-harness://conf/test://template/{id}/data";

fn complete(client: &mut TsClient, reference: Value, argument: &str, value: &str) -> Value {
    client.ask(json!({
        "op": "complete",
        "ref": reference,
        "argument": {"name": argument, "value": value},
    }))
}

fn values(answer: &Value) -> Vec<String> {
    answer["result"]["completion"]["values"]
        .as_array()
        .unwrap_or_else(|| panic!("no values: {answer}"))
        .iter()
        .map(|v| v.as_str().unwrap().to_string())
        .collect()
}

#[cfg_attr(
    mcph_no_interop,
    ignore = "npm or python3 is missing: the interop tests install the pinned servers with them (docs/src/testing.md)"
)]
#[test]
fn serve_passes_completions_on_under_outside_names_to_the_clients_offered_them() {
    let interop = Interop::get();
    let env = TestEnv::new();
    let (mut upstream, url) = http_demo(&env, "conformance", &[]);
    // `claude` sees the conformance upstream (it declares completions);
    // `ci` only demo_alpha (it does not).
    env.config(&format!(
        "[servers.conf]\nurl = \"{url}\"\n[servers.conf.tools]\n{}\
         [servers.conf.resources]\nread = \"allow\"\n\
         {}[servers.demo_alpha.tools]\nlookup = \"allow\"\nset = \"allow\"\nreset = \"allow\"\n\
         fail = \"allow\"\nslow = \"allow\"\n\
         [serve.clients.claude]\ntoken_env = \"MCPH_TEST_TOKEN_A\"\n\
         [serve.clients.ci]\ntoken_env = \"MCPH_TEST_TOKEN_B\"\nservers = [\"demo_alpha\"]\n",
        every_tool_allowed(),
        env.demo("demo_alpha", "alpha", &[]),
    ));
    let gateway = Gateway::start(&env);
    let mut claude = TsClient::start(&interop, &gateway.url, Some(TOKEN_A), None);
    assert_eq!(claude.connect()["ok"], true);
    let caps = claude.ask(json!({"op": "capabilities"}));
    assert_eq!(
        caps["capabilities"]["completions"],
        json!({}),
        "{caps}\n{}",
        std::fs::read_to_string(env.path("serve.stderr")).unwrap_or_default()
    );

    let prompt = json!({"type": "ref/prompt", "name": PROMPT});
    let answer = complete(&mut claude, prompt.clone(), "arg1", "par");
    assert_eq!(values(&answer), ["paris", "park", "party"], "{answer}");

    // More than the spec's 100 upstream: the first 100, and that there are more.
    let many = complete(&mut claude, prompt.clone(), "arg1", "many-");
    let got = values(&many);
    assert_eq!(got.len(), 100, "{many}");
    assert_eq!(got[0], "many-000");
    assert_eq!(many["result"]["completion"]["hasMore"], true, "{many}");
    assert_eq!(many["result"]["completion"]["total"], 150, "{many}");

    // A template by its outside uriTemplate, as listed.
    let template = complete(
        &mut claude,
        json!({"type": "ref/resource", "uri": TEMPLATE}),
        "id",
        "test",
    );
    assert_eq!(values(&template), ["test-value"], "{template}");

    // Refused locally, nothing sent: the upstream template given bare (not
    // what is listed), an argument the prompt does not take.
    let bare = complete(
        &mut claude,
        json!({"type": "ref/resource", "uri": "test://template/{id}/data"}),
        "id",
        "test",
    );
    assert_eq!(bare["code"], -32002, "{bare}");
    assert_eq!(bare["data"]["code"], "mcp_unknown_tool", "{bare}");
    let unknown = complete(&mut claude, prompt.clone(), "nope", "x");
    assert_eq!(unknown["code"], -32602, "{unknown}");
    assert_eq!(
        unknown["data"]["code"], "mcp_invalid_arguments",
        "{unknown}"
    );

    // Another client's profile: no completions declared, the prompt unknown.
    let mut ci = TsClient::start(&interop, &gateway.url, Some(TOKEN_B), None);
    assert_eq!(ci.connect()["ok"], true);
    let caps = ci.ask(json!({"op": "capabilities"}));
    assert!(caps["capabilities"].get("completions").is_none(), "{caps}");
    let other = complete(&mut ci, prompt, "arg1", "par");
    assert_eq!(other["code"], -32602, "{other}");
    assert_eq!(other["data"]["code"], "mcp_unknown_tool", "{other}");

    let _ = upstream.kill();
    let _ = upstream.wait();
    gateway.stop();
}
