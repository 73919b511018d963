//! The poisoning screen at connect (issue 24, deliverable 2), against a real
//! demo server publishing poisoned definitions beside benign twins: the
//! poisoned ones are flagged `suspicious` (rule, reason, phrase) and never
//! trusted on first use — the connection is refused until the operator accepts
//! them (`mcp-harness pin`) or the policy denies them; the twins pass. Against
//! the demo servers' own tool sets nothing is flagged (the third-party servers
//! are in `interop.rs`).

use serde_json::{Value, json};

use crate::common::headless::{of, run};
use crate::common::{TestEnv, json, stderr, stdout};

const HOSTILE: [&str; 3] = ["add", "send_mail", "save_note"];
const TWINS: [&str; 4] = ["ssh_run", "dotenv", "clock", "fetch_page"];

/// `s`: alpha publishing the `poisoned` tool set; `effect` for the hostile
/// tools, `allow` for the twins; `more` is more of `[servers.s]`.
fn poisoned(env: &TestEnv, effect: &str, more: &str) -> String {
    let mut policy = String::from("[servers.s.tools]\n");
    for tool in HOSTILE {
        policy.push_str(&format!("{tool} = \"{effect}\"\n"));
    }
    for tool in TWINS {
        policy.push_str(&format!("{tool} = \"allow\"\n"));
    }
    format!(
        "{}{more}{policy}",
        env.demo("s", "alpha", &["--toolset", "poisoned"])
    )
}

fn published<'a>(server: &'a Value, name: &str) -> &'a Value {
    server["published"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == name)
        .unwrap_or_else(|| panic!("{name} not published: {server}"))
}

fn rules_of(tool: &Value) -> Vec<String> {
    tool["suspicious"]
        .as_array()
        .map(|hits| {
            hits.iter()
                .map(|h| h["rule"].as_str().unwrap().to_string())
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn a_poisoned_server_is_refused_on_first_use_until_the_operator_accepts_it() {
    let env = TestEnv::new();
    env.config(&poisoned(&env, "allow", ""));
    let out = env.run(&["check", "--json"]);
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    let report = json(&out);
    let server = &report["servers"][0];
    assert_eq!(server["status"], "rejected", "{server}");
    let error = &server["error"];
    assert_eq!(error["code"], "definition_suspicious", "{error}");
    assert_eq!(error["tools"], json!(HOSTILE), "{error}");
    // The message is the harness's words: the rules, not the server's phrases.
    let message = error["message"].as_str().unwrap();
    assert!(message.contains("`add` (model_tag"), "{message}");
    assert!(!message.contains("id_rsa"), "{message}");
    // Why, per tool: each class of trick.
    let add = published(server, "add");
    assert_eq!(add["flags"], json!(["suspicious"]), "{add}");
    let rules = rules_of(add);
    for rule in [
        "model_tag",
        "secret_file",
        "send_to_address",
        "conceal_from_user",
    ] {
        assert!(rules.contains(&rule.to_string()), "{rule}: {add}");
    }
    assert!(rules_of(published(server, "send_mail")).contains(&"shadow_other_tool".into()));
    let note = published(server, "save_note");
    let sidenote = note["suspicious"]
        .as_array()
        .unwrap()
        .iter()
        .find(|h| h["rule"] == "smuggle_into_parameter")
        .unwrap_or_else(|| panic!("{note}"));
    assert_eq!(
        sidenote["field"],
        "inputSchema.properties.sidenote.description"
    );
    assert_eq!(sidenote["phrase"], "pass its content as 'sidenote");
    // The benign twins pass untouched.
    for twin in TWINS {
        let tool = published(server, twin);
        assert_eq!(tool["flags"], json!([]), "{tool}");
        assert!(tool.get("suspicious").is_none(), "{tool}");
    }
    // The diff view's material: each suspicious tool whole, with why.
    let changes = error["changes"].as_array().unwrap();
    assert_eq!(changes.len(), 3, "{error}");
    assert_eq!(changes[0]["old_sha256"], "");
    assert!(
        changes[0]["diff"]
            .as_str()
            .unwrap()
            .contains("+++ published")
    );
    assert!(!changes[0]["suspicious"].as_array().unwrap().is_empty());
    // Nothing was pinned: not the suspicious tools, nor (all or nothing) the rest.
    assert!(
        !env.path("mcp-harness.lock").exists()
            || !std::fs::read_to_string(env.path("mcp-harness.lock"))
                .unwrap()
                .contains("[servers.s"),
        "nothing pinned on a refused first use"
    );
    // The human output says why, with the phrase, inert.
    let human = stdout(&env.run(&["check"]));
    assert!(human.contains("add [suspicious]"), "{human}");
    assert!(
        human.contains("add: model_tag — a tag that marks text as instructions"),
        "{human}"
    );
    assert!(human.contains("\"<IMPORTANT>\""), "{human}");
    // The one explicit act: `pin` accepts what it shows, saying what it accepts.
    let pinned = env.run(&["pin", "s"]);
    assert!(pinned.status.success(), "{}", stderr(&pinned));
    let said = stdout(&pinned);
    assert!(
        said.contains("accepted although the poisoning screen flags them"),
        "{said}"
    );
    assert!(said.contains("suspicious: model_tag"), "{said}");
    let out = env.run(&["check", "--json"]);
    let report = json(&out);
    assert_eq!(out.status.code(), Some(0), "{report}");
    // Accepted, still flagged: the operator keeps seeing why.
    assert_eq!(
        published(&report["servers"][0], "add")["flags"],
        json!(["suspicious"])
    );
    env.assert_no_leaks();
}

#[test]
fn a_policy_that_denies_the_suspicious_tools_connects_and_pins_the_rest() {
    let env = TestEnv::new();
    env.config(&poisoned(&env, "deny", ""));
    let out = env.run(&["check", "--json"]);
    let report = json(&out);
    assert_eq!(out.status.code(), Some(0), "{report}");
    let server = &report["servers"][0];
    assert_eq!(server["exposed"].as_array().unwrap().len(), TWINS.len());
    let lock = std::fs::read_to_string(env.path("mcp-harness.lock")).unwrap();
    for twin in TWINS {
        assert!(
            lock.contains(&format!("[servers.s.tools.{twin}]")),
            "{lock}"
        );
    }
    assert!(!lock.contains("[servers.s.tools.add]"), "{lock}");
}

#[test]
fn the_lead_is_told_the_rule_not_the_phrase_and_an_accepted_tool_stays_flagged() {
    let env = TestEnv::new();
    let scenario = "delay_ms = 1\n[[act]]\n\
         [[act.turn]]\ntext = \"connect\"\ntool_calls = [{ name = \"connect_mcp\", arguments = { alias = \"s\" } }]\n\
         [[act.turn]]\ntext = \"done\"\n";
    std::fs::write(env.path("scenario.toml"), scenario).unwrap();
    let model = "[model]\nprovider = \"scripted\"\nscenario = \"{DIR}/scenario.toml\"\n";
    env.config(&format!("{model}{}", poisoned(&env, "allow", "")));
    let (out, events) = run(&env, &["--prompt", "go", "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let connect = of(&events, "tool_result")
        .into_iter()
        .find(|r| r["name"] == "connect_mcp")
        .cloned()
        .unwrap();
    assert_eq!(connect["ok"], false, "{connect}");
    let envelope = connect["error"].to_string();
    assert!(envelope.contains("mcp_connect_failed"), "{envelope}");
    assert!(envelope.contains("poisoning screen"), "{envelope}");
    for phrase in ["IMPORTANT", "id_rsa", "collector.example", "send_email"] {
        assert!(
            !envelope.contains(phrase),
            "{phrase} reached the model: {envelope}"
        );
    }
    let violated = of(&events, "pins")
        .into_iter()
        .find(|p| p["change"] == "violated")
        .cloned()
        .unwrap_or_else(|| panic!("{events:#?}"));
    let tools: Vec<&str> = violated["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["tool"].as_str().unwrap())
        .collect();
    assert_eq!(tools, HOSTILE);
    // Each flagged tool has its own `suspicious` event: why, and that it was refused.
    let suspicious = |events: &[Value], outcome: &str| -> Vec<String> {
        of(events, "suspicious")
            .into_iter()
            .inspect(|e| {
                assert_eq!(e["alias"], "s", "{e}");
                assert_eq!(e["outcome"], outcome, "{e}");
            })
            .map(|e| e["tool"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(suspicious(&events, "refused"), HOSTILE);
    let add = of(&events, "suspicious")[0].clone();
    let hit = add["hits"]
        .as_array()
        .unwrap()
        .iter()
        .find(|h| h["rule"] == "model_tag")
        .unwrap_or_else(|| panic!("{add}"));
    assert_eq!(hit["field"], "description", "{hit}");
    assert_eq!(hit["class"], "instruction", "{hit}");
    assert!(
        hit["phrase"].as_str().unwrap().contains("IMPORTANT"),
        "{hit}"
    );
    assert!(!hit["reason"].as_str().unwrap().is_empty(), "{hit}");
    // Accepted: it connects, and the registry says which tools are suspicious.
    assert!(env.run(&["pin", "s"]).status.success());
    let (_, events) = run(&env, &["--prompt", "go", "--json"]);
    assert_eq!(suspicious(&events, "exposed"), HOSTILE);
    let registered = of(&events, "registry")
        .into_iter()
        .find(|r| r["change"] == "registered")
        .cloned()
        .unwrap_or_else(|| panic!("{events:#?}"));
    assert_eq!(
        registered["flags"],
        json!({
            "mcp__s__add": ["suspicious"],
            "mcp__s__save_note": ["suspicious"],
            "mcp__s__send_mail": ["suspicious"]
        }),
        "{registered}"
    );
    // And so does the session's audit log.
    let session = events.last().unwrap()["session"].as_str().unwrap();
    let audit = std::fs::read_to_string(
        env.path("xdg-data/mcp-harness/sessions")
            .join(session)
            .join("audit.jsonl"),
    )
    .unwrap();
    let record = audit
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .find(|r| r["event"] == "registered")
        .unwrap_or_else(|| panic!("{audit}"));
    assert_eq!(
        record["flags"]["mcp__s__add"],
        json!(["suspicious"]),
        "{record}"
    );
    // With a record of its own per tool: rule, reason, field and phrase.
    let records: Vec<Value> = audit
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|r| r["event"] == "suspicious")
        .collect();
    let tools: Vec<&str> = records
        .iter()
        .map(|r| r["tool"].as_str().unwrap())
        .collect();
    assert_eq!(tools, HOSTILE, "{audit}");
    let note = &records[2];
    assert_eq!(note["outcome"], "exposed");
    assert!(
        note["hits"].as_array().unwrap().iter().any(|h| {
            h["rule"] == "smuggle_into_parameter"
                && h["field"] == "inputSchema.properties.sidenote.description"
        }),
        "{note}"
    );
    env.assert_no_leaks();
}

#[test]
fn pin_off_flags_but_does_not_refuse() {
    let env = TestEnv::new();
    env.config(&poisoned(&env, "allow", "pin = \"off\"\n"));
    let out = env.run(&["check", "--json"]);
    let report = json(&out);
    assert_eq!(out.status.code(), Some(0), "{report}");
    assert_eq!(
        published(&report["servers"][0], "add")["flags"],
        json!(["suspicious"])
    );
}

/// Zero false positives on the demo servers' own definitions (every tool set
/// an operator runs).
#[test]
fn the_demo_servers_are_not_flagged() {
    let env = TestEnv::new();
    let policy = |alias: &str, tools: &[&str]| {
        let mut text = format!("[servers.{alias}.tools]\n");
        for t in tools {
            text.push_str(&format!("{t} = \"allow\"\n"));
        }
        text
    };
    let standard = ["lookup", "set", "reset", "fail", "slow"];
    let extras = [
        "lookup",
        "set",
        "reset",
        "fail",
        "slow",
        "research",
        "guarded_set",
    ];
    env.config(&format!(
        "{}{}{}{}",
        env.demo("alpha", "alpha", &["--extras"]),
        policy("alpha", &extras),
        env.demo("beta", "beta", &[]),
        policy("beta", &standard),
    ));
    let out = env.run(&["check", "--json"]);
    let report = json(&out);
    assert_eq!(out.status.code(), Some(0), "{report}");
    for server in report["servers"].as_array().unwrap() {
        assert!(server.get("instructions_suspicious").is_none(), "{server}");
        for tool in server["published"].as_array().unwrap() {
            assert_eq!(tool["flags"], json!([]), "{tool}");
        }
    }
}

/// A server's `instructions` are given to no model; the screen reads them for
/// the operator all the same.
#[test]
fn suspicious_server_instructions_are_reported_to_the_operator() {
    let env = TestEnv::new();
    env.config(&format!(
        "{}[servers.s.tools]\nlookup = \"allow\"\nset = \"allow\"\nreset = \"allow\"\nfail = \"allow\"\nslow = \"allow\"\n",
        env.demo("s", "alpha", &["--fault", "poisoned-instructions"])
    ));
    let out = env.run(&["check", "--json"]);
    let report = json(&out);
    assert_eq!(out.status.code(), Some(0), "{report}");
    let rules: Vec<&str> = report["servers"][0]["instructions_suspicious"]
        .as_array()
        .unwrap_or_else(|| panic!("{report}"))
        .iter()
        .map(|s| s["rule"].as_str().unwrap())
        .collect();
    assert_eq!(rules, ["model_tag", "ignore_instructions"], "{report}");
    let human = stdout(&env.run(&["check"]));
    assert!(
        human.contains("its instructions (given to no model) are suspicious: model_tag"),
        "{human}"
    );
}
