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

/// The prompt of the call that sets apple to `value` on screen, armed: drawn
/// down to its last line (a capture can catch a frame half drawn) and no
/// longer saying it is arming. Naming the value keeps a wait from taking the
/// previous call's prompt, still drawn a moment after its answer arrived.
fn armed(value: &'static str) -> impl Fn(&str) -> bool {
    move |screen| {
        screen.contains("Approval needed")
            && screen.contains(&format!(r#""value": "{value}""#))
            && screen.contains("F3 put aside")
            && !screen.contains("arming:")
    }
}

/// demo_alpha (`set` confirm, `reset` deny) and the `[serve.clients]` given.
fn room_config(env: &TestEnv, clients: &str) {
    env.config(&format!(
        "{}[servers.demo_alpha.tools]\nlookup = \"allow\"\nset = \"confirm\"\nreset = \"deny\"\n\
         fail = \"allow\"\nslow = \"allow\"\n{clients}",
        env.demo("demo_alpha", "alpha", &[]),
    ));
}

/// A free loopback port (released at once: the TUI binds it).
pub(crate) fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// The control room of `env`'s config, `width` columns wide, serving on a
/// free port with the clients' `tokens` (variable, value) in its environment,
/// once its conversation says where it serves; and that port.
pub(crate) fn serve_room(env: &TestEnv, tokens: &[(&str, &str)], width: u16) -> (Tmux, u16) {
    let port = free_port();
    let vars: String = tokens.iter().map(|(k, v)| format!("{k}={v} ")).collect();
    let command = format!("env {vars}{} --serve 127.0.0.1:{port}", tui_command(env));
    let tmux = Tmux::start(env, &command, width, 40);
    tmux.wait("the gateway serving", |s| {
        s.contains(&format!("serving MCP at http://127.0.0.1:{port}/mcp"))
    });
    (tmux, port)
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
    room_config(
        &env,
        "[serve.clients.claude]\ntoken_env = \"MCPH_TEST_CR_TOKEN\"\n\
         [serve.clients.ci]\ntoken_env = \"MCPH_TEST_CI_TOKEN\"\n",
    );
    let (tmux, port) = serve_room(
        &env,
        &[
            ("MCPH_TEST_CR_TOKEN", TOKEN),
            ("MCPH_TEST_CI_TOKEN", CI_TOKEN),
        ],
        120,
    );
    // The status bar says it serves, where, and to no client yet.
    tmux.wait("the status bar serving to nobody", |s| {
        s.contains(&format!("serving :{port} · 0 clients"))
    });
    // The operator connects demo_alpha; only then does the client see it.
    tmux.keys(&["Tab", "Tab", "c"]);
    tmux.wait("demo_alpha ready", |s| s.contains("ready 4 tools"));

    let url = format!("http://127.0.0.1:{port}/mcp");
    let mut client = TsClient::start(&interop, &url, Some(TOKEN), None);
    assert_eq!(client.connect()["ok"], true);
    tmux.wait("the status bar counting the client's session", |s| {
        s.contains(&format!("serving :{port} · 1 client "))
    });
    assert!(client.names().contains(&"demo_alpha__set".to_string()));
    let looked_up = client.call("demo_alpha__lookup", json!({"key": "apple"}));
    assert_eq!(looked_up["isError"], false, "{looked_up}");
    tmux.wait("the client's call as its row", |s| {
        s.contains("client claude →") && s.contains("apple = red")
    });

    // `confirm`: the call waits for the operator's key.
    let asking = set_in_background(client, "green");
    let screen = tmux.wait("the prompt naming the client, armed", armed("green"));
    assert!(screen.contains("requested by client claude"), "{screen}");
    // The answer is bound to this call, this definition, these arguments.
    let green = arguments_sha256(&json!({"key": "apple", "value": "green"}));
    assert!(screen.contains("call         gw-"), "{screen}");
    assert!(screen.contains("· definition pinned sha256:"), "{screen}");
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
    tmux.wait("the second prompt, armed", armed("blue"));
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
    tmux.wait("the third prompt, armed", armed("pink"));
    tmux.keys(&["a"]);
    let (mut client, always) = asking.join().unwrap();
    assert_eq!(always["isError"], false, "{always}");
    let again = client.call("demo_alpha__set", json!({"key": "apple", "value": "gold"}));
    assert_eq!(again["isError"], false, "covered by the grant: {again}");
    let mut ci = TsClient::start(&interop, &url, Some(CI_TOKEN), None);
    assert_eq!(ci.connect()["ok"], true);
    let asking = set_in_background(ci, "grey");
    let screen = tmux.wait("ci's own prompt, armed", armed("grey"));
    assert!(screen.contains("requested by client ci"), "{screen}");
    tmux.keys(&["n"]);
    let (mut ci, refused) = asking.join().unwrap();
    assert_eq!(envelope(&refused)["code"], "mcp_permission_denied");

    // A client that gives up (its request timeout sends
    // notifications/cancelled): the unanswered prompt leaves the screen. The
    // client lives on after its answer: the SDK sends the cancellation after
    // it has rejected the call, and a client killed at once would never send it.
    let giving_up = std::thread::spawn(move || {
        let answer = ci.ask(json!({"op": "call", "name": "demo_alpha__set",
            "arguments": {"key": "apple", "value": "black"}, "timeout_ms": 5000}));
        (ci, answer)
    });
    tmux.wait("ci's prompt that nobody answers, armed", armed("black"));
    tmux.wait(
        "the prompt withdrawn when ci gave up, its row saying so",
        |s| !s.contains("Approval needed") && s.contains("cancelled the call"),
    );
    let (_ci, gave_up) = giving_up.join().unwrap();
    assert!(
        gave_up["error"]
            .as_str()
            .is_some_and(|e| e.contains("timed out")),
        "{gave_up}"
    );

    // The operator disconnects demo_alpha: the client hears of it.
    tmux.keys(&["d"]);
    let changed = client.ask(json!({"op": "wait_list_changed"}));
    assert!(changed["list_changed"].as_u64() >= Some(1), "{changed}");
    assert!(client.names().is_empty());
    // A host that ignores list_changed and calls anyway: refused in words
    // for a client, not the Lead's (no `connect_mcp`).
    let gone = client.call("demo_alpha__lookup", json!({"key": "apple"}));
    let e = envelope(&gone);
    assert_eq!(e["code"], "mcp_unknown_tool", "{gone}");
    let message = e["message"].as_str().unwrap();
    assert!(
        message.contains("`demo_alpha__lookup`") && message.contains("list the tools again"),
        "{gone}"
    );
    assert!(!message.contains("connect_mcp"), "{gone}");

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
            r#""claude" "not_run""#,
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

/// A host that spawns its servers (`serve --stdio`, as Cursor's `mcp.json`
/// does) while the control room of the same config runs: its calls are the
/// control room's, rows and prompts included, and the relay ends when the
/// control room quits. No HTTP client is configured: the relay needs none.
#[cfg_attr(
    mcph_no_tmux,
    ignore = "tmux is not installed: install it (apt-get install tmux) to run the TUI tests"
)]
#[cfg_attr(
    mcph_no_interop,
    ignore = "npm or python3 is missing: the interop tests install the pinned servers with them (docs/src/testing.md)"
)]
#[test]
fn a_stdio_host_relays_to_the_control_room_and_waits_for_the_operator() {
    let interop = Interop::get();
    let env = TestEnv::new();
    room_config(&env, "[serve.clients.cursor]\nservers = [\"demo_alpha\"]\n");
    let port = free_port();
    let command = format!("{} --serve 127.0.0.1:{port}", tui_command(&env));
    let tmux = Tmux::start(&env, &command, 120, 40);
    tmux.wait(
        "the relay listening, HTTP refused for want of a token",
        |s| s.contains("relay here") && s.contains("client can come in over HTTP"),
    );
    tmux.keys(&["Tab", "Tab", "c"]);
    tmux.wait("demo_alpha ready", |s| s.contains("ready 4 tools"));

    let mut cursor = TsClient::stdio(&interop, &env, &["--client", "cursor"]);
    assert_eq!(cursor.connect()["ok"], true);
    assert!(cursor.names().contains(&"demo_alpha__set".to_string()));
    let looked_up = cursor.call("demo_alpha__lookup", json!({"key": "apple"}));
    assert_eq!(looked_up["isError"], false, "{looked_up}");
    tmux.wait("the relayed call as the client's row", |s| {
        s.contains("client cursor →") && s.contains("apple = red")
    });

    let asking = set_in_background(cursor, "teal");
    let screen = tmux.wait("the relayed prompt, armed", armed("teal"));
    assert!(screen.contains("requested by client cursor"), "{screen}");
    tmux.keys(&["y"]);
    let (_cursor, approved) = asking.join().unwrap();
    assert_eq!(approved["isError"], false, "{approved}");
    assert!(
        approved.to_string().contains("stored apple = teal"),
        "{approved}"
    );

    // The control room quits: the relay says so and ends, nothing is left.
    tmux.keys(&["C-q"]);
    tmux.wait_gone();
    env.assert_no_leaks();
    let said = std::fs::read_to_string(env.path("serve.stderr")).unwrap_or_default();
    assert!(said.contains("relayed to the control room"), "{said}");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while !std::fs::read_to_string(env.path("serve.stderr"))
        .unwrap_or_default()
        .contains("the control room closed client `cursor`'s session")
    {
        assert!(
            std::time::Instant::now() < deadline,
            "the relay did not end with the control room"
        );
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    // The calls are in the control room's audit log; the relay kept no session.
    let decisions: Vec<String> = client_calls(&env)
        .iter()
        .map(|r| format!("{} {}", r["client"], r["decision"]))
        .collect();
    assert_eq!(decisions, [r#""cursor" "allow""#, r#""cursor" "approved""#]);
    let sessions = std::fs::read_dir(env.path("xdg-data/mcp-harness/sessions"))
        .unwrap()
        .count();
    assert_eq!(sessions, 1, "only the control room's session");
}
