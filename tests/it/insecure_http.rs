//! No plaintext to remote hosts (issue 24, deliverable 5): `http://` to a host
//! that is not loopback is refused when the config is read, naming the key and
//! the fix; a host written as a variable is refused once expanded, before any
//! request; `allow_insecure_http = true` lets it through.

use crate::common::{TestEnv, json, stderr};

const POLICY: &str = "[servers.far.tools]\nlookup = \"allow\"\n";

#[test]
fn a_remote_plaintext_url_is_a_config_error_naming_the_key_and_the_fix() {
    let env = TestEnv::new();
    env.config(&format!(
        "[servers.far]\nurl = \"http://192.0.2.1/mcp\"\n{POLICY}"
    ));
    let out = env.run(&["check", "--json"]);
    assert_eq!(out.status.code(), Some(2), "a config error");
    let said = stderr(&out);
    assert!(
        said.contains("servers.far.url")
            && said.contains("`192.0.2.1`")
            && said.contains("allow_insecure_http = true"),
        "{said}"
    );
}

#[test]
fn a_url_made_of_a_variable_is_judged_once_expanded() {
    let env = TestEnv::new();
    env.config(&format!("[servers.far]\nurl = \"${{FAR_URL}}\"\n{POLICY}"));
    // TEST-NET-1: never reached; the refusal comes before any request.
    let out = env
        .command(&["check", "--json"])
        .env("FAR_URL", "http://192.0.2.1/mcp")
        .output()
        .unwrap();
    let report = json(&out);
    let error = &report["servers"][0]["error"];
    assert_eq!(error["code"], "spawn_failed", "{report}");
    let message = error["message"].as_str().unwrap();
    assert!(
        message.contains("servers.far.url") && message.contains("`192.0.2.1`"),
        "{message}"
    );
    assert!(
        error["hint"]
            .as_str()
            .unwrap()
            .contains("allow_insecure_http"),
        "{error}"
    );
    // Allowed: it is tried (TEST-NET-1 is never routed: it fails to connect).
    env.config(&format!(
        "[servers.far]\nurl = \"${{FAR_URL}}\"\nallow_insecure_http = true\nconnect_timeout_ms = 300\n{POLICY}"
    ));
    let out = env
        .command(&["check", "--json"])
        .env("FAR_URL", "http://192.0.2.1/mcp")
        .output()
        .unwrap();
    let report = json(&out);
    assert_ne!(report["servers"][0]["status"], "ready", "{report}");
    let message = report["servers"][0]["error"]["message"]
        .as_str()
        .unwrap_or_default();
    assert!(!message.contains("not loopback"), "{report}");
}
