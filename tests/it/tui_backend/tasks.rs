//! A call that runs as a task, over the backend's channels with a real server
//! process: its status reaches the conversation and Health counts it.

use mcp_harness::protocol::{BackendEvent, Command, TaskStatus};
use serde_json::json;

use super::{connect, health_after, next, start, stop};
use crate::common::TestEnv;
use crate::common::hubs::DEMO_POLICY;

/// A call that runs as a task (issue 11, deliverable 5): the conversation gets
/// its status, Health counts it while it runs and after, and shows the
/// negotiated revision — on both revisions.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_shows_its_status_and_health_counts_it() {
    for mode in ["2026-07-28", "2025-11-25"] {
        let env = TestEnv::new();
        let server = env.demo("s", "alpha", &["--protocol", mode, "--extras"]);
        let mut handle = start(
            &env,
            &format!(
                "{server}[servers.s.tools]\n{DEMO_POLICY}research = \"allow\"\nguarded_set = \"deny\"\n"
            ),
        );
        connect(&mut handle, "s").await;
        handle
            .commands
            .send(Command::CallTool {
                name: "mcp__s__research".into(),
                arguments: json!({"topic": "tides", "seconds": 3}),
            })
            .unwrap();
        let BackendEvent::CallTask { status, .. } = next(&mut handle, "the task", |e| {
            matches!(e, BackendEvent::CallTask { .. })
        })
        .await
        else {
            unreachable!()
        };
        assert_eq!(status, TaskStatus::Working, "{mode}");
        let running = health_after(&mut handle, "s").await;
        assert_eq!(running.protocol_version, mode);
        assert_eq!(
            (running.tasks_running, running.tasks_total),
            (1, 1),
            "{mode}"
        );
        let BackendEvent::ToolCallFinished(done) = next(&mut handle, "the result", |e| {
            matches!(e, BackendEvent::ToolCallFinished(_))
        })
        .await
        else {
            unreachable!()
        };
        assert!(done.ok, "{mode}: {done:?}");
        let after = health_after(&mut handle, "s").await;
        assert_eq!((after.tasks_running, after.tasks_total), (0, 1), "{mode}");
        stop(handle).await;
        env.assert_no_leaks();
    }
}
