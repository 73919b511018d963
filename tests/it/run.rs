//! `mcp-harness run` as a script uses it: JSON event lines, `--approve`, the
//! session files and `--resume`.

use crate::provider_openai::wire;

use crate::common::TestEnv;
use crate::common::headless::{of, run};
use crate::common::model_stub::{ModelStub, Reply};
use serde_json::{Value, json};

const POLICY: &str = "lookup = \"allow\"\nset = \"confirm\"\nreset = \"confirm\"\nfail = \"allow\"\nslow = \"allow\"\n";

fn servers(env: &TestEnv) -> String {
    format!(
        "{}[servers.demo_alpha.tools]\n{POLICY}{}[servers.demo_beta.tools]\n{POLICY}",
        env.demo("demo_alpha", "alpha", &[]),
        env.demo("demo_beta", "beta", &[])
    )
}

/// The embedded default config, with the demo servers tagged (`{TAG}`, filled
/// in by `TestEnv::config`) for the leak check.
fn embedded_default() -> String {
    let mut text = mcp_harness::config::EMBEDDED_DEFAULT.to_string();
    for server in ["alpha", "beta"] {
        let args = format!("args = [\"demo-server\", \"{server}\"]");
        assert!(text.contains(&args), "the embedded default changed shape");
        text = text.replace(
            &args,
            &format!("args = [\"demo-server\", \"{server}\", \"--tag\", \"{{TAG}}\"]"),
        );
    }
    text
}

/// The `(name, arguments)` of every tool call and the result that follows it,
/// in the order the agent made them. (The calls of one reply to servers run
/// together, so a result follows its own call, not necessarily the one just
/// before it: each is found by its call's id.)
fn calls_and_results(events: &[Value]) -> Vec<(String, Value, Value)> {
    let calls = of(events, "tool_call");
    let results = of(events, "tool_result");
    assert_eq!(calls.len(), results.len(), "every call has one result");
    calls
        .iter()
        .map(|call| {
            let at = |kind: &str| {
                events
                    .iter()
                    .position(|e| e["event"] == kind && e["id"] == call["id"])
                    .unwrap()
            };
            let found: Vec<&&Value> = results.iter().filter(|r| r["id"] == call["id"]).collect();
            assert_eq!(found.len(), 1, "one result per call: {call}");
            assert!(
                at("tool_call") < at("tool_result"),
                "results follow their calls"
            );
            let name = call["name"].as_str().unwrap().to_string();
            (name, call["arguments"].clone(), (*found[0]).clone())
        })
        .collect()
}

/// The whole story of assets/demo-scenario.toml, in order.
fn assert_demo_story(events: &[Value], approved: bool) {
    let steps = calls_and_results(events);
    let story: Vec<(&str, Value)> = steps
        .iter()
        .map(|(name, args, _)| (name.as_str(), args.clone()))
        .collect();
    let alpha = json!({"alias": "demo_alpha"});
    assert_eq!(
        story,
        [
            ("list_mcp_servers", json!({})),
            ("connect_mcp", alpha.clone()),
            ("connect_mcp", json!({"alias": "demo_beta"})),
            ("mcp__demo_alpha__lookup", json!({"key": "apple"})),
            ("mcp__demo_alpha__lookup", json!({"key": "apple"})),
            ("mcp__demo_beta__lookup", json!({"key": "lima"})),
            (
                "mcp__demo_alpha__set",
                json!({"key": "apple", "value": "green"})
            ),
            ("mcp__demo_alpha__reset", json!({})),
            (
                "mcp__demo_beta__set",
                json!({"key": "lima", "value": "Peru"})
            ),
            (
                "mcp__demo_beta__set",
                json!({"key": "oslo", "value": "Norway"})
            ),
            ("disconnect_mcp", alpha.clone()),
            ("mcp__demo_alpha__lookup", json!({"key": "apple"})),
            ("mcp__demo_beta__lookup", json!({"key": "oslo"})),
            ("connect_mcp", alpha),
        ]
    );
    let result = |i: usize| &steps[i].2;
    let content = |i: usize| {
        let r = result(i);
        assert_eq!(r["ok"], true, "step {i}: {r}");
        r["content"].as_str().unwrap().to_string()
    };
    let listing = content(0);
    assert!(listing.contains("demo_alpha") && listing.contains("demo_beta"));
    assert!(content(1).starts_with("connected `demo_alpha`"));
    assert!(content(2).starts_with("connected `demo_beta`"));
    // Called in the reply that connected alpha: not in that request's tool set.
    let early = result(3);
    assert_eq!(early["ok"], false);
    assert_eq!(early["error"]["code"], "mcp_unknown_tool");
    let message = early["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("not in this request's tool set")
            && message.contains("will be offered on the next request"),
        "{message}"
    );
    // One published name, two distinct tools with their own data.
    let (apple, lima) = (content(4), content(5));
    assert!(apple.contains("demo-alpha") && lima.contains("demo-beta"));
    assert_ne!(apple, lima);
    // The `confirm` calls: set, reset, and beta's set twice.
    for i in 6..10 {
        let confirmed = result(i);
        if approved {
            assert_eq!(confirmed["ok"], true, "--approve always: {confirmed}");
        } else {
            assert_eq!(confirmed["ok"], false, "--approve never: {confirmed}");
            assert_eq!(confirmed["error"]["code"], "mcp_permission_denied");
        }
    }
    assert!(content(10).contains("revoked"));
    // After the disconnect alpha's lookup is gone; beta's is untouched.
    let gone = result(11);
    assert_eq!(gone["ok"], false, "{gone}");
    assert_eq!(gone["error"]["alias"], "demo_alpha");
    assert!(content(12).contains("demo-beta"));
    assert!(content(13).starts_with("connected `demo_alpha`"));

    // One stream, in the order things happened: a connect's `registered` comes
    // before the tool result that reports it, and a disconnect's `revoked` too.
    let at = |pred: &dyn Fn(&Value) -> bool| {
        events
            .iter()
            .position(pred)
            .unwrap_or_else(|| panic!("missing event"))
    };
    for alias in ["demo_alpha", "demo_beta"] {
        let registered =
            at(&|e| e["event"] == "registry" && e["change"] == "registered" && e["alias"] == alias);
        let reported = at(&|e| {
            e["event"] == "tool_result"
                && e["name"] == "connect_mcp"
                && e["content"]
                    .as_str()
                    .is_some_and(|c| c.contains(&format!("`{alias}`")))
        });
        assert!(registered < reported, "{alias}: {events:#?}");
    }
    let revoked = at(&|e| e["event"] == "registry" && e["change"] == "revoked");
    let reported = at(&|e| e["event"] == "tool_result" && e["name"] == "disconnect_mcp");
    assert!(revoked < reported, "{events:#?}");

    // The registry's own order.
    let registry: Vec<(&str, &str, u64)> = of(events, "registry")
        .iter()
        .map(|e| {
            (
                e["change"].as_str().unwrap(),
                e["alias"].as_str().unwrap(),
                e["connection"].as_u64().unwrap(),
            )
        })
        .collect();
    let [a1, b1, revoked, a2] = &registry[..4] else {
        panic!("{registry:?}")
    };
    assert_eq!((a1.0, a1.1), ("registered", "demo_alpha"));
    assert_eq!((b1.0, b1.1), ("registered", "demo_beta"));
    assert_eq!(*revoked, ("revoked", "demo_alpha", a1.2));
    let cause = of(events, "registry")
        .into_iter()
        .find(|e| e["change"] == "revoked")
        .map(|e| e["cause"]["kind"].clone());
    assert_eq!(cause, Some(json!("disconnected")));
    assert_eq!((a2.0, a2.1), ("registered", "demo_alpha"));
    assert_ne!(a2.2, a1.2, "the reconnect is a new connection");
    // At the end of the run both are closed.
    assert!(registry[4..].iter().all(|e| e.0 == "revoked"));
    assert_eq!(registry.len(), 6, "{registry:?}");
    assert_eq!(of(events, "assistant_text").len(), 11);
}

#[test]
fn the_scripted_demo_runs_headless_with_json_events() {
    let env = TestEnv::new();
    // A config file of one's own replays the demo only when it asks for it.
    env.config(&format!(
        "[model]\nprovider = \"scripted\"\n{}",
        embedded_default()
    ));
    let (out, events) = run(&env, &["--prompt", "show me", "--json"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        crate::common::stderr(&out)
    );
    assert_demo_story(&events, false);
    let done = events.last().unwrap();
    assert_eq!(done["event"], "done");
    assert_eq!(done["end"]["end"], "completed");
    // Every call is in the audit log, with the denial.
    let session = done["session"].as_str().unwrap();
    let dir = env
        .dir
        .path()
        .join("xdg-data/mcp-harness/sessions")
        .join(session);
    let audit = std::fs::read_to_string(dir.join("audit.jsonl")).unwrap();
    assert!(audit.contains(r#""decision":"denied""#), "{audit}");
    assert!(audit.contains(r#""event":"revoked""#));
    let transcript = std::fs::read_to_string(dir.join("transcript.jsonl")).unwrap();
    assert!(transcript.contains("show me"));
    env.assert_no_leaks();

    let (out, events) = run(
        &env,
        &["--prompt", "show me", "--json", "--approve", "always"],
    );
    assert_eq!(out.status.code(), Some(0));
    assert_demo_story(&events, true);
    env.assert_no_leaks();
}

#[test]
fn the_embedded_default_replays_the_demo_headless() {
    let env = TestEnv::new();
    // No config file anywhere and no key: the embedded default and its demo.
    let mut command = std::process::Command::new(crate::common::BIN);
    command
        .args(["run", "--prompt", "show me", "--json"])
        .env_remove("ANTHROPIC_API_KEY")
        .env_remove("OPENAI_API_KEY");
    crate::common::isolate(&mut command, env.dir.path());
    let out = command.output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        crate::common::stderr(&out)
    );
    let events: Vec<Value> = crate::common::stdout(&out)
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect();
    assert_demo_story(&events, false);
    assert_eq!(events.last().unwrap()["end"]["end"], "completed");
}

#[test]
fn a_config_of_ones_own_without_a_model_refuses_to_run() {
    let env = TestEnv::new();
    // The embedded default's servers under a file of one's own, no [model], no key.
    env.config(&embedded_default());
    let message = "no model configured: set ANTHROPIC_API_KEY / OPENAI_API_KEY or `[model]`; \
                   you can still connect, inspect and call tools by hand";
    let (out, events) = run(&env, &["--prompt", "show me"]);
    let stderr = crate::common::stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains(message), "{stderr}");
    assert!(events.is_empty(), "nothing on stdout: {events:?}");

    let (out, events) = run(&env, &["--prompt", "show me", "--json"]);
    assert_eq!(
        out.status.code(),
        Some(2),
        "{}",
        crate::common::stderr(&out)
    );
    assert_eq!(
        events,
        [
            json!({"event": "error", "agent": "lead", "code": "no_model", "message": message}),
            json!({"event": "done", "end": {"end": "failed", "message": message}, "session": null}),
        ]
    );
    // Nothing was replayed, started or kept.
    assert!(env.tagged_processes().is_empty());
    assert!(
        !env.path("xdg-data/mcp-harness/sessions").exists(),
        "a refused run keeps no session"
    );
    env.assert_no_leaks();
}

#[test]
fn a_reader_that_stops_early_does_not_crash_the_run() {
    use std::io::BufRead as _;
    let env = TestEnv::new();
    env.config(&format!(
        "[model]\nprovider = \"scripted\"\n{}",
        servers(&env)
    ));
    // `mcp-harness run --json | head -1`: one line is read, then the pipe closes
    // while the scripted demo still has most of its story to tell.
    let mut child = env
        .command(&["run", "--prompt", "x", "--json"])
        .env_remove("ANTHROPIC_API_KEY")
        .env_remove("OPENAI_API_KEY")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut reader = std::io::BufReader::new(child.stdout.take().unwrap());
    let mut first = String::new();
    reader.read_line(&mut first).unwrap();
    assert!(
        serde_json::from_str::<Value>(&first).is_ok(),
        "not a JSON line: {first}"
    );
    drop(reader);
    let out = child.wait_with_output().unwrap();
    let stderr = crate::common::stderr(&out);
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_eq!(
        out.status.code(),
        Some(0),
        "the run completes without its reader: {stderr}"
    );
    env.assert_no_leaks();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resume_restores_the_conversation_and_tells_the_model_what_was_connected() {
    let env = TestEnv::new();
    let connect = {
        let mut chunks = vec![wire::chunk(
            json!({"role": "assistant", "content": null}),
            None,
        )];
        chunks.push(wire::tool_fragment(
            0,
            Some("c1"),
            Some("connect_mcp"),
            r#"{"alias":"demo_alpha"}"#,
        ));
        chunks.extend(wire::end("tool_calls"));
        Reply::sse(chunks)
    };
    let stub = ModelStub::start(vec![
        connect,
        Reply::sse(wire::text_reply(&["connected it"])),
        Reply::sse(wire::text_reply(&["welcome back"])),
    ])
    .await;
    env.config(&format!(
        "[model]\nprovider = \"openai\"\nbase_url = \"{}/v1\"\nmodel = \"gpt-test\"\n{}",
        stub.url(),
        servers(&env)
    ));
    // The harness is a child process; the model stub keeps running on the runtime.
    let (out, _) =
        tokio::task::block_in_place(|| run(&env, &["--prompt", "first question", "--json"]));
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        crate::common::stderr(&out)
    );
    let (out, events) = tokio::task::block_in_place(|| {
        run(&env, &["--prompt", "second question", "--json", "--resume"])
    });
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        crate::common::stderr(&out)
    );
    assert_eq!(of(&events, "assistant_text")[0]["text"], "welcome back");
    let requests = stub.requests();
    let resumed = requests[2].body["messages"].to_string();
    assert!(
        resumed.contains("first question") && resumed.contains("connected it"),
        "{resumed}"
    );
    assert!(
        resumed.contains("This session was resumed") && resumed.contains("demo_alpha"),
        "{resumed}"
    );
    assert!(resumed.contains("second question"));
    env.assert_no_leaks();
}
