//! The backend's views are built incrementally (issue 13): a tool call's result
//! or a refresh rebuilds the small parts (state, health) and shares the
//! server's tool views (one `Arc` per listing) with every earlier view; a new
//! listing (a reconnect) gets new ones.

use std::sync::Arc;

use mcp_harness::protocol::{BackendEvent, ToolView, Views};
use serde_json::json;

use super::{connect, fresh_views, next, start_alpha, stop};
use crate::common::TestEnv;

fn listing(views: &Views, alias: &str) -> Arc<[ToolView]> {
    views
        .servers
        .iter()
        .find(|s| s.alias == alias)
        .map(|s| Arc::clone(&s.published))
        .expect("the alias")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_shares_the_listing_and_a_reconnect_builds_a_new_one() {
    let env = TestEnv::new();
    let mut handle = start_alpha(&env);
    connect(&mut handle, "demo_alpha").await;
    let before = fresh_views(&mut handle).await;
    let tools = listing(&before, "demo_alpha");
    assert_eq!(tools.len(), 5);
    handle
        .commands
        .send(mcp_harness::protocol::Command::CallTool {
            name: "mcp__demo_alpha__lookup".into(),
            arguments: json!({"key": "apple"}),
        })
        .expect("call");
    next(&mut handle, "the result", |e| {
        matches!(e, BackendEvent::ToolCallFinished(_))
    })
    .await;
    let after = fresh_views(&mut handle).await;
    let health = |v: &Views| {
        v.servers
            .iter()
            .find(|s| s.alias == "demo_alpha")
            .and_then(|s| s.health.as_ref())
            .map(|h| h.calls_ok)
    };
    assert_eq!(health(&after), Some(health(&before).unwrap_or(0) + 1));
    assert!(
        Arc::ptr_eq(&tools, &listing(&after, "demo_alpha")),
        "a call's views must share the tool views, not rebuild them"
    );
    handle
        .commands
        .send(mcp_harness::protocol::Command::Reconnect(
            "demo_alpha".into(),
        ))
        .expect("reconnect");
    next(
        &mut handle,
        "the reconnection",
        |e| matches!(e, BackendEvent::CommandResult(s) if s.starts_with("connected") || s.starts_with("reconnected")),
    )
    .await;
    let again = fresh_views(&mut handle).await;
    assert!(
        !Arc::ptr_eq(&tools, &listing(&again, "demo_alpha")),
        "a new connection's listing gets its own tool views"
    );
    stop(handle).await;
    env.assert_no_leaks();
}
