//! `mcp-harness check` against real demo-server processes: the JSON contract, the
//! exposure rules (SPEC rules 3, 4, 5) and the failure codes.

use crate::common::{TestEnv, json, stderr};
use serde_json::Value;

const ALPHA_POLICY: &str = "[servers.demo_alpha.tools]\nlookup = \"allow\"\nset = \"confirm\"\nreset = \"confirm\"\nfail = \"allow\"\nslow = \"allow\"\n";
const BETA_POLICY: &str = "[servers.demo_beta.tools]\nlookup = \"allow\"\nset = \"confirm\"\nreset = \"deny\"\nfail = \"allow\"\nslow = \"allow\"\n";

fn server<'a>(report: &'a Value, alias: &str) -> &'a Value {
    report["servers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["alias"] == alias)
        .unwrap()
}

fn exposed_names(server: &Value) -> Vec<String> {
    server["exposed"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_string())
        .collect()
}

/// A single-server config with `policy` lines under its tools table.
fn single(env: &TestEnv, server: &str, extra: &[&str], policy: &str) -> Value {
    env.config(&format!(
        "{}[servers.s.tools]\n{policy}",
        env.demo("s", server, extra)
    ));
    let out = env.run(&["check", "--json"]);
    let report = json(&out);
    assert_eq!(
        out.status.code(),
        Some(if server_of(&report)["status"] == "ready" {
            0
        } else {
            1
        })
    );
    report
}

fn server_of(report: &Value) -> &Value {
    &report["servers"][0]
}

#[test]
fn alpha_and_beta_both_publish_lookup_under_distinct_exposed_names() {
    let env = TestEnv::new();
    env.config(&format!(
        "{}{ALPHA_POLICY}{}{BETA_POLICY}",
        env.demo("demo_alpha", "alpha", &[]),
        env.demo("demo_beta", "beta", &[])
    ));
    let out = env.run(&["check", "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let report = json(&out);
    let alpha = server(&report, "demo_alpha");
    let beta = server(&report, "demo_beta");
    assert_eq!(alpha["status"], "ready");
    assert_eq!(alpha["error"], Value::Null);
    assert_eq!(alpha["server"]["name"], "demo-alpha");
    assert_eq!(alpha["server"]["protocol_version"], "2026-07-28");
    assert!(exposed_names(alpha).contains(&"mcp__demo_alpha__lookup".to_string()));
    assert!(exposed_names(beta).contains(&"mcp__demo_beta__lookup".to_string()));
    // deny: published, never exposed.
    assert!(
        beta["published"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t["name"] == "reset")
    );
    assert!(!exposed_names(beta).iter().any(|n| n.ends_with("__reset")));
    let set = alpha["exposed"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["remote_name"] == "set")
        .unwrap();
    assert_eq!(set["effect"], "confirm");
    env.assert_no_leaks();
}

#[test]
fn human_output_is_a_readable_table() {
    let env = TestEnv::new();
    env.config(&format!(
        "{}{ALPHA_POLICY}",
        env.demo("demo_alpha", "alpha", &[])
    ));
    let out = env.run(&["check"]);
    assert_eq!(out.status.code(), Some(0));
    let text = crate::common::stdout(&out);
    assert!(text.contains("demo_alpha: ready"), "{text}");
    assert!(text.contains("mcp__demo_alpha__lookup"), "{text}");
    assert!(text.contains("1 of 1 servers ready"), "{text}");
}

#[test]
fn policy_mismatch_lists_missing_and_extra_tools() {
    let env = TestEnv::new();
    let report = single(
        &env,
        "alpha",
        &[],
        "lookup = \"allow\"\nvanished = \"allow\"\n",
    );
    let s = server_of(&report);
    assert_eq!(s["status"], "rejected");
    assert_eq!(s["error"]["code"], "policy_mismatch");
    assert_eq!(
        s["error"]["policy_diff"]["extra"],
        serde_json::json!(["vanished"])
    );
    let missing = s["error"]["policy_diff"]["missing"].as_array().unwrap();
    assert_eq!(missing.len(), 4, "{missing:?}");
    assert!(
        s["error"]["hint"]
            .as_str()
            .unwrap()
            .contains("mcp-harness policy s")
    );
    assert_eq!(s["exposed"], serde_json::json!([]));
    assert_eq!(s["published"].as_array().unwrap().len(), 5);
    env.assert_no_leaks();
}

#[test]
fn names_that_collide_after_normalization_reject_the_connection() {
    let env = TestEnv::new();
    let report = single(
        &env,
        "alpha",
        &["--toolset", "collision"],
        "\"lookup-one\" = \"allow\"\nlookup_one = \"allow\"\n",
    );
    let s = server_of(&report);
    assert_eq!(s["error"]["code"], "name_collision", "{s}");
    let message = s["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("lookup-one") && message.contains("lookup_one"),
        "{message}"
    );
    // Denying one of them is the operator's way out.
    let report = single(
        &env,
        "alpha",
        &["--toolset", "collision"],
        "\"lookup-one\" = \"deny\"\nlookup_one = \"allow\"\n",
    );
    assert_eq!(server_of(&report)["status"], "ready");
    assert_eq!(exposed_names(server_of(&report)), ["mcp__s__lookup_one"]);
}

#[test]
fn exposed_names_over_64_characters_reject_the_connection() {
    let env = TestEnv::new();
    let long = "a_very_long_tool_name_that_keeps_going_and_going_and_going_forever_x";
    let report = single(
        &env,
        "alpha",
        &["--toolset", "long-name"],
        "lookup = \"allow\"\n",
    );
    let s = server_of(&report);
    // The policy does not list the long tool: names are checked first, then policy.
    assert_eq!(s["error"]["code"], "name_too_long", "{s}");
    assert!(
        s["error"]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t.as_str().unwrap().len() >= 64)
    );
    let _ = long;
}

#[test]
fn schema_rules_reject_the_connection() {
    let env = TestEnv::new();
    let cases = [
        (
            "not-object",
            "lookup = \"allow\"\nbad = \"allow\"\n",
            "schema_not_object",
        ),
        (
            "external-ref",
            "lookup = \"allow\"\nremote = \"allow\"\nlocal_file = \"allow\"\n",
            "schema_external_ref",
        ),
        (
            "invalid-schema",
            "lookup = \"allow\"\nbroken = \"allow\"\n",
            "schema_invalid",
        ),
    ];
    for (toolset, policy, code) in cases {
        let report = single(&env, "alpha", &["--toolset", toolset], policy);
        assert_eq!(
            server_of(&report)["error"]["code"],
            code,
            "{toolset}: {report}"
        );
        assert_eq!(server_of(&report)["exposed"], serde_json::json!([]));
    }
    let report = single(
        &env,
        "alpha",
        &["--toolset", "local-ref"],
        "lookup = \"allow\"\n",
    );
    assert_eq!(server_of(&report)["status"], "ready", "{report}");
    env.assert_no_leaks();
}

#[test]
fn odd_names_are_normalized_and_exposed() {
    let env = TestEnv::new();
    let report = single(
        &env,
        "alpha",
        &["--toolset", "weird-names"],
        "\"files/read.all\" = \"allow\"\n\"get value\" = \"allow\"\n\"déjà-vu\" = \"confirm\"\n",
    );
    let mut names = exposed_names(server_of(&report));
    names.sort();
    assert_eq!(
        names,
        [
            "mcp__s__d_j__vu",
            "mcp__s__files_read_all",
            "mcp__s__get_value"
        ]
    );
}

#[test]
fn broken_listings_are_errors_not_hangs() {
    let env = TestEnv::new();
    let cases = [
        ("malformed-tool", "invalid_tool_definition"),
        ("endless-pagination", "pagination_limit"),
        ("repeat-cursor", "pagination_limit"),
        ("duplicate-across-pages", "duplicate_tool"),
    ];
    for (scenario, code) in cases {
        env.config(&format!(
            "[limits]\nmax_list_pages = 50\n{}[servers.s.tools]\n",
            env.demo("s", "hostile", &["--scenario", scenario])
        ));
        let report = json(&env.run(&["check", "--json"]));
        assert_eq!(
            server_of(&report)["error"]["code"],
            code,
            "{scenario}: {report}"
        );
    }
    // The malformed tools are named (or located) in the message.
    env.config(&format!(
        "{}[servers.s.tools]\n",
        env.demo("s", "hostile", &["--scenario", "malformed-tool"])
    ));
    let report = json(&env.run(&["check", "--json"]));
    let message = server_of(&report)["error"]["message"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(message.contains("no_schema"), "{message}");
    assert!(message.contains("tool #3 on page 1"), "{message}");
    env.assert_no_leaks();
}

#[test]
fn failures_have_codes_and_show_server_output() {
    let env = TestEnv::new();
    env.config("[servers.s]\ncommand = \"/nonexistent/mcp-server\"\n");
    let s = json(&env.run(&["check", "--json"]))["servers"][0].clone();
    assert_eq!(
        (s["status"].as_str(), s["error"]["code"].as_str()),
        (Some("failed"), Some("spawn_failed"))
    );

    env.config("[servers.s]\ncommand = \"sh\"\nargs = [\"-c\", \"echo 'cannot open database' >&2; exit 3\"]\n");
    let s = json(&env.run(&["check", "--json"]))["servers"][0].clone();
    assert_eq!(s["error"]["code"], "initialize_failed", "{s}");
    assert!(
        s["error"]["message"]
            .as_str()
            .unwrap()
            .contains("exited with status 3"),
        "{s}"
    );
    assert_eq!(
        s["server_output"],
        serde_json::json!(["cannot open database"])
    );

    env.config(&format!(
        "{}connect_timeout_ms = 1500\n[servers.s.tools]\n",
        env.demo("s", "alpha", &["--fault", "hang-on-initialize"])
    ));
    let s = json(&env.run(&["check", "--json"]))["servers"][0].clone();
    assert_eq!(s["error"]["code"], "mcp_timeout", "{s}");

    // connect_timeout_ms bounds the listing too: five 1 s pages do not fit in 2.5 s.
    env.config(&format!(
        "{}connect_timeout_ms = 2500\n[servers.s.tools]\n{}",
        env.demo(
            "s",
            "alpha",
            &["--page-size", "1", "--fault", "slow-list=1000"]
        ),
        ALPHA_POLICY.trim_start_matches("[servers.demo_alpha.tools]\n")
    ));
    let s = json(&env.run(&["check", "--json"]))["servers"][0].clone();
    assert_eq!(s["error"]["code"], "mcp_timeout", "{s}");
    assert!(
        s["error"]["message"]
            .as_str()
            .unwrap()
            .contains("tools/list within 2500 ms"),
        "{s}"
    );
    env.assert_no_leaks();
}

#[test]
fn unset_variables_are_named_and_values_never_printed() {
    let env = TestEnv::new();
    env.config(
        "[servers.s]\ncommand = \"sh\"\nenv = { TOKEN = \"${MCP_HARNESS_TEST_UNSET_VAR}\" }\n",
    );
    let s = json(&env.run(&["check", "--json"]))["servers"][0].clone();
    assert_eq!(s["error"]["code"], "spawn_failed");
    let message = s["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("MCP_HARNESS_TEST_UNSET_VAR") && message.contains("servers.s.env.TOKEN"),
        "{message}"
    );
}

#[test]
fn bad_config_exits_2_naming_file_and_key() {
    let env = TestEnv::new();
    let path =
        env.config("[servers.s]\ncommand = \"x\"\n[servers.s.tools]\nlookup = \"sometimes\"\n");
    let out = env.run(&["check"]);
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(err.contains(&path.display().to_string()), "{err}");
    assert!(err.contains("servers.s.tools.lookup"), "{err}");
    assert!(err.contains("allow"), "{err}");
}

#[test]
fn the_printed_policy_block_makes_check_pass() {
    let env = TestEnv::new();
    let server = env.demo("s", "alpha", &["--toolset", "weird-names"]);
    env.config(&server);
    // Without a policy the connection is rejected…
    let before = json(&env.run(&["check", "--json"]));
    assert_eq!(before["servers"][0]["error"]["code"], "policy_mismatch");
    // …`policy` prints exactly what the server publishes, every tool "confirm"…
    let out = env.run(&["policy", "s"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        crate::common::stderr(&out)
    );
    let block = crate::common::stdout(&out);
    let parsed: toml::Table = toml::from_str(&block).expect("valid TOML");
    let tools = parsed["servers"]["s"]["tools"].as_table().unwrap();
    let mut names: Vec<&str> = tools.keys().map(String::as_str).collect();
    names.sort();
    assert_eq!(names, ["déjà-vu", "files/read.all", "get value"]);
    assert!(tools.values().all(|v| v.as_str() == Some("confirm")));
    // …and pasting it in is all it takes.
    env.config(&format!("{server}{block}"));
    let after = json(&env.run(&["check", "--json"]));
    assert_eq!(after["servers"][0]["status"], "ready", "{after}");
    assert!(
        after["servers"][0]["exposed"]
            .as_array()
            .unwrap()
            .iter()
            .all(|t| t["effect"] == "confirm")
    );
    env.assert_no_leaks();
}
