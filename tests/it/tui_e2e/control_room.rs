//! The control room: the TUI run with `--serve`, an outside client nobody
//! here wrote (the official TypeScript SDK's, pinned in `interop/`) calling
//! through it. Its calls show as the client's rows, its `confirm` call waits
//! for the operator's key in the same approval prompt as the Lead's (naming the
//! client), the answer reaches the client, and a disconnect in the side panel
//! tells the client its tool list changed.

use serde_json::json;

use crate::common::TestEnv;
use crate::common::interop::Interop;
use crate::common::tmux::{Tmux, tui_command};
use crate::serve::{TsClient, audit_records, client_calls, envelope};

const TOKEN: &str = "token-for-the-control-room-0123";
const CI_TOKEN: &str = "token-for-ci-in-the-room-45678";

/// A prompt on screen, armed: drawn down to its last line (a capture can
/// catch a frame half drawn) and no longer saying it is arming.
fn armed(screen: &str) -> bool {
    screen.contains("Approval needed")
        && screen.contains("F3 put aside")
        && !screen.contains("arming:")
}

/// `client` calls `set` on a thread of its own (it waits for the operator).
fn set_in_background(
    mut client: TsClient,
    value: &'static str,
) -> std::thread::JoinHandle<(TsClient, serde_json::Value)> {
    std::thread::spawn(move || {
        let answer = client.call("demo_alpha__set", json!({"key": "apple", "value": value}));
        (client, answer)
    })
}

#[cfg_attr(
    mcph_no_tmux,
    ignore = "tmux is not installed: install it (apt-get install tmux) to run the TUI tests"
)]
#[cfg_attr(
    mcph_no_interop,
    ignore = "npm or python3 is missing: the interop tests install the pinned servers with them (docs/src/testing.md)"
)]
#[test]
fn an_outside_clients_confirm_call_waits_for_the_operator_in_the_tui() {
    let interop = Interop::get();
    let env = TestEnv::new();
    env.config(&format!(
        "{}[servers.demo_alpha.tools]\nlookup = \"allow\"\nset = \"confirm\"\nreset = \"deny\"\n\
         fail = \"allow\"\nslow = \"allow\"\n\
         [serve.clients.claude]\ntoken_env = \"MCPH_TEST_CR_TOKEN\"\n\
         [serve.clients.ci]\ntoken_env = \"MCPH_TEST_CI_TOKEN\"\n",
        env.demo("demo_alpha", "alpha", &[]),
    ));
    // A free loopback port (released at once: the TUI binds it).
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let command = format!(
        "env MCPH_TEST_CR_TOKEN={TOKEN} MCPH_TEST_CI_TOKEN={CI_TOKEN} {} --serve 127.0.0.1:{port}",
        tui_command(&env)
    );
    let tmux = Tmux::start(&env, &command, 120, 40);
    tmux.wait("the gateway serving", |s| {
        s.contains(&format!("serving MCP at http://127.0.0.1:{port}/mcp"))
    });
    // The operator connects demo_alpha; only then does the client see it.
    tmux.keys(&["Tab", "Tab", "c"]);
    tmux.wait("demo_alpha ready", |s| s.contains("ready 4 tools"));

    let url = format!("http://127.0.0.1:{port}/mcp");
    let mut client = TsClient::start(&interop, &url, Some(TOKEN), None);
    assert_eq!(client.connect()["ok"], true);
    assert!(client.names().contains(&"demo_alpha__set".to_string()));
    let looked_up = client.call("demo_alpha__lookup", json!({"key": "apple"}));
    assert_eq!(looked_up["isError"], false, "{looked_up}");
    tmux.wait("the client's call as its row", |s| {
        s.contains("client claude →") && s.contains("apple = red")
    });

    // `confirm`: the call waits for the operator's key.
    let asking = set_in_background(client, "green");
    let screen = tmux.wait("the prompt naming the client, armed", armed);
    assert!(screen.contains("requested by client claude"), "{screen}");
    // The answer is bound to this call, this definition, these arguments.
    let green = arguments_sha256(&json!({"key": "apple", "value": "green"}));
    assert!(screen.contains("call         gw-"), "{screen}");
    assert!(screen.contains("definition   pinned sha256:"), "{screen}");
    assert!(
        screen.contains(&format!("arguments (sha256:{}):", &green[..16])),
        "{screen}"
    );
    tmux.keys(&["y"]);
    let (client, approved) = asking.join().unwrap();
    assert_eq!(approved["isError"], false, "{approved}");
    assert!(
        approved.to_string().contains("stored apple = green"),
        "{approved}"
    );

    // Denied: the client gets the local envelope, in its own names.
    let asking = set_in_background(client, "blue");
    tmux.wait("the second prompt, armed", armed);
    tmux.keys(&["n"]);
    let (client, denied) = asking.join().unwrap();
    let e = envelope(&denied);
    assert_eq!(e["code"], "mcp_permission_denied", "{denied}");
    assert!(
        e["message"]
            .as_str()
            .unwrap()
            .contains("denied by the operator"),
        "{denied}"
    );

    // "Always" holds for this client alone: its next call runs without a
    // prompt, another client's still asks.
    let asking = set_in_background(client, "pink");
    tmux.wait("the third prompt, armed", armed);
    tmux.keys(&["a"]);
    let (mut client, always) = asking.join().unwrap();
    assert_eq!(always["isError"], false, "{always}");
    let again = client.call("demo_alpha__set", json!({"key": "apple", "value": "gold"}));
    assert_eq!(again["isError"], false, "covered by the grant: {again}");
    let mut ci = TsClient::start(&interop, &url, Some(CI_TOKEN), None);
    assert_eq!(ci.connect()["ok"], true);
    let asking = set_in_background(ci, "grey");
    let screen = tmux.wait("ci's own prompt, armed", armed);
    assert!(screen.contains("requested by client ci"), "{screen}");
    tmux.keys(&["n"]);
    let (mut ci, refused) = asking.join().unwrap();
    assert_eq!(envelope(&refused)["code"], "mcp_permission_denied");

    // A client that gives up (its request timeout sends
    // notifications/cancelled): the unanswered prompt leaves the screen.
    let giving_up = std::thread::spawn(move || {
        ci.ask(json!({"op": "call", "name": "demo_alpha__set",
            "arguments": {"key": "apple", "value": "black"}, "timeout_ms": 5000}))
    });
    tmux.wait("ci's prompt that nobody answers, armed", armed);
    let screen = tmux.wait("the prompt withdrawn when ci gave up", |s| {
        !s.contains("Approval needed")
    });
    let gave_up = giving_up.join().unwrap();
    assert!(
        gave_up["error"]
            .as_str()
            .is_some_and(|e| e.contains("timed out")),
        "{gave_up}"
    );
    assert!(screen.contains("cancelled"), "{screen}");

    // The operator disconnects demo_alpha: the client hears of it.
    tmux.keys(&["d"]);
    let changed = client.ask(json!({"op": "wait_list_changed"}));
    assert!(changed["list_changed"].as_u64() >= Some(1), "{changed}");
    assert!(client.names().is_empty());

    tmux.keys(&["C-q"]);
    tmux.wait_gone();
    env.assert_no_leaks();
    let decisions: Vec<String> = client_calls(&env)
        .iter()
        .map(|r| format!("{} {}", r["client"], r["decision"]))
        .collect();
    assert_eq!(
        decisions,
        [
            r#""claude" "allow""#,
            r#""claude" "approved""#,
            r#""claude" "denied""#,
            r#""claude" "approved""#,
            r#""claude" "approved""#,
            r#""ci" "denied""#,
            r#""ci" "not_run""#,
        ]
    );
    // The audit log's approvals name the definition and the arguments (the
    // call given up on was never decided).
    let approvals = audit_records(&env, "approval");
    assert_eq!(approvals.len(), 5, "{approvals:?}");
    assert_eq!(approvals[0]["arguments_sha256"], green.as_str());
    for record in &approvals {
        let pin = record["definition_sha256"].as_str().unwrap_or_default();
        assert_eq!(pin.len(), 64, "{record}");
        assert_eq!(
            record["definition_sha256"],
            approvals[0]["definition_sha256"]
        );
    }
}

/// What the prompt and the audit log call the arguments' digest.
fn arguments_sha256(arguments: &serde_json::Value) -> String {
    use mcp_harness::mcp::pins::canonical::{canonical_value, hash};
    hash(canonical_value(arguments).as_bytes()).to_string()
}
