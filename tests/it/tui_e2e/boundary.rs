//! The content boundary as the operator sees it (issue 24), in tmux with the
//! real binary, a scripted Lead and demo servers: a sink refused by flow
//! control says so on its row, with the calls that tainted the session (not
//! "denied by policy": its policy allows it), and `e` on a call of a
//! suspicious tool the operator accepted names the poisoning screen's hit.

use crate::common::tmux::{Tmux, tui_command};
use crate::common::{TestEnv, stderr};

const ALLOW_ALL: &str =
    "lookup = \"allow\"\nset = \"allow\"\nreset = \"allow\"\nfail = \"allow\"\nslow = \"allow\"\n";

/// beta's `lookup` brings untrusted content, `read_file` private data, and
/// alpha's `set` is a sink (policy `allow`); `s` publishes poisoned
/// definitions, accepted by the operator before the session.
fn setup(env: &TestEnv) -> String {
    let scenario = "delay_ms = 1\n[[act]]\n\
        [[act.turn]]\ntext = \"connecting\"\ntool_calls = [\
          { name = \"connect_mcp\", arguments = { alias = \"demo_alpha\" } },\
          { name = \"connect_mcp\", arguments = { alias = \"demo_beta\" } },\
          { name = \"connect_mcp\", arguments = { alias = \"s\" } }]\n\
        [[act.turn]]\ntext = \"reading\"\ntool_calls = [\
          { name = \"mcp__demo_beta__lookup\", arguments = { key = \"oslo\" } },\
          { name = \"read_file\", arguments = { path = \"secrets.txt\" } }]\n\
        [[act.turn]]\ntext = \"sending\"\ntool_calls = [\
          { name = \"mcp__demo_alpha__set\", arguments = { key = \"exfil\", value = \"notes\" } }]\n\
        [[act.turn]]\ntext = \"adding\"\ntool_calls = [\
          { name = \"mcp__s__add\", arguments = { a = 1, b = 2 } }]\n\
        [[act.turn]]\ntext = \"all done\"\n";
    std::fs::write(env.path("scenario.toml"), scenario).unwrap();
    std::fs::write(env.path("secrets.txt"), "the user's private notes").unwrap();
    let mut poisoned = String::from("[servers.s.tools]\n");
    for tool in [
        "add",
        "send_mail",
        "save_note",
        "ssh_run",
        "dotenv",
        "clock",
        "fetch_page",
    ] {
        poisoned.push_str(&format!("{tool} = \"allow\"\n"));
    }
    env.config(&format!(
        "[model]\nprovider = \"scripted\"\nscenario = \"{{DIR}}/scenario.toml\"\n\
         [flows]\non_trifecta = \"deny\"\n\
         {}[servers.demo_alpha.tools]\n{ALLOW_ALL}[servers.demo_alpha.tool_labels]\nset = [\"external_sink\"]\n\
         {}[servers.demo_beta.tools]\n{ALLOW_ALL}[servers.demo_beta.tool_labels]\nlookup = [\"untrusted_content\"]\n\
         {}{poisoned}",
        env.demo("demo_alpha", "alpha", &[]),
        env.demo("demo_beta", "beta", &[]),
        env.demo("s", "alpha", &["--toolset", "poisoned"]),
    ));
    // The operator's explicit acceptance of the suspicious definitions.
    let pinned = env.run(&["pin", "s"]);
    assert!(pinned.status.success(), "{}", stderr(&pinned));
    // `read_file` reads the folder the TUI runs in.
    format!("cd {} && {}", env.dir.path().display(), tui_command(env))
}

#[cfg_attr(
    mcph_no_tmux,
    ignore = "tmux is not installed: install it (apt-get install tmux) to run the TUI tests"
)]
#[test]
fn a_flow_refusal_says_why_on_its_row_and_explain_names_the_screens_hit() {
    let env = TestEnv::new();
    let tmux = Tmux::start(&env, &setup(&env), 160, 50);
    tmux.wait("the main screen", |s| s.contains("Servers"));
    tmux.keys(&["g", "o", "Enter"]);
    let screen = tmux.wait("the turn to end", |s| s.contains("all done"));
    // The sink's row: refused by flow control, and by which calls.
    assert!(screen.contains("refused by flow control"), "{screen}");
    assert!(!screen.contains("denied by policy"), "{screen}");
    let flow = screen
        .lines()
        .skip_while(|l| !l.contains("refused by flow control ([flows] on_trifecta)"))
        .take(3)
        .collect::<String>();
    assert!(
        flow.contains("tainted by")
            && flow.contains("(mcp__demo_beta__lookup)")
            && flow.contains("(read_file)"),
        "{screen}"
    );
    // Explain the last call (the accepted suspicious tool's): its screen line.
    tmux.keys(&["Tab"]);
    tmux.keys(&["Up"]);
    tmux.keys(&["e"]);
    let explained = tmux.wait("the explanation", |s| s.contains("screen"));
    assert!(explained.contains("mcp__s__add"), "{explained}");
    for part in ["rule model_tag", "in description", "IMPORTANT"] {
        assert!(explained.contains(part), "{part}: {explained}");
    }
    tmux.keys(&["Escape"]);
    tmux.wait("the explanation closed", |s| !s.contains("Esc close"));
    tmux.keys(&["C-q"]);
    tmux.wait_gone();
    drop(tmux);
    // Resumed, the session still holds what it read (its audit log says).
    let tmux = Tmux::start(
        &env,
        &format!(
            "cd {} && {} --resume",
            env.dir.path().display(),
            tui_command(&env)
        ),
        160,
        50,
    );
    tmux.wait("the resumed session's taint", |s| {
        s.contains("all done") && s.contains("flow: untrusted+private")
    });
    tmux.keys(&["C-q"]);
    tmux.wait_gone();
    env.assert_no_leaks();
}

const CLIENT_TOKEN: &str = "token-for-the-boundary-room-0123";

#[cfg_attr(
    mcph_no_tmux,
    ignore = "tmux is not installed: install it (apt-get install tmux) to run the TUI tests"
)]
#[cfg_attr(
    mcph_no_interop,
    ignore = "npm or python3 is missing: the interop tests install the pinned servers with them (docs/src/testing.md)"
)]
#[test]
fn an_outside_clients_taint_shows_in_the_status_bar_and_the_operator_clears_it() {
    use crate::serve::{TsClient, audit_records, envelope};
    use serde_json::json;
    let interop = crate::common::interop::Interop::get();
    let env = TestEnv::new();
    env.config(&format!(
        "[flows]\non_trifecta = \"deny\"\n\
         {}[servers.demo_alpha.tools]\n{ALLOW_ALL}[servers.demo_alpha.tool_labels]\n\
         lookup = [\"untrusted_content\", \"private_data\"]\nset = [\"external_sink\"]\n\
         [serve.clients.ide]\ntoken_env = \"MCPH_TEST_IDE_TOKEN\"\n",
        env.demo("demo_alpha", "alpha", &[]),
    ));
    let (tmux, port) =
        super::control_room::serve_room(&env, &[("MCPH_TEST_IDE_TOKEN", CLIENT_TOKEN)], 160);
    tmux.wait("the status bar serving", |s| {
        s.contains(&format!("serving :{port} · 0 clients"))
    });
    tmux.keys(&["Tab", "Tab", "c"]);
    tmux.wait("demo_alpha ready", |s| s.contains("ready 5 tools"));
    let url = format!("http://127.0.0.1:{port}/mcp");
    let mut client = TsClient::start(&interop, &url, Some(CLIENT_TOKEN), None);
    assert_eq!(client.connect()["ok"], true);
    // A read that brings untrusted content and private data: the client's
    // session is tainted, the Lead's is not.
    let read = client.call("demo_alpha__lookup", json!({"key": "apple"}));
    assert_eq!(read["isError"], false, "{read}");
    let screen = tmux.wait("the client's taint in the status bar", |s| {
        s.contains("· flow ide: untrusted+private")
    });
    assert!(
        !screen.contains("│ flow: "),
        "the Lead's session is clean: {screen}"
    );
    let sent = client.call("demo_alpha__set", json!({"key": "k", "value": "v"}));
    assert_eq!(envelope(&sent)["code"], "mcp_flow_denied", "{sent}");
    // F2: the client's row; x on it clears its taint (and only on it).
    tmux.keys(&["F2"]);
    tmux.wait("the client's row in the rules view", |s| {
        s.contains("client ide  flow: untrusted+private")
    });
    tmux.keys(&["x"]);
    tmux.wait("the client's taint cleared", |s| {
        s.contains("flow taint of client `ide` cleared")
    });
    tmux.keys(&["Escape"]);
    let screen = tmux.wait("the status bar without the client's taint", |s| {
        !s.contains("Esc close") && s.contains(&format!("serving :{port} · 1 client"))
    });
    assert!(!screen.contains("flow ide:"), "{screen}");
    // The sink runs now: the client's session holds nothing.
    let sent = client.call("demo_alpha__set", json!({"key": "k", "value": "v"}));
    assert_eq!(sent["isError"], false, "{sent}");
    drop(client);
    tmux.keys(&["C-q"]);
    tmux.wait_gone();
    let cleared = audit_records(&env, "taint_cleared");
    assert_eq!(cleared.len(), 1, "{cleared:?}");
    assert_eq!(
        cleared[0]["scope"],
        json!({"kind": "client", "name": "ide"})
    );
    assert_eq!(
        cleared[0]["was"]["private"][0]["tool"],
        "mcp__demo_alpha__lookup"
    );
    env.assert_no_leaks();
}
