//! The session logs cannot drive a terminal (C1 controls and bidi characters are
//! written as `\uXXXX`, losslessly), and the sizes the model chooses for the
//! read-only tools are capped, with the caps in the descriptions it reads.

use crate::provider_openai::wire;

use crate::common::TestEnv;
use crate::common::headless::{of, run};
use crate::common::model_stub::{ModelStub, Reply};
use serde_json::{Value, json};

/// A model reply with these tool calls (ids `{prefix}_{i}`), in one message.
fn tool_calls(prefix: &str, list: &[(&str, Value)]) -> Reply {
    let mut chunks = vec![wire::chunk(
        json!({"role": "assistant", "content": null}),
        None,
    )];
    for (i, (name, args)) in list.iter().enumerate() {
        let id = format!("{prefix}_{i}");
        chunks.push(wire::tool_fragment(
            i as u64,
            Some(&id),
            Some(name),
            &args.to_string(),
        ));
    }
    chunks.extend(wire::end("tool_calls"));
    Reply::sse(chunks)
}

fn model_config(stub: &ModelStub) -> String {
    format!(
        "[model]\nprovider = \"openai\"\nbase_url = \"{}/v1\"\nmodel = \"gpt-test\"\n",
        stub.url()
    )
}

/// Characters a terminal acts on that serde_json writes raw.
const RAW: [char; 4] = ['\u{9b}', '\u{202e}', '\u{7f}', '\u{2066}'];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn session_logs_escape_c1_and_bidi_characters_and_keep_the_data() {
    let env = TestEnv::new();
    let stub = ModelStub::start(vec![
        tool_calls("c", &[("connect_mcp", json!({"alias": "alpha"}))]),
        tool_calls(
            "t",
            &[
                ("mcp__alpha__fail", json!({"reason": "r"})),
                ("mcp__alpha__lookup", json!({"key": "apple"})),
            ],
        ),
        Reply::sse(wire::text_reply(&["done \u{202e}reversed\u{9b}"])),
    ])
    .await;
    env.config(&format!(
        "{}{}[servers.alpha.tools]\nlookup = \"allow\"\nset = \"allow\"\nreset = \"allow\"\nfail = \"allow\"\nslow = \"allow\"\n",
        model_config(&stub),
        env.demo("alpha", "alpha", &["--fault", "escapes"])
    ));
    // The operator's own prompt carries them too.
    let prompt = "look \u{202e}up\u{9b}31m \u{2066}x\u{7f}";
    let (out, events) = tokio::task::block_in_place(|| run(&env, &["--prompt", prompt, "--json"]));
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        crate::common::stderr(&out)
    );
    let done = of(&events, "done")[0];
    let dir = env
        .dir
        .path()
        .join("xdg-data/mcp-harness/sessions")
        .join(done["session"].as_str().unwrap());
    for file in ["audit.jsonl", "transcript.jsonl"] {
        let text = std::fs::read_to_string(dir.join(file)).unwrap();
        for raw in RAW {
            assert!(!text.contains(raw), "raw {raw:?} in {file}:\n{text}");
        }
        // Valid JSON, and the characters are still there once parsed.
        let mut decoded = String::new();
        for line in text.lines() {
            let value: Value = serde_json::from_str(line)
                .unwrap_or_else(|e| panic!("{file}: not JSON ({e}): {line}"));
            decoded.push_str(&value.to_string());
        }
        assert!(decoded.contains('\u{202e}'), "{file} lost its data");
        assert!(decoded.contains('\u{9b}'), "{file} lost its data");
    }
    let transcript = std::fs::read_to_string(dir.join("transcript.jsonl")).unwrap();
    assert!(
        transcript.contains(r"look \u202eup\u009b31m"),
        "{transcript}"
    );
    env.assert_no_leaks();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn read_only_tools_cap_what_the_model_asks_for_and_say_so() {
    let env = TestEnv::new();
    std::fs::write(env.path("big.txt"), "x".repeat(2 * 1024 * 1024)).unwrap();
    let stub = ModelStub::start(vec![
        tool_calls(
            "t",
            &[
                (
                    "read_file",
                    json!({"path": "big.txt", "max_bytes": 4_000_000_000u64}),
                ),
                (
                    "search_text",
                    json!({"text": "x", "max_results": 1_000_000}),
                ),
                (
                    "read_file",
                    json!({"path": "big.txt", "max_bytes": 1_048_576}),
                ),
            ],
        ),
        Reply::sse(wire::text_reply(&["done"])),
    ])
    .await;
    env.config(&model_config(&stub));
    let (out, _events) = tokio::task::block_in_place(|| {
        let mut command = env.command(&["run", "--prompt", "read it", "--json"]);
        command
            .current_dir(env.dir.path())
            .env_remove("ANTHROPIC_API_KEY")
            .env_remove("OPENAI_API_KEY");
        let out = command.output().unwrap();
        (out, ())
    });
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        crate::common::stderr(&out)
    );
    let requests = stub.requests();
    // The caps are in what the model reads.
    let tools = requests[0].body["tools"].as_array().unwrap();
    let description = |name: &str| {
        tools
            .iter()
            .map(|t| &t["function"])
            .find(|f| f["name"] == name)
            .unwrap_or_else(|| panic!("no {name}"))["description"]
            .as_str()
            .unwrap()
            .to_string()
    };
    assert!(
        description("read_file").contains("at most 1 MiB"),
        "{}",
        description("read_file")
    );
    assert!(
        description("search_text").contains("at most 500"),
        "{}",
        description("search_text")
    );
    // Over the cap: refused with the path of the argument; at the cap: cut at 1 MiB.
    let messages = requests[1].body["messages"].as_array().unwrap();
    let result = |id: &str| {
        messages
            .iter()
            .find(|m| m["role"] == "tool" && m["tool_call_id"] == id)
            .unwrap_or_else(|| panic!("no result {id}"))["content"]
            .as_str()
            .unwrap()
            .to_string()
    };
    for (id, path) in [("t_0", "/max_bytes"), ("t_1", "/max_results")] {
        let text = result(id);
        assert!(text.contains("invalid_arguments"), "{id}: {text}");
        assert!(text.contains(path), "{id}: {text}");
    }
    let read = result("t_2");
    assert!(
        read.ends_with("[read_file: showed the first 1048576 of 2097152 bytes]"),
        "{}",
        &read[read.len().saturating_sub(100)..]
    );
    env.assert_no_leaks();
}
