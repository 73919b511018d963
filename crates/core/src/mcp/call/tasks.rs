//! Tasks: a call the server runs asynchronously. Two wire shapes:
//!
//! - the experimental tasks of 2025-11-25: the harness asks for a task (`task`
//!   in the call's params) when the tool's `execution.taskSupport` says so,
//!   polls `tasks/get` (`pollInterval`), and fetches the outcome with
//!   `tasks/result` (which blocks while the server asks its questions);
//! - the `io.modelcontextprotocol/tasks` extension of 2026-07-28: the harness
//!   declares it and the server decides; `tasks/get` (`pollIntervalMs`) carries
//!   the outcome, questions arrive as `inputRequests` and are answered with
//!   `tasks/update`.
//!
//! Either way the model gets an ordinary tool result. Polling is clamped
//! (neither a busy loop nor a day's wait), a task is cancelled (`tasks/cancel`)
//! on `task_timeout_ms`, when the caller stops waiting (Ctrl-C) and when its
//! connection closes, and a status that moves backwards is an error.

use std::time::Duration;

use serde_json::{Value, json};
use tokio::time::Instant;

use crate::mcp::connection::tasks as book;
pub use crate::mcp::connection::tasks::{Shape, TaskBook};

use super::CallIdentity;
use super::exchange::{self, CallFailure};
use crate::mcp::connection::Connection;
use crate::mcp::events::{McpEvent, TaskState};
use crate::mcp::published::TaskSupport;
use crate::mcp::registry::ExposedTool;
use crate::mcp::spec::TaskMode;
use crate::mcp::spill::Spilled;

/// Polling is never faster than this, whatever the server asks (0 included)…
pub const POLL_MIN: Duration = Duration::from_millis(100);
/// …nor slower (a day-long `pollInterval` would outlive the task timeout).
pub const POLL_MAX: Duration = Duration::from_secs(5);
/// When the server suggests no interval.
const POLL_DEFAULT: Duration = Duration::from_secs(1);

/// Whether a tool of this support runs as a task on `conn` (2025-11-25: the
/// harness decides from `execution.taskSupport`).
pub(in crate::mcp) fn wanted(conn: &Connection, support: TaskSupport) -> bool {
    match support {
        TaskSupport::Required => true,
        TaskSupport::Optional => conn.task_mode == TaskMode::Optional,
        TaskSupport::Forbidden => false,
    }
}

pub(in crate::mcp) fn ttl_ms(conn: &Connection) -> u64 {
    u64::try_from(conn.task_timeout.as_millis()).unwrap_or(u64::MAX)
}

/// One look at a task: the fields both shapes share.
struct View {
    state: TaskState,
    message: Option<String>,
    poll: Duration,
}

fn view(task: &Value, shape: Shape) -> Result<View, CallFailure> {
    let status = task.get("status").and_then(Value::as_str).unwrap_or("");
    let state = TaskState::parse(status)
        .ok_or_else(|| CallFailure::Protocol("the server's task has no valid `status`".into()))?;
    // A 2025-11-25 task says `pollInterval`; read through rmcp's typed model
    // it comes back as `pollIntervalMs`.
    let poll_fields: &[&str] = match shape {
        Shape::Experimental => &["pollInterval", "pollIntervalMs"],
        Shape::Extension => &["pollIntervalMs"],
    };
    let poll = poll_fields
        .iter()
        .find_map(|field| task.get(*field).and_then(Value::as_u64))
        .map_or(POLL_DEFAULT, Duration::from_millis)
        .clamp(POLL_MIN, POLL_MAX);
    Ok(View {
        state,
        message: task
            .get("statusMessage")
            .and_then(Value::as_str)
            .map(str::to_owned),
        poll,
    })
}

/// Keeps a task in its connection's book, and cancels it on the server if the
/// caller stops waiting before it ends (Ctrl-C drops the call's future).
struct Running<'a> {
    conn: &'a Connection,
    id: String,
    armed: bool,
}

impl<'a> Running<'a> {
    fn new(conn: &'a Connection, id: String, shape: Shape) -> Self {
        conn.tasks.insert(id.clone(), shape);
        Self {
            conn,
            id,
            armed: true,
        }
    }
}

impl Drop for Running<'_> {
    fn drop(&mut self) {
        self.conn.tasks.remove(&self.id);
        if !self.armed || self.conn.is_ended() {
            return;
        }
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        self.conn
            .tasks
            .cancel_abandoned(&runtime, self.conn.peer.clone(), self.id.clone());
    }
}

/// Cancels the task (waiting briefly for the answer) and says it timed out.
async fn timed_out(mut guard: Running<'_>, after: Duration) -> CallFailure {
    guard.armed = false;
    if !guard.conn.is_ended() {
        let cancel = book::send_cancel(&guard.conn.peer, &guard.id);
        let _ = tokio::time::timeout(book::CANCEL_GRACE, cancel).await;
    }
    CallFailure::TaskTimeout(after)
}

/// Runs a created task to its end; the final `CallToolResult` JSON.
pub(in crate::mcp) async fn run(
    conn: &Connection,
    tool: &ExposedTool,
    call: &CallIdentity,
    created: Value,
    shape: Shape,
) -> Result<(Value, Option<Spilled>), CallFailure> {
    let deadline = Instant::now() + conn.task_timeout;
    let id = match created.get("taskId").and_then(Value::as_str) {
        Some(id) if !id.is_empty() && id.len() <= 512 => id.to_owned(),
        _ => {
            return Err(CallFailure::Protocol(
                "the server's task has no usable `taskId`".into(),
            ));
        }
    };
    let mut guard = Running::new(conn, id.clone(), shape);
    let mut last = view(&created, shape)?;
    let report = |v: &View| {
        conn.parts.events.emit(McpEvent::Task {
            alias: conn.alias().clone(),
            connection: conn.id(),
            call: call.id.clone(),
            tool: tool.name.clone(),
            task: id.clone(),
            state: v.state,
            message: v.message.clone(),
        })
    };
    report(&last);
    // A task must begin `working`; one that claims to be over already is
    // looked at once more before its outcome is trusted.
    let mut confirmed = !last.state.is_terminal();
    let mut task = created;
    let mut spilled = None;
    loop {
        if confirmed && last.state.is_terminal() {
            break;
        }
        if confirmed && last.state == TaskState::InputRequired {
            match shape {
                // `tasks/result` blocks while the server asks (elicitation
                // requests, answered by the client handler) and ends with the outcome.
                Shape::Experimental => break,
                Shape::Extension => answer(conn, call, &id, &task).await?,
            }
        } else if confirmed {
            tokio::select! {
                () = tokio::time::sleep(last.poll) => {}
                () = tokio::time::sleep_until(deadline) => return Err(timed_out(guard, conn.task_timeout).await),
            }
        }
        task = tokio::select! {
            answer = get(conn, &id, shape) => {
                let (answer, cut) = answer?;
                spilled = cut;
                answer
            }
            () = tokio::time::sleep_until(deadline) => return Err(timed_out(guard, conn.task_timeout).await),
        };
        let next = view(&task, shape)?;
        if last.state.is_terminal() && next.state != last.state {
            // Still armed: a task that is working again gets cancelled.
            return Err(CallFailure::Protocol(format!(
                "the task's status went backwards, from {} to {}",
                last.state.label(),
                next.state.label()
            )));
        }
        if next.state != last.state || next.message != last.message {
            report(&next);
        }
        confirmed = true;
        last = next;
    }
    let outcome = outcome(conn, &id, &task, last.state, shape, deadline).await;
    if let Err(CallFailure::TaskTimeout(_)) = outcome {
        return Err(timed_out(guard, conn.task_timeout).await);
    }
    guard.armed = false;
    outcome.map(|(result, fetched)| (result, fetched.or(spilled)))
}

/// One `tasks/get`: the task as the server sent it. Every answer may change
/// the poll interval, so the 2025-11-25 shape is read raw (rmcp's typed model
/// has no `pollInterval` and drops it); a 2026-07-28 task's outcome comes in
/// `tasks/get` and may be large, so that shape goes the long way (what the
/// stdio gate cut comes along).
async fn get(
    conn: &Connection,
    id: &str,
    shape: Shape,
) -> Result<(Value, Option<Spilled>), CallFailure> {
    let params = json!({ "taskId": id });
    match shape {
        Shape::Experimental => {
            let raw = conn
                .request_raw("tasks/get", params, conn.call_timeout())
                .await?;
            Ok((raw, None))
        }
        Shape::Extension => {
            let answer = conn
                .request_long("tasks/get", params, conn.call_timeout(), None)
                .await?;
            Ok((exchange::raw(answer.result), answer.spilled))
        }
    }
}

/// Answers a 2026-07-28 task's questions with `tasks/update`.
async fn answer(
    conn: &Connection,
    call: &CallIdentity,
    id: &str,
    task: &Value,
) -> Result<(), CallFailure> {
    let questions = match task.get("inputRequests") {
        Some(Value::Object(questions)) if !questions.is_empty() => questions,
        _ => {
            return Err(CallFailure::Protocol(
                "the task needs input but names no inputRequests".into(),
            ));
        }
    };
    let answers = exchange::answer_questions(conn, call, questions).await?;
    let params = json!({ "taskId": id, "inputResponses": answers });
    conn.request("tasks/update", params, conn.call_timeout())
        .await?;
    Ok(())
}

/// The outcome of a task in `state` (terminal, or input-required on 2025-11-25).
async fn outcome(
    conn: &Connection,
    id: &str,
    task: &Value,
    state: TaskState,
    shape: Shape,
    deadline: Instant,
) -> Result<(Value, Option<Spilled>), CallFailure> {
    if state == TaskState::Cancelled {
        return Err(CallFailure::Protocol(
            "the server cancelled the task before it finished".into(),
        ));
    }
    match shape {
        Shape::Extension => match state {
            TaskState::Completed => task
                .get("result")
                .filter(|r| r.is_object())
                .cloned()
                .map(|result| (result, None))
                .ok_or_else(|| {
                    CallFailure::Protocol("the task completed without a `result`".into())
                }),
            _ => Err(failed(task.get("error"))),
        },
        Shape::Experimental => {
            // Blocks until the task ends: bounded by what is left of the task timeout.
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(CallFailure::TaskTimeout(conn.task_timeout));
            }
            match conn
                .request_long("tasks/result", json!({ "taskId": id }), left, None)
                .await
            {
                Ok(answer) => {
                    let result = exchange::raw(answer.result);
                    // A task-shaped answer instead of the result: the server
                    // says the task is not over after saying it was.
                    if let Some(status) = result.get("status").and_then(Value::as_str)
                        && result.get("content").is_none()
                        && TaskState::parse(status).is_some_and(|s| !s.is_terminal())
                    {
                        return Err(CallFailure::Protocol(format!(
                            "the task's status went backwards, from {} to {status}",
                            state.label()
                        )));
                    }
                    Ok((result, answer.spilled))
                }
                Err(crate::mcp::connection::RequestError::Timeout(_)) => {
                    Err(CallFailure::TaskTimeout(conn.task_timeout))
                }
                Err(error) => Err(error.into()),
            }
        }
    }
}

fn failed(error: Option<&Value>) -> CallFailure {
    CallFailure::TaskFailed {
        code: error
            .and_then(|e| e.get("code"))
            .and_then(Value::as_i64)
            .unwrap_or(0),
        message: error
            .and_then(|e| e.get("message"))
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned(),
    }
}
