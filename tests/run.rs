//! `mcp-harness run` as a script uses it: JSON event lines, `--approve`, the
//! session files and `--resume`.

mod common;
#[path = "provider_openai/wire.rs"]
mod wire;

use std::process::Output;

use common::TestEnv;
use common::model_stub::{ModelStub, Reply};
use serde_json::{Value, json};

const POLICY: &str = "lookup = \"allow\"\nset = \"confirm\"\nreset = \"confirm\"\nfail = \"allow\"\nslow = \"allow\"\n";

fn servers(env: &TestEnv) -> String {
    format!(
        "{}[servers.demo_alpha.tools]\n{POLICY}{}[servers.demo_beta.tools]\n{POLICY}",
        env.demo("demo_alpha", "alpha", &[]),
        env.demo("demo_beta", "beta", &[])
    )
}

fn run(env: &TestEnv, args: &[&str]) -> (Output, Vec<Value>) {
    let mut argv = vec!["run"];
    argv.extend_from_slice(args);
    let out = env
        .command(&argv)
        .env_remove("ANTHROPIC_API_KEY")
        .env_remove("OPENAI_API_KEY")
        .output()
        .unwrap();
    let events = common::stdout(&out)
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect();
    (out, events)
}

fn of<'a>(events: &'a [Value], kind: &str) -> Vec<&'a Value> {
    events.iter().filter(|e| e["event"] == kind).collect()
}

#[test]
fn the_scripted_demo_runs_headless_with_json_events() {
    let env = TestEnv::new();
    env.config(&format!(
        "[model]\nprovider = \"scripted\"\n{}",
        servers(&env)
    ));
    let (out, events) = run(&env, &["--prompt", "show me", "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", common::stderr(&out));
    assert!(!of(&events, "assistant_text").is_empty());
    assert!(
        of(&events, "registry")
            .iter()
            .any(|e| e["change"] == "registered" && e["alias"] == "demo_alpha")
    );
    assert!(
        of(&events, "registry")
            .iter()
            .any(|e| e["change"] == "revoked" && e["cause"]["kind"] == "disconnected")
    );
    let set = of(&events, "tool_result")
        .into_iter()
        .find(|e| e["name"] == "mcp__demo_alpha__set")
        .unwrap()
        .clone();
    assert_eq!(set["ok"], false);
    assert_eq!(
        set["error"]["code"], "mcp_permission_denied",
        "--approve never is the default"
    );
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
    let set = of(&events, "tool_result")
        .into_iter()
        .find(|e| e["name"] == "mcp__demo_alpha__set")
        .unwrap()
        .clone();
    assert_eq!(set["ok"], true, "{set}");
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
    let stderr = common::stderr(&out);
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
    assert_eq!(out.status.code(), Some(0), "{}", common::stderr(&out));
    let (out, events) = tokio::task::block_in_place(|| {
        run(&env, &["--prompt", "second question", "--json", "--resume"])
    });
    assert_eq!(out.status.code(), Some(0), "{}", common::stderr(&out));
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
