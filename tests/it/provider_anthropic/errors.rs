//! The Anthropic provider's failures: what it retries (429, 529, an
//! `overloaded_error` event before any content), what it gives up on and how
//! it says so (auth, unknown model, refused connection, a stream cut off or
//! malformed, an error body too large to read whole).

use super::*;

#[tokio::test]
async fn rate_limited_then_success_is_retried() {
    let limited =
        Reply::json(429, &error_body("rate_limit_error", "slow down")).header("retry-after", "0");
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
async fn overloaded_529_is_retried() {
    let overloaded = Reply::json(529, &error_body("overloaded_error", "Overloaded"));
    let stub = ModelStub::start(vec![overloaded, Reply::sse(text_reply(&["ok"]))]).await;
    assert!(ask_hi(&stub.url()).await.0.is_ok());
    assert_eq!(stub.requests().len(), 2);
}

#[tokio::test]
async fn server_errors_exhaust_the_retries() {
    let failing = Reply::json(500, &error_body("api_error", "Internal server error"));
    let stub = ModelStub::start(vec![failing.clone(), failing.clone(), failing]).await;
    let (reply, _) = ask_hi(&stub.url()).await;
    assert_eq!(
        reply,
        Err(ModelError::Exhausted {
            provider: "anthropic",
            attempts: 3,
            status: 500,
            message: "Internal server error".into()
        })
    );
    assert_eq!(stub.requests().len(), 3);
}

#[tokio::test]
async fn refused_key_is_an_auth_error_with_the_message() {
    let refused = Reply::json(
        401,
        &error_body("authentication_error", "invalid x-api-key"),
    );
    let stub = ModelStub::start(vec![refused]).await;
    let (reply, _) = ask_hi(&stub.url()).await;
    let error = reply.expect_err("auth error");
    assert_eq!(
        error,
        ModelError::Auth {
            provider: "anthropic",
            status: 401,
            message: "invalid x-api-key".into()
        }
    );
    assert!(!error.to_string().contains(KEY));
    assert_eq!(stub.requests().len(), 1);
}

#[tokio::test]
async fn unknown_model_is_reported() {
    let missing = Reply::json(404, &error_body("not_found_error", "model: claude-test"));
    let stub = ModelStub::start(vec![missing]).await;
    let (reply, _) = ask_hi(&stub.url()).await;
    assert_eq!(
        reply,
        Err(ModelError::UnknownModel {
            provider: "anthropic",
            model: "claude-test".into(),
            message: "model: claude-test".into()
        })
    );
}

#[tokio::test]
async fn refused_connection_is_unreachable_naming_the_url() {
    let url = refused_url().await;
    let (reply, _) = ask_hi(&url).await;
    match reply {
        Err(ModelError::Unreachable { url: reported, .. }) => {
            assert_eq!(reported, format!("{url}/v1/messages"));
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
            Err(ModelError::Malformed { detail, .. }) => {
                assert!(
                    detail.contains("message_stop") || detail.contains("broke off"),
                    "{detail}"
                )
            }
            other => panic!("expected Malformed ({framing:?}), got {other:?}"),
        }
        assert_eq!(stub.requests().len(), 1, "not retried");
    }
}

#[tokio::test]
async fn invalid_json_in_an_event_is_malformed() {
    let mut events = vec![start(), text_start(0)];
    events.push(
        "event: content_block_delta\ndata: {\"type\": \"content_block_delta\", \"index\": 0, \n\n"
            .into(),
    );
    events.extend(end("end_turn"));
    let stub = ModelStub::start(vec![Reply::sse(events)]).await;
    match ask_hi(&stub.url()).await.0 {
        Err(ModelError::Malformed { detail, .. }) => {
            assert!(detail.contains("content_block_delta"), "{detail}")
        }
        other => panic!("expected Malformed, got {other:?}"),
    }
}

#[tokio::test]
async fn overloaded_error_event_before_content_is_retried() {
    let overloaded = vec![
        start(),
        ping(),
        ev("error", error_body("overloaded_error", "Overloaded")),
    ];
    let stub = ModelStub::start(vec![
        Reply::sse(overloaded),
        Reply::sse(text_reply(&["fine"])),
    ])
    .await;
    let (reply, events) = ask_hi(&stub.url()).await;
    assert_eq!(
        reply.expect("reply").content,
        [Block::Text {
            text: "fine".into()
        }]
    );
    assert_eq!(texts(&events), ["fine"]);
    assert_eq!(stub.requests().len(), 2);
}

#[tokio::test]
async fn error_event_after_content_is_not_retried() {
    let broken = vec![
        start(),
        text_start(0),
        text_delta(0, "half"),
        ev("error", error_body("overloaded_error", "Overloaded")),
    ];
    let stub = ModelStub::start(vec![Reply::sse(broken), Reply::sse(text_reply(&["again"]))]).await;
    let (reply, events) = ask_hi(&stub.url()).await;
    assert_eq!(texts(&events), ["half"]);
    assert!(
        matches!(reply, Err(ModelError::Http { status: 529, .. })),
        "{reply:?}"
    );
    assert_eq!(stub.requests().len(), 1);
}

#[tokio::test]
async fn an_oversized_error_body_is_not_read_whole() {
    let huge = format!(
        "{{\"error\": {{\"message\": \"{}\"}}}}",
        "x".repeat(200 << 10)
    );
    let mut reply = Reply::sse([huge]).framing(Framing::Length);
    reply.status = 400;
    let stub = ModelStub::start(vec![reply]).await;
    match ask_hi(&stub.url()).await.0 {
        Err(ModelError::Http {
            status: 400,
            message,
            ..
        }) => {
            assert!(message.contains("too large"), "{message}");
            assert!(message.len() < 1000, "the message is clipped");
        }
        other => panic!("expected Http 400, got {other:?}"),
    }
}
