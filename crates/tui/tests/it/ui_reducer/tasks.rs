//! A call that runs as a task (issue 11): its cell shows the task's status and
//! the server's message (inert, one line) with the elapsed time while it runs,
//! nothing of it once the call ended; a dropped `null` is in the detail.

use std::time::{Duration, Instant};

use mcp_harness::protocol::{BackendEvent, TaskStatus, ToolOutcomeView};
use mcp_harness::ui::state::{AppState, Cell};

use super::backend;
use crate::fixtures::call_started;

fn text(s: &AppState, at: Instant) -> String {
    s.cells
        .iter()
        .flat_map(|c| c.lines(78, at))
        .map(|l| {
            l.spans
                .iter()
                .map(|s| s.content.as_ref())
                .collect::<String>()
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn a_running_task_shows_its_status_message_and_elapsed_time() {
    let start = Instant::now();
    let mut s = AppState::new(start);
    backend(
        &mut s,
        BackendEvent::ToolCallStarted(call_started("c1", "mcp__demo_alpha__research")),
    );
    backend(
        &mut s,
        BackendEvent::CallTask {
            id: "c1".into(),
            status: TaskStatus::Working,
            message: Some("step 2 of 4\u{1b}[31m\nforged line".into()),
        },
    );
    let shown = text(&s, start + Duration::from_secs(7));
    assert!(shown.contains("task working · step 2 of 4"), "{shown}");
    assert!(shown.contains("running 7.0s"), "elapsed time: {shown}");
    assert!(!shown.contains('\u{1b}'), "inert: {shown:?}");
    assert!(!shown.contains("\nforged line"), "one line: {shown}");
    backend(
        &mut s,
        BackendEvent::ToolCallFinished(ToolOutcomeView {
            id: "c1".into(),
            ok: true,
            text: "research on tides: three sources agree".into(),
            code: None,
            server_output: None,
            elapsed_ms: 7000,
            flow: None,
            dropped_nulls: vec!["/note".into()],
            decided: None,
        }),
    );
    let shown = text(&s, start + Duration::from_secs(8));
    assert!(!shown.contains("task working"), "{shown}");
    let Cell::ToolCall(call) = &s.cells[0] else {
        panic!("{:?}", s.cells[0]);
    };
    assert_eq!(call.dropped_nulls, ["/note"]);
}
