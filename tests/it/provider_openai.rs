//! The OpenAI-compatible provider against a loopback server speaking the Chat
//! Completions stream format byte for byte (tests/common/model_stub.rs).

pub mod wire;

use crate::common::model_run::{
    ask, round_trip_conversation, settings, started, texts, tool_inputs,
};
use crate::common::model_stub::{Framing, ModelStub, Reply, refused_url, split_at, sse_event};
use mcp_harness::agent::conversation::{Block, Message, ToolCall, ToolDef};
use mcp_harness::agent::model::{
    ModelError, ModelReply, OpenAiProvider, StopReason, StreamEvent, Usage,
};
use serde_json::{Value, json};
use wire::*;

const KEY: &str = "sk-openai-test-key";

/// One request with a user question against the server at `url`.
async fn ask_hi(url: &str) -> (Result<ModelReply, ModelError>, Vec<StreamEvent>) {
    ask_with(url, Some(KEY), &[Message::user_text("hi")], &[]).await
}

/// `base_url` is the server's `/v1`, as operators configure it.
async fn ask_with(
    url: &str,
    key: Option<&str>,
    messages: &[Message],
    tools: &[ToolDef],
) -> (Result<ModelReply, ModelError>, Vec<StreamEvent>) {
    let provider = OpenAiProvider::new(settings(format!("{url}/v1"), key, "gpt-test"));
    ask(&provider, messages, tools).await
}

#[tokio::test]
async fn streams_text_deltas_in_order() {
    let stub = ModelStub::start(vec![Reply::sse(text_reply(&["Hel", "lo, ", "wörld 🦀"]))]).await;
    let (reply, events) = ask_hi(&stub.url()).await;
    let reply = reply.expect("reply");
    assert_eq!(texts(&events), ["Hel", "lo, ", "wörld 🦀"]);
    assert_eq!(
        reply.content,
        [Block::Text {
            text: "Hello, wörld 🦀".into()
        }]
    );
    assert_eq!(reply.stop_reason, StopReason::EndTurn);
    assert_eq!(
        reply.usage,
        Some(Usage {
            input_tokens: 9,
            output_tokens: 3
        })
    );
    assert_eq!(stub.requests()[0].path, "/v1/chat/completions");
}

#[tokio::test]
async fn survives_awkward_byte_boundaries() {
    let body = text_reply(&["crab 🦀 ", "naïve ", "end"])
        .concat()
        .replace('\n', "\r\n");
    let bytes = body.as_bytes();
    let crab = body.find('🦀').expect("crab");
    let i_umlaut = body.find('ï').expect("ï");
    let data = body.find("data:").expect("data");
    let crlf = body.find("\r\n").expect("crlf");
    let last = body.find("\"end\"").expect("last delta");
    let last_start = body[..last].rfind("data:").expect("event start");
    let last_end = last + body[last..].find("\r\n\r\n").expect("event end") + 4;
    let mut cuts = vec![
        crab + 1,
        crab + 2,
        crab + 3,
        i_umlaut + 1,
        data + 2,
        crlf + 1,
    ];
    cuts.extend(last_start..=last_end);
    for framing in [Framing::Chunked, Framing::Close] {
        let reply = Reply::sse(split_at(bytes, &cuts)).framing(framing);
        let stub = ModelStub::start(vec![reply]).await;
        let (reply, events) = ask_hi(&stub.url()).await;
        let reply = reply.expect("reply");
        assert_eq!(texts(&events), ["crab 🦀 ", "naïve ", "end"], "{framing:?}");
        assert_eq!(
            reply.content,
            [Block::Text {
                text: "crab 🦀 naïve end".into()
            }]
        );
    }
}

#[tokio::test]
async fn several_tool_calls_come_out_in_index_order() {
    // Index 1 starts first and the fragments interleave; the reply is still
    // ordered by index.
    let mut chunks = vec![content("Checking.")];
    chunks.push(tool_fragment(1, Some("call_b"), Some("mcp__beta__set"), ""));
    chunks.push(tool_fragment(
        0,
        Some("call_a"),
        Some("mcp__alpha__lookup"),
        "",
    ));
    for (index, piece) in [
        (1, "{\"v"),
        (0, "{\"ke"),
        (1, "alues\": [1,"),
        (0, "y\": \"f"),
        (0, "ö"),
        (1, " 2]}"),
        (0, "o\"}"),
    ] {
        chunks.push(tool_fragment(index, None, None, piece));
    }
    chunks.extend(end("tool_calls"));
    let stub = ModelStub::start(vec![Reply::sse(chunks)]).await;
    let (reply, events) = ask_hi(&stub.url()).await;
    let reply = reply.expect("reply");
    let expected = [
        ("call_b", "mcp__beta__set"),
        ("call_a", "mcp__alpha__lookup"),
    ];
    let expected: Vec<_> = expected.map(|(i, n)| (i.to_string(), n.to_string())).into();
    assert_eq!(started(&events), expected);
    let call = |id: &str, name: &str, input: Value| {
        Block::ToolUse(ToolCall {
            id: id.into(),
            name: name.into(),
            input,
        })
    };
    assert_eq!(
        reply.content,
        [
            Block::Text {
                text: "Checking.".into()
            },
            call("call_a", "mcp__alpha__lookup", json!({"key": "föo"})),
            call("call_b", "mcp__beta__set", json!({"values": [1, 2]})),
        ]
    );
    assert_eq!(reply.stop_reason, StopReason::ToolUse);
}

#[tokio::test]
async fn tool_result_round_trip_sends_the_wire_format() {
    let stub = ModelStub::start(vec![Reply::sse(text_reply(&["done"]))]).await;
    let (messages, tools) = round_trip_conversation();
    let (reply, _) = ask_with(&stub.url(), Some(KEY), &messages, &tools).await;
    assert!(reply.is_ok(), "{reply:?}");
    let requests = stub.requests();
    assert_eq!(requests.len(), 1);
    let request = &requests[0];
    assert_eq!(
        (request.method.as_str(), request.path.as_str()),
        ("POST", "/v1/chat/completions")
    );
    assert_eq!(
        request.header("authorization"),
        Some(format!("Bearer {KEY}").as_str())
    );
    assert_eq!(request.header("content-type"), Some("application/json"));
    let expected = json!({
        "model": "gpt-test",
        "max_tokens": 321,
        "messages": [
            {"role": "system", "content": "be brief"},
            {"role": "user", "content": "look it up"},
            {"role": "assistant", "content": "Sure.", "tool_calls": [
                {"id": "call_1", "type": "function", "function": {"name": "lookup", "arguments": "{\"key\":\"a\"}"}},
                {"id": "call_2", "type": "function", "function": {"name": "lookup", "arguments": "{not json"}},
            ]},
            {"role": "tool", "tool_call_id": "call_1", "content":
                "found\n[image: image/png, 8 bytes, not shown: this provider takes text tool results]"},
            {"role": "tool", "tool_call_id": "call_2", "content": "[error] invalid arguments"},
        ],
        "tools": [{"type": "function", "function": {"name": "lookup", "description": "Looks a key up.",
            "parameters": {"type": "object", "properties": {"key": {"type": "string"}}}}}],
        "stream": true,
        "stream_options": {"include_usage": true},
    });
    assert_eq!(request.body, expected);
}

#[tokio::test]
async fn no_key_means_no_authorization_header() {
    let stub = ModelStub::start(vec![Reply::sse(text_reply(&["local"]))]).await;
    let (reply, _) = ask_with(&stub.url(), None, &[Message::user_text("hi")], &[]).await;
    assert!(reply.is_ok(), "{reply:?}");
    let request = &stub.requests()[0];
    assert_eq!(request.header("authorization"), None);
    assert!(request.body.get("tools").is_none(), "no empty tools list");
}

#[tokio::test]
async fn rate_limited_then_success_is_retried() {
    let limited = Reply::json(
        429,
        &error_body(
            "Rate limit reached",
            "requests",
            json!("rate_limit_exceeded"),
        ),
    )
    .header("retry-after-ms", "1");
    let stub = ModelStub::start(vec![limited, Reply::sse(text_reply(&["ok"]))]).await;
    let (reply, events) = ask_hi(&stub.url()).await;
    assert_eq!(
        reply.expect("reply").content,
        [Block::Text { text: "ok".into() }]
    );
    assert_eq!(texts(&events), ["ok"]);
    assert_eq!(stub.requests().len(), 2);
}

#[tokio::test]
async fn server_errors_exhaust_the_retries() {
    let failing = Reply::json(
        500,
        &error_body("The server had an error", "server_error", Value::Null),
    );
    let stub = ModelStub::start(vec![failing.clone(), failing.clone(), failing]).await;
    let (reply, _) = ask_hi(&stub.url()).await;
    assert_eq!(
        reply,
        Err(ModelError::Exhausted {
            provider: "openai",
            attempts: 3,
            status: 500,
            message: "The server had an error".into()
        })
    );
    assert_eq!(stub.requests().len(), 3);
}

#[tokio::test]
async fn refused_key_is_an_auth_error_with_the_message() {
    let refused = Reply::json(
        401,
        &error_body(
            "Incorrect API key provided: sk-op***key.",
            "invalid_request_error",
            json!("invalid_api_key"),
        ),
    );
    let stub = ModelStub::start(vec![refused]).await;
    let error = ask_hi(&stub.url()).await.0.expect_err("auth error");
    assert_eq!(
        error,
        ModelError::Auth {
            provider: "openai",
            status: 401,
            message: "Incorrect API key provided: sk-op***key.".into()
        }
    );
    assert!(!error.to_string().contains(KEY));
    assert_eq!(stub.requests().len(), 1);
}

#[tokio::test]
async fn unknown_model_is_reported() {
    let openai = error_body(
        "The model `gpt-test` does not exist",
        "invalid_request_error",
        json!("model_not_found"),
    );
    // Ollama's shape; vLLM's is flat: {"object": "error", "message": …, "code": 404}.
    let ollama = json!({"error": {"message": "model \"gpt-test\" not found, try pulling it first", "type": "api_error"}});
    let vllm = json!({"object": "error", "message": "The model `gpt-test` does not exist.", "type": "NotFoundError", "code": 404});
    for (status, body) in [(404, openai), (404, ollama), (404, vllm)] {
        let stub = ModelStub::start(vec![Reply::json(status, &body)]).await;
        match ask_hi(&stub.url()).await.0 {
            Err(ModelError::UnknownModel { model, message, .. }) => {
                assert_eq!(model, "gpt-test");
                assert!(message.contains("gpt-test"), "{message}");
            }
            other => panic!("expected UnknownModel for {body}, got {other:?}"),
        }
    }
}

#[tokio::test]
async fn refused_connection_is_unreachable_naming_the_url() {
    let url = refused_url().await;
    match ask_hi(&url).await.0 {
        Err(ModelError::Unreachable { url: reported, .. }) => {
            assert_eq!(reported, format!("{url}/v1/chat/completions"));
        }
        other => panic!("expected Unreachable, got {other:?}"),
    }
}

#[tokio::test]
async fn stream_cut_off_mid_event_is_malformed() {
    let whole = text_reply(&["partial", "never"]).concat();
    let cut = whole.find("never").expect("second delta");
    for framing in [Framing::Close, Framing::ChunkedCutOff] {
        let stub = ModelStub::start(vec![Reply::sse([&whole[..cut]]).framing(framing)]).await;
        let (reply, events) = ask_hi(&stub.url()).await;
        assert_eq!(texts(&events), ["partial"]);
        match reply {
            Err(ModelError::Malformed { detail, .. }) => assert!(
                detail.contains("finish_reason") || detail.contains("broke off"),
                "{detail}"
            ),
            other => panic!("expected Malformed ({framing:?}), got {other:?}"),
        }
        assert_eq!(stub.requests().len(), 1, "not retried");
    }
}

#[tokio::test]
async fn done_without_finish_reason_is_malformed() {
    let chunks = [content("hm"), sse_event(None, "[DONE]")];
    let stub = ModelStub::start(vec![Reply::sse(chunks)]).await;
    match ask_hi(&stub.url()).await.0 {
        Err(ModelError::Malformed { detail, .. }) => {
            assert!(detail.contains("finish_reason"), "{detail}")
        }
        other => panic!("expected Malformed, got {other:?}"),
    }
}

#[tokio::test]
async fn invalid_json_in_a_chunk_is_malformed() {
    let mut chunks = vec![content("a")];
    chunks.push("data: {\"choices\": [{\"index\": 0, \"delta\": {\"content\": \"b\"}\n\n".into());
    chunks.extend(end("stop"));
    let stub = ModelStub::start(vec![Reply::sse(chunks)]).await;
    match ask_hi(&stub.url()).await.0 {
        Err(ModelError::Malformed { detail, .. }) => {
            assert!(detail.contains("not valid JSON"), "{detail}")
        }
        other => panic!("expected Malformed, got {other:?}"),
    }
}

#[tokio::test]
async fn arguments_that_are_not_json_stay_raw() {
    let mut chunks = vec![tool_fragment(
        0,
        Some("call_x"),
        Some("lookup"),
        "{\"key\": ",
    )];
    chunks.push(tool_fragment(0, None, None, "oops}"));
    chunks.extend(end("tool_calls"));
    let stub = ModelStub::start(vec![Reply::sse(chunks)]).await;
    let reply = ask_hi(&stub.url()).await.0.expect("reply");
    let inputs = tool_inputs(&reply);
    assert_eq!(inputs, [Value::String("{\"key\": oops}".into())]);
}

#[tokio::test]
async fn error_chunk_before_content_is_retried() {
    let failed = [sse_event(
        None,
        &error_body("The server had an error", "server_error", Value::Null).to_string(),
    )];
    let stub = ModelStub::start(vec![Reply::sse(failed), Reply::sse(text_reply(&["fine"]))]).await;
    let (reply, events) = ask_hi(&stub.url()).await;
    assert!(reply.is_ok(), "{reply:?}");
    assert_eq!(texts(&events), ["fine"]);
    assert_eq!(stub.requests().len(), 2);
}

#[tokio::test]
async fn a_json_reply_instead_of_a_stream_is_malformed() {
    let plain = Reply::json(200, &json!({"choices": [{"message": {"content": "hi"}}]}));
    let stub = ModelStub::start(vec![plain]).await;
    match ask_hi(&stub.url()).await.0 {
        Err(ModelError::Malformed { detail, .. }) => {
            assert!(detail.contains("text/event-stream"), "{detail}")
        }
        other => panic!("expected Malformed, got {other:?}"),
    }
}

#[tokio::test]
async fn an_endless_event_is_refused_past_the_bound() {
    let mut chunks =
        vec![b"data: {\"choices\": [{\"index\": 0, \"delta\": {\"content\": \"".to_vec()];
    chunks.extend((0..17).map(|_| vec![b'a'; 1 << 20]));
    let stub = ModelStub::start(vec![Reply::sse(chunks)]).await;
    match ask_hi(&stub.url()).await.0 {
        Err(ModelError::Malformed { detail, .. }) => assert!(detail.contains("16 MiB"), "{detail}"),
        other => panic!("expected Malformed, got {other:?}"),
    }
}

#[tokio::test]
async fn a_bare_404_names_the_url() {
    let mut page = Reply::sse(["404 page not found"]).framing(Framing::Length);
    page.status = 404;
    page.headers = vec![("content-type".into(), "text/plain".into())];
    let stub = ModelStub::start(vec![page]).await;
    match ask_hi(&stub.url()).await.0 {
        Err(ModelError::UnknownModel { message, .. }) => {
            let url = format!("{}/v1/chat/completions", stub.url());
            assert!(
                message.contains(&url) && message.contains("base_url"),
                "{message}"
            );
        }
        other => panic!("expected UnknownModel, got {other:?}"),
    }
}
