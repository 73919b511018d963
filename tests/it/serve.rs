//! `mcp-harness serve --http`: the real binary as a gateway on an ephemeral
//! loopback port, in front of the real demo-server processes, driven by a
//! client nobody here wrote — the official TypeScript SDK's client (pinned in
//! `interop/`), through `tests/it/fixtures/serve_client.mjs`.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::time::Duration;

use serde_json::{Value, json};

use crate::common::interop::Interop;
use crate::common::{TestEnv, tagged_processes};

/// Generous: two cores shared by the whole suite.
const WAIT: Duration = Duration::from_secs(90);
pub(crate) const TOKEN_A: &str = "token-for-claude-0123456789";
pub(crate) const TOKEN_B: &str = "token-for-ci-9876543210";

/// Two demo servers (alpha: set/reset confirm; beta: reset deny) and two
/// clients: `claude` sees both, `ci` only demo_alpha.
pub(crate) fn config(env: &TestEnv) -> std::path::PathBuf {
    let policy = |reset: &str| {
        format!(
            "[{{ALIAS}}.tools]\nlookup = \"allow\"\nset = \"confirm\"\nreset = \"{reset}\"\nfail = \"allow\"\nslow = \"allow\"\n"
        )
    };
    let text = format!(
        "{}{}{}{}\
         [serve.clients.claude]\ntoken_env = \"MCPH_TEST_TOKEN_A\"\n\
         [serve.clients.ci]\ntoken_env = \"MCPH_TEST_TOKEN_B\"\nservers = [\"demo_alpha\"]\n",
        env.demo("demo_alpha", "alpha", &[]),
        policy("confirm").replace("{ALIAS}", "servers.demo_alpha"),
        env.demo("demo_beta", "beta", &[]),
        policy("deny").replace("{ALIAS}", "servers.demo_beta"),
    );
    env.config(&text)
}

/// The gateway process; killed if a test fails before stopping it.
pub(crate) struct Gateway {
    child: Child,
    pub(crate) url: String,
}

impl Gateway {
    pub(crate) fn start(env: &TestEnv) -> Self {
        Self::start_with(env, &[])
    }

    pub(crate) fn start_with(env: &TestEnv, flags: &[&str]) -> Self {
        let stderr = std::fs::File::create(env.path("serve.stderr")).unwrap();
        let mut child = env
            .command(&[&["serve", "--http", "127.0.0.1:0"], flags].concat())
            .env("MCPH_TEST_TOKEN_A", TOKEN_A)
            .env("MCPH_TEST_TOKEN_B", TOKEN_B)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::from(stderr))
            .spawn()
            .expect("spawn serve");
        let stdout = child.stdout.take().unwrap();
        let lines = lines_of(stdout);
        let first = lines.recv_timeout(WAIT).unwrap_or_else(|_| {
            panic!(
                "serve did not say where it listens; stderr:\n{}",
                std::fs::read_to_string(env.path("serve.stderr")).unwrap_or_default()
            )
        });
        let url = first
            .strip_prefix("listening on ")
            .unwrap_or_else(|| panic!("not the listening line: {first}"))
            .to_string();
        assert!(
            url.starts_with("http://127.0.0.1:") && url.ends_with("/mcp"),
            "{url}"
        );
        Self { child, url }
    }

    /// SIGTERM, and the exit it makes (every server closed).
    pub(crate) fn stop(mut self) {
        let pid = self.child.id().to_string();
        Command::new("kill").args(["-TERM", &pid]).status().unwrap();
        let (tx, rx) = channel();
        let mut child = std::mem::replace(&mut self.child, Command::new("true").spawn().unwrap());
        std::thread::spawn(move || drop(tx.send(child.wait())));
        let status = rx
            .recv_timeout(WAIT)
            .expect("serve exits on SIGTERM")
            .unwrap();
        assert_eq!(status.code(), Some(143), "128 + SIGTERM");
    }
}

impl Drop for Gateway {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The TypeScript SDK's client, one command at a time.
pub(crate) struct TsClient {
    child: Child,
    stdin: ChildStdin,
    answers: Receiver<String>,
}

impl TsClient {
    pub(crate) fn start(
        interop: &Interop,
        url: &str,
        token: Option<&str>,
        origin: Option<&str>,
    ) -> Self {
        Self::spawn(interop, url, token, origin, None)
    }

    /// The client spawning `mcp-harness serve --stdio FLAGS` with `env`'s
    /// config and dirs, as a host does.
    pub(crate) fn stdio(interop: &Interop, env: &TestEnv, flags: &[&str]) -> Self {
        let config = env.path("config.toml");
        let mut args = vec!["--config", config.to_str().unwrap(), "serve", "--stdio"];
        args.extend_from_slice(flags);
        let dir = env.path("");
        let spawn = json!({
            "command": crate::common::BIN,
            "args": args,
            "env": {
                "XDG_CONFIG_HOME": dir.join("xdg-config"),
                "XDG_DATA_HOME": dir.join("xdg-data"),
                "XDG_RUNTIME_DIR": dir.join("xdg-run"),
                "HOME": dir,
            },
            "stderr": env.path("serve.stderr"),
        });
        Self::spawn(interop, "stdio", None, None, Some(spawn.to_string()))
    }

    fn spawn(
        interop: &Interop,
        url: &str,
        token: Option<&str>,
        origin: Option<&str>,
        stdio: Option<String>,
    ) -> Self {
        let driver = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/it/fixtures/serve_client.mjs");
        let sdk = interop
            .root
            .join("npm/node_modules/@modelcontextprotocol/sdk");
        let mut command = Command::new(interop.node());
        command.arg(driver).arg(sdk).arg(url);
        command.arg(token.unwrap_or(""));
        if let Some(origin) = origin {
            command.arg(origin);
        }
        if let Some(spawn) = stdio {
            command.env("MCPH_STDIO_SPAWN", spawn);
        }
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("spawn node");
        let stdin = child.stdin.take().unwrap();
        let answers = lines_of(child.stdout.take().unwrap());
        Self {
            child,
            stdin,
            answers,
        }
    }

    pub(crate) fn ask(&mut self, command: Value) -> Value {
        writeln!(self.stdin, "{command}").unwrap();
        self.stdin.flush().unwrap();
        let line = self
            .answers
            .recv_timeout(WAIT)
            .unwrap_or_else(|_| panic!("the TS client did not answer {command}"));
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"))
    }

    pub(crate) fn connect(&mut self) -> Value {
        self.ask(json!({"op": "connect"}))
    }

    pub(crate) fn names(&mut self) -> Vec<String> {
        let listed = self.ask(json!({"op": "list"}));
        let tools = listed["tools"]
            .as_array()
            .unwrap_or_else(|| panic!("no tools: {listed}"));
        tools
            .iter()
            .map(|t| t["name"].as_str().unwrap().to_string())
            .collect()
    }

    pub(crate) fn call(&mut self, name: &str, arguments: Value) -> Value {
        let answer = self.ask(json!({"op": "call", "name": name, "arguments": arguments}));
        answer
            .get("result")
            .cloned()
            .unwrap_or_else(|| panic!("the call of {name} failed in the client: {answer}"))
    }
}

impl Drop for TsClient {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub(crate) fn lines_of(stream: impl std::io::Read + Send + 'static) -> Receiver<String> {
    let (tx, rx) = channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stream).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    rx
}

/// The envelope of a refused or failed call: `isError`, its text the same
/// JSON as its `structuredContent`.
pub(crate) fn envelope(result: &Value) -> &Value {
    assert_eq!(result["isError"], true, "{result}");
    let structured = &result["structuredContent"];
    let text = result["content"][0]["text"].as_str().expect("a text block");
    let parsed: Value = serde_json::from_str(text).expect("the text is the envelope");
    assert_eq!(&parsed, structured, "text and structuredContent differ");
    structured
}

/// The status of a raw `tools/list` POST in session `session` (HTTP/1.1 by
/// hand: the SDKs do not let a test send another client's session id).
fn post_list(url: &str, token: &str, session: &str) -> u16 {
    let rest = url.strip_prefix("http://").unwrap();
    let (authority, path) = rest.split_at(rest.find('/').unwrap());
    let body = r#"{"jsonrpc":"2.0","id":99,"method":"tools/list"}"#;
    let mut stream = std::net::TcpStream::connect(authority).unwrap();
    stream.set_read_timeout(Some(WAIT)).unwrap();
    write!(
        stream,
        "POST {path} HTTP/1.1\r\nHost: {authority}\r\nAuthorization: Bearer {token}\r\n\
         Mcp-Session-Id: {session}\r\nMCP-Protocol-Version: 2025-11-25\r\n\
         Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut status_line = String::new();
    BufReader::new(stream).read_line(&mut status_line).unwrap();
    status_line
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no status: {status_line}"))
}

/// Every `client_call` record of the session's audit log.
pub(crate) fn client_calls(env: &TestEnv) -> Vec<Value> {
    audit_records(env, "client_call")
}

/// Every record of the sessions' audit logs whose `event` is `event`.
pub(crate) fn audit_records(env: &TestEnv, event: &str) -> Vec<Value> {
    let sessions = env.path("xdg-data/mcp-harness/sessions");
    let mut records = Vec::new();
    for session in std::fs::read_dir(&sessions)
        .expect("a session dir")
        .flatten()
    {
        let text = std::fs::read_to_string(session.path().join("audit.jsonl")).unwrap_or_default();
        records.extend(
            text.lines()
                .filter_map(|l| serde_json::from_str::<Value>(l).ok())
                .filter(|r| r["event"] == event),
        );
    }
    records
}

#[cfg_attr(
    mcph_no_interop,
    ignore = "npm or python3 is missing: the interop tests install the pinned servers with them (docs/src/testing.md)"
)]
#[test]
fn serve_offers_exposed_tools_and_refuses_with_the_local_envelope() {
    let interop = Interop::get();
    let env = TestEnv::new();
    config(&env);
    let gateway = Gateway::start(&env);
    let mut claude = TsClient::start(&interop, &gateway.url, Some(TOKEN_A), None);
    let connected = claude.connect();
    assert_eq!(connected["ok"], true, "{connected}");

    // What passed the pipeline, named ALIAS__TOOL; beta's `reset` is denied.
    let names = claude.names();
    for name in [
        "demo_alpha__lookup",
        "demo_alpha__set",
        "demo_beta__lookup",
        "demo_beta__set",
    ] {
        assert!(
            names.contains(&name.to_string()),
            "{name} missing: {names:?}"
        );
    }
    assert!(
        !names.contains(&"demo_beta__reset".to_string()),
        "{names:?}"
    );
    assert!(names.iter().all(|n| {
        n.len() <= 64
            && n.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
    }));

    let looked_up = claude.call("demo_alpha__lookup", json!({"key": "apple"}));
    assert_eq!(looked_up["isError"], false, "{looked_up}");
    assert!(
        looked_up["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("red"),
        "{looked_up}"
    );

    // Not offered (deny): refused at the call path with the local envelope.
    let denied = claude.call("demo_beta__reset", json!({}));
    let e = envelope(&denied);
    assert_eq!(e["code"], "mcp_permission_denied", "{denied}");
    assert_eq!(e["tool"], "demo_beta__reset");
    // In the client's names, not the harness's internal `mcp__…` ones.
    assert!(!denied.to_string().contains("mcp__"), "{denied}");

    // confirm under the default --approve never: refused, saying how to approve.
    let unapproved = claude.call("demo_alpha__set", json!({"key": "apple", "value": "blue"}));
    let e = envelope(&unapproved);
    assert_eq!(e["code"], "mcp_permission_denied", "{unapproved}");
    assert!(
        e["message"].as_str().unwrap().contains("--approve always"),
        "{unapproved}"
    );

    // The server's own error text (a stack trace with a secret) never leaves.
    let failed = claude.call("demo_alpha__fail", json!({}));
    let e = envelope(&failed);
    assert_eq!(e["code"], "mcp_remote_error", "{failed}");
    assert!(!failed.to_string().contains("sk-demo"), "{failed}");

    // Arguments the schema refuses are never sent.
    let invalid = claude.call("demo_alpha__lookup", json!({"key": 5}));
    assert_eq!(
        envelope(&invalid)["code"],
        "mcp_invalid_arguments",
        "{invalid}"
    );

    let unknown = claude.call("demo_alpha__nope", json!({}));
    assert_eq!(envelope(&unknown)["code"], "mcp_unknown_tool", "{unknown}");

    // The second client's profile sees demo_alpha only, and cannot call beta.
    let mut ci = TsClient::start(&interop, &gateway.url, Some(TOKEN_B), None);
    assert_eq!(ci.connect()["ok"], true);
    let names = ci.names();
    assert!(
        names.contains(&"demo_alpha__lookup".to_string()),
        "{names:?}"
    );
    assert!(
        names.iter().all(|n| n.starts_with("demo_alpha__")),
        "{names:?}"
    );
    let foreign = ci.call("demo_beta__lookup", json!({"key": "lima"}));
    let e = envelope(&foreign);
    assert_eq!(e["code"], "mcp_unknown_tool", "{foreign}");
    assert!(!foreign.to_string().contains("lima ="), "{foreign}");

    gateway.stop();
    // The audit log names the client of every outside call.
    let records = client_calls(&env);
    let of = |client: &str, tool: &str| {
        records
            .iter()
            .find(|r| r["client"] == client && r["tool"] == tool)
            .unwrap_or_else(|| panic!("no record of {client} calling {tool}: {records:#?}"))
            .clone()
    };
    let lookup = of("claude", "demo_alpha__lookup");
    assert_eq!(lookup["requested_by"], "client claude");
    assert_eq!(lookup["decision"], "allow");
    assert_eq!(lookup["outcome"], Value::Null);
    assert_eq!(
        of("claude", "demo_beta__reset")["decision"],
        "denied_by_policy"
    );
    assert_eq!(of("claude", "demo_alpha__set")["decision"], "denied");
    let foreign = of("ci", "demo_beta__lookup");
    assert_eq!(foreign["requested_by"], "client ci");
    assert_eq!(foreign["outcome"]["code"], "mcp_unknown_tool");
    env.assert_no_leaks();
}

#[cfg_attr(
    mcph_no_interop,
    ignore = "npm or python3 is missing: the interop tests install the pinned servers with them (docs/src/testing.md)"
)]
#[test]
fn serve_refuses_a_missing_or_wrong_token_and_a_foreign_origin() {
    let interop = Interop::get();
    let env = TestEnv::new();
    config(&env);
    let gateway = Gateway::start(&env);
    let refused = |token: Option<&str>, origin: Option<&str>| {
        let mut client = TsClient::start(&interop, &gateway.url, token, origin);
        let answer = client.connect();
        assert_eq!(answer.get("ok"), None, "let in: {answer}");
        answer["code"].clone()
    };
    assert_eq!(refused(None, None), 401);
    assert_eq!(refused(Some("not-a-token"), None), 401);
    assert_eq!(refused(Some(TOKEN_A), Some("http://evil.example")), 403);
    assert_eq!(
        refused(Some(TOKEN_A), Some("http://127.0.0.1.evil.example:80")),
        403
    );
    // A loopback origin (a local tool's page) with a token is let in.
    let mut local = TsClient::start(
        &interop,
        &gateway.url,
        Some(TOKEN_A),
        Some("http://localhost:3000"),
    );
    let answer = local.connect();
    assert_eq!(answer["ok"], true, "{answer}");
    // A session is the client's that opened it: with another client's token,
    // and for an id nobody opened, it is unknown (404, so hosts re-initialize).
    let session = answer["session"]
        .as_str()
        .expect("a session id")
        .to_string();
    assert_eq!(post_list(&gateway.url, TOKEN_A, &session), 200);
    assert_eq!(post_list(&gateway.url, TOKEN_B, &session), 404);
    assert_eq!(post_list(&gateway.url, TOKEN_A, "no-such-session"), 404);
    assert!(!local.names().is_empty(), "the owner's session still works");
    // Tokens never reach the log.
    gateway.stop();
    let log = std::fs::read_to_string(env.path("xdg-data/mcp-harness/mcp-harness.log"))
        .unwrap_or_default();
    let stderr = std::fs::read_to_string(env.path("serve.stderr")).unwrap_or_default();
    for text in [&log, &stderr] {
        assert!(
            !text.contains(TOKEN_A) && !text.contains("not-a-token"),
            "a token leaked:\n{text}"
        );
    }
    env.assert_no_leaks();
}

#[cfg_attr(
    mcph_no_interop,
    ignore = "npm or python3 is missing: the interop tests install the pinned servers with them (docs/src/testing.md)"
)]
#[test]
fn serve_tells_the_client_when_an_upstream_dies() {
    let interop = Interop::get();
    let env = TestEnv::new();
    config(&env);
    let gateway = Gateway::start(&env);
    let mut claude = TsClient::start(&interop, &gateway.url, Some(TOKEN_A), None);
    assert_eq!(claude.connect()["ok"], true);
    assert!(claude.names().contains(&"demo_beta__lookup".to_string()));

    // Kill demo_beta's server process (not its supervisor): the watchdog revokes it.
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
    Command::new("kill")
        .args(["-9", &beta[0].to_string()])
        .status()
        .unwrap();

    let changed = claude.ask(json!({"op": "wait_list_changed"}));
    assert!(changed["list_changed"].as_u64().unwrap() >= 1, "{changed}");
    let names = claude.names();
    assert!(
        names.iter().all(|n| !n.starts_with("demo_beta__")),
        "{names:?}"
    );
    assert!(
        names.contains(&"demo_alpha__lookup".to_string()),
        "{names:?}"
    );
    // A host that ignores list_changed is refused, with the local envelope.
    let gone = claude.call("demo_beta__lookup", json!({"key": "lima"}));
    assert_eq!(envelope(&gone)["code"], "mcp_unknown_tool", "{gone}");
    // alpha keeps working.
    let alpha = claude.call("demo_alpha__lookup", json!({"key": "apple"}));
    assert_eq!(alpha["isError"], false, "{alpha}");
    gateway.stop();
    env.assert_no_leaks();
}

/// Two demo servers under the aliases `a` and `demo_beta`, with `[serve]` keys.
fn naming_config(env: &TestEnv, serve: &str) {
    let tools = "lookup = \"allow\"\nset = \"confirm\"\nreset = \"confirm\"\nfail = \"allow\"\nslow = \"allow\"\n";
    env.config(&format!(
        "{}[servers.a.tools]\n{tools}{}[servers.demo_beta.tools]\n{tools}\
         [serve]\n{serve}[serve.clients.claude]\ntoken_env = \"MCPH_TEST_TOKEN_A\"\n\
         [serve.clients.ci]\ntoken_env = \"MCPH_TEST_TOKEN_B\"\n",
        env.demo("a", "alpha", &[]),
        env.demo("demo_beta", "beta", &[]),
    ));
}

#[cfg_attr(
    mcph_no_interop,
    ignore = "npm or python3 is missing: the interop tests install the pinned servers with them (docs/src/testing.md)"
)]
#[test]
fn serve_rejects_an_alias_whose_names_are_too_long_or_collide_and_approves_with_the_flag() {
    let interop = Interop::get();
    // `demo_beta__lookup` is 17 characters: over 12, so demo_beta is not offered.
    let env = TestEnv::new();
    naming_config(&env, "max_name_len = 12\n");
    let gateway = Gateway::start_with(&env, &["--approve", "always"]);
    let mut claude = TsClient::start(&interop, &gateway.url, Some(TOKEN_A), None);
    assert_eq!(claude.connect()["ok"], true);
    let mut names = claude.names();
    names.sort();
    assert_eq!(
        names,
        ["a__fail", "a__lookup", "a__reset", "a__set", "a__slow"]
    );
    let refused = claude.call("demo_beta__set", json!({"key": "lima", "value": "x"}));
    assert_eq!(envelope(&refused)["code"], "mcp_unknown_tool", "{refused}");
    // --approve always: a confirm tool runs.
    let approved = claude.call("a__set", json!({"key": "apple", "value": "blue"}));
    assert_eq!(approved["isError"], false, "{approved}");
    let after = claude.call("a__lookup", json!({"key": "apple"}));
    assert!(
        after["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("blue"),
        "{after}"
    );
    gateway.stop();
    let stderr = std::fs::read_to_string(env.path("serve.stderr")).unwrap();
    assert!(
        stderr.contains("`demo_beta` is not offered to client `claude`"),
        "{stderr}"
    );
    let set = client_calls(&env)
        .into_iter()
        .find(|r| r["tool"] == "a__set")
        .expect("a record of a__set");
    assert_eq!(set["decision"], "approved");
    env.assert_no_leaks();

    // Bare names: both servers publish `lookup`, so the later alias is not offered.
    let env = TestEnv::new();
    naming_config(&env, "names = \"bare\"\n");
    let gateway = Gateway::start(&env);
    let mut claude = TsClient::start(&interop, &gateway.url, Some(TOKEN_A), None);
    assert_eq!(claude.connect()["ok"], true);
    let mut names = claude.names();
    names.sort();
    assert_eq!(names, ["fail", "lookup", "reset", "set", "slow"]);
    let looked_up = claude.call("lookup", json!({"key": "apple"}));
    assert!(
        looked_up["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("demo-alpha"),
        "{looked_up}"
    );
    gateway.stop();
    env.assert_no_leaks();
}

/// The Python SDK's client (`tests/it/fixtures/serve_client.py`): lists, then
/// makes `calls`; what it printed.
pub(crate) fn python_client(interop: &Interop, url: &str, token: &str, calls: Value) -> Value {
    let script =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/it/fixtures/serve_client.py");
    let mut child = Command::new(interop.python())
        .arg(script)
        .arg(url)
        .arg(token)
        .arg(calls.to_string())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("spawn python");
    let lines = lines_of(child.stdout.take().unwrap());
    let line = lines
        .recv_timeout(WAIT)
        .expect("the Python client printed its report");
    let _ = child.wait();
    serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"))
}

#[cfg_attr(
    mcph_no_interop,
    ignore = "npm or python3 is missing: the interop tests install the pinned servers with them (docs/src/testing.md)"
)]
#[test]
fn serve_works_the_same_for_the_python_sdk_client() {
    let interop = Interop::get();
    let env = TestEnv::new();
    config(&env);
    let gateway = Gateway::start(&env);
    let claude = python_client(
        &interop,
        &gateway.url,
        TOKEN_A,
        json!([
            {"name": "demo_beta__lookup", "arguments": {"key": "lima"}},
            {"name": "demo_beta__reset", "arguments": {}},
        ]),
    );
    let tools = claude["tools"].as_array().unwrap();
    assert!(tools.contains(&json!("demo_beta__lookup")), "{claude}");
    assert!(!tools.contains(&json!("demo_beta__reset")), "{claude}");
    assert_eq!(claude["results"][0]["isError"], false, "{claude}");
    assert_eq!(
        envelope(&claude["results"][1])["code"],
        "mcp_permission_denied"
    );

    let ci = python_client(
        &interop,
        &gateway.url,
        TOKEN_B,
        json!([
            {"name": "demo_alpha__lookup", "arguments": {"key": "apple"}},
            {"name": "demo_beta__lookup", "arguments": {"key": "lima"}},
        ]),
    );
    let tools = ci["tools"].as_array().unwrap();
    assert!(!tools.is_empty(), "{ci}");
    assert!(
        tools
            .iter()
            .all(|t| t.as_str().unwrap().starts_with("demo_alpha__")),
        "{ci}"
    );
    assert_eq!(ci["results"][0]["isError"], false, "{ci}");
    assert_eq!(
        envelope(&ci["results"][1])["code"],
        "mcp_unknown_tool",
        "{ci}"
    );
    gateway.stop();
    let records = client_calls(&env);
    assert!(
        records
            .iter()
            .any(|r| r["client"] == "ci" && r["tool"] == "demo_alpha__lookup"),
        "{records:#?}"
    );
    env.assert_no_leaks();
}

#[cfg_attr(
    mcph_no_interop,
    ignore = "npm or python3 is missing: the interop tests install the pinned servers with them (docs/src/testing.md)"
)]
#[test]
fn serve_withdraws_a_rug_pulled_definition_and_tells_the_client() {
    let interop = Interop::get();
    let env = TestEnv::new();
    // demo_beta changes `lookup` on its first call (hidden instructions in the
    // same-looking description) and says its tool list changed.
    let tools = "lookup = \"allow\"\nset = \"confirm\"\nreset = \"deny\"\nfail = \"allow\"\nslow = \"allow\"\n";
    env.config(&format!(
        "{}[servers.demo_beta.tools]\n{tools}[serve.clients.claude]\ntoken_env = \"MCPH_TEST_TOKEN_A\"\n\
         [serve.clients.ci]\ntoken_env = \"MCPH_TEST_TOKEN_B\"\n",
        env.demo("demo_beta", "beta", &["--fault", "mutate-tools=rug-pull"]),
    ));
    let gateway = Gateway::start(&env);
    let mut claude = TsClient::start(&interop, &gateway.url, Some(TOKEN_A), None);
    assert_eq!(claude.connect()["ok"], true);
    let before = claude.ask(json!({"op": "list"}));
    assert!(before.to_string().contains("demo_beta__lookup"), "{before}");
    let first = claude.call("demo_beta__lookup", json!({"key": "lima"}));
    assert_eq!(first["isError"], false, "{first}");

    // The changed definition breaks its pin: the gateway withdraws the
    // alias's tools and tells the client, which never sees the new text.
    let changed = claude.ask(json!({"op": "wait_list_changed"}));
    assert!(changed["list_changed"].as_u64().unwrap() >= 1, "{changed}");
    let after = claude.ask(json!({"op": "list"}));
    assert!(!after.to_string().contains("demo_beta__lookup"), "{after}");
    assert!(!after.to_string().contains("\u{200b}"), "{after}");
    let again = claude.call("demo_beta__lookup", json!({"key": "lima"}));
    assert_eq!(envelope(&again)["code"], "mcp_unknown_tool", "{again}");
    gateway.stop();
    env.assert_no_leaks();
}

/// Audit records go to one writer thread in batches: a SIGTERM right after
/// the last answer still finds every answered call in the audit log.
#[cfg_attr(
    mcph_no_interop,
    ignore = "npm or python3 is missing: the interop tests install the pinned servers with them (docs/src/testing.md)"
)]
#[test]
fn every_answered_call_is_audited_when_serve_is_stopped_right_after() {
    let interop = Interop::get();
    let env = TestEnv::new();
    config(&env);
    let gateway = Gateway::start(&env);
    let mut claude = TsClient::start(&interop, &gateway.url, Some(TOKEN_A), None);
    assert_eq!(claude.connect()["ok"], true);
    let calls = 400;
    let burst = claude.ask(json!({
        "op": "burst", "name": "demo_alpha__lookup", "arguments": {"key": "apple"},
        "count": calls, "in_flight": 16,
    }));
    assert_eq!(burst["ok"], calls, "{burst}");
    // No pause: the signal lands while the last records may still be queued.
    gateway.stop();
    let audited = client_calls(&env);
    let lookups: Vec<&Value> = audited
        .iter()
        .filter(|r| r["tool"] == "demo_alpha__lookup" && r["decision"] == "allow")
        .collect();
    assert_eq!(lookups.len(), calls, "audited: {}", audited.len());
    let ids: std::collections::HashSet<&str> = lookups
        .iter()
        .map(|r| r["call"].as_str().expect("a call id"))
        .collect();
    assert_eq!(ids.len(), calls, "one record per call, each its own id");
}

/// `max_tools` refuses to serve more, never cuts: an alias whose tools would
/// bring the client over its cap is not offered at all (and cannot be
/// called), said at start; another client without a cap sees everything.
#[cfg_attr(
    mcph_no_interop,
    ignore = "npm or python3 is missing: the interop tests install the pinned servers with them (docs/src/testing.md)"
)]
#[test]
fn a_client_over_its_max_tools_is_refused_whole_aliases_never_a_cut_list() {
    let interop = Interop::get();
    let env = TestEnv::new();
    let tools = "lookup = \"allow\"\nset = \"confirm\"\nreset = \"confirm\"\nfail = \"allow\"\nslow = \"allow\"\n";
    env.config(&format!(
        "{}[servers.a.tools]\n{tools}{}[servers.demo_beta.tools]\n{tools}\
         [serve.clients.claude]\ntoken_env = \"MCPH_TEST_TOKEN_A\"\n\
         [serve.clients.ci]\ntoken_env = \"MCPH_TEST_TOKEN_B\"\nmax_tools = 6\n",
        env.demo("a", "alpha", &[]),
        env.demo("demo_beta", "beta", &[]),
    ));
    let gateway = Gateway::start(&env);
    // `a` (5 tools) fits in 6; demo_beta's would make 9: not offered to ci.
    let mut ci = TsClient::start(&interop, &gateway.url, Some(TOKEN_B), None);
    assert_eq!(ci.connect()["ok"], true);
    let mut names = ci.names();
    names.sort();
    assert_eq!(
        names,
        ["a__fail", "a__lookup", "a__reset", "a__set", "a__slow"]
    );
    let refused = ci.call("demo_beta__lookup", json!({"key": "lima"}));
    assert_eq!(envelope(&refused)["code"], "mcp_unknown_tool", "{refused}");
    let mut claude = TsClient::start(&interop, &gateway.url, Some(TOKEN_A), None);
    assert_eq!(claude.connect()["ok"], true);
    let claude_names = claude.names();
    assert!(
        claude_names.len() > 6 && claude_names.contains(&"demo_beta__lookup".to_string()),
        "{claude_names:?}"
    );
    gateway.stop();
    let stderr = std::fs::read_to_string(env.path("serve.stderr")).unwrap();
    assert!(
        stderr.contains("`demo_beta` is not offered to client `ci`: its ")
            && stderr.contains("over its max_tools = 6 (5 offered already)"),
        "{stderr}"
    );
    env.assert_no_leaks();
}

/// Flow control per outside client (issue 24): each client's gateway session
/// is tainted by its own calls only. `claude` reads untrusted content
/// (demo_beta's `lookup`) and private data (demo_alpha's `lookup`), then its
/// call of the sink (demo_alpha's `set`, policy `allow`) is refused under
/// `on_trifecta = "deny"`; `ci`, whose session read nothing, calls the same
/// sink and it runs.
#[cfg_attr(
    mcph_no_interop,
    ignore = "npm or python3 is missing: the interop tests install the pinned servers with them (docs/src/testing.md)"
)]
#[test]
fn each_clients_session_has_its_own_taint() {
    let interop = Interop::get();
    let env = TestEnv::new();
    let tools = "lookup = \"allow\"\nset = \"allow\"\nreset = \"allow\"\nfail = \"allow\"\nslow = \"allow\"\n";
    env.config(&format!(
        "[flows]\non_trifecta = \"deny\"\n\
         {}[servers.demo_alpha.tools]\n{tools}[servers.demo_alpha.tool_labels]\n\
         lookup = [\"private_data\"]\nset = [\"external_sink\"]\n\
         {}labels = [\"untrusted_content\"]\n[servers.demo_beta.tools]\n{tools}\
         [serve.clients.claude]\ntoken_env = \"MCPH_TEST_TOKEN_A\"\n\
         [serve.clients.ci]\ntoken_env = \"MCPH_TEST_TOKEN_B\"\nservers = [\"demo_alpha\"]\n",
        env.demo("demo_alpha", "alpha", &[]),
        env.demo("demo_beta", "beta", &[]),
    ));
    let gateway = Gateway::start(&env);
    let mut claude = TsClient::start(&interop, &gateway.url, Some(TOKEN_A), None);
    assert_eq!(claude.connect()["ok"], true);
    let fetched = claude.call("demo_beta__lookup", json!({"key": "oslo"}));
    assert_eq!(fetched["isError"], false, "{fetched}");
    let read = claude.call("demo_alpha__lookup", json!({"key": "apple"}));
    assert_eq!(read["isError"], false, "{read}");
    let sent = claude.call("demo_alpha__set", json!({"key": "k", "value": "v"}));
    assert_eq!(envelope(&sent)["code"], "mcp_flow_denied", "{sent}");

    let mut ci = TsClient::start(&interop, &gateway.url, Some(TOKEN_B), None);
    assert_eq!(ci.connect()["ok"], true);
    let sent = ci.call("demo_alpha__set", json!({"key": "k", "value": "v"}));
    assert_eq!(sent["isError"], false, "ci's session is clean: {sent}");
    gateway.stop();
    let denied = audit_records(&env, "flow_denied");
    assert_eq!(denied.len(), 1, "{denied:?}");
    let by: Vec<&str> = denied[0]["tainted_by"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["tool"].as_str().unwrap())
        .collect();
    assert_eq!(by, ["mcp__demo_beta__lookup", "mcp__demo_alpha__lookup"]);
    env.assert_no_leaks();
}

/// A hostile upstream that hides text in invisible code points (a tag-
/// character instruction in `lookup`'s description and in its result): an
/// outside client's model gets neither, as the Lead's does not.
#[test]
fn no_invisible_character_reaches_an_outside_client() {
    let interop = Interop::get();
    let env = TestEnv::new();
    env.config(&format!(
        "{}[servers.demo_alpha.tools]\nlookup = \"allow\"\nset = \"confirm\"\nreset = \"deny\"\n\
         fail = \"allow\"\nslow = \"allow\"\n\
         [serve.clients.claude]\ntoken_env = \"MCPH_TEST_TOKEN_A\"\n",
        env.demo("demo_alpha", "alpha", &["--fault", "hidden-text"]),
    ));
    let gateway = Gateway::start(&env);
    let mut claude = TsClient::start(&interop, &gateway.url, Some(TOKEN_A), None);
    assert_eq!(claude.connect()["ok"], true);
    let listed = claude.ask(json!({"op": "list"}));
    let looked_up = claude.call("demo_alpha__lookup", json!({"key": "apple"}));
    assert_eq!(looked_up["isError"], false, "{looked_up}");
    assert!(
        looked_up.to_string().contains("apple"),
        "the visible answer arrives: {looked_up}"
    );
    for (what, value) in [("the tool list", &listed), ("the result", &looked_up)] {
        let text = value.to_string();
        let hidden: Vec<char> = text
            .chars()
            .filter(|c| mcp_harness::sanitize::hidden::is_invisible(*c))
            .collect();
        assert!(hidden.is_empty(), "{what} carries {hidden:?}: {text}");
    }
    gateway.stop();
    env.assert_no_leaks();
}
