//! `research` as a task, in both wire shapes: the 2025-11-25 experimental tasks
//! (`{task: {...}}`, `tasks/get`, `tasks/result`, `tasks/cancel`, `ttl` and
//! `pollInterval`) on a handshake connection, and the
//! `io.modelcontextprotocol/tasks` extension (`resultType: "task"`, `tasks/get`
//! carrying the result, `tasks/cancel`, `ttlMs` and `pollIntervalMs`) on a
//! 2026-07-28 one. Written by hand (raw JSON) so the faults can bend it.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use rmcp::ErrorData as McpError;
use rmcp::model::{CallToolResult, ContentBlock, JsonObject};
use serde_json::{Value, json};
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use super::{faults::Faults, log};

const TTL_MS: u64 = 600_000;
const DEFAULT_POLL_MS: u64 = 200;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Status {
    Working,
    Completed,
    Cancelled,
}

impl Status {
    fn as_str(self) -> &'static str {
        match self {
            Status::Working => "working",
            Status::Completed => "completed",
            Status::Cancelled => "cancelled",
        }
    }

    fn terminal(self) -> bool {
        self != Status::Working
    }
}

struct State {
    status: Status,
    message: String,
    created: String,
    updated: String,
    result: Option<CallToolResult>,
}

struct DemoTask {
    state: Mutex<State>,
    /// Ticks whenever the state changes (for `tasks/result`, which blocks).
    changed: watch::Sender<u64>,
    cancel: CancellationToken,
}

impl DemoTask {
    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn update(&self, f: impl FnOnce(&mut State)) {
        {
            let mut state = self.state();
            f(&mut state);
            state.updated = now();
        }
        self.changed.send_modify(|n| *n += 1);
    }
}

/// Which wire shape a request speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// 2025-11-25 experimental tasks.
    Experimental,
    /// The 2026-07-28 tasks extension.
    Extension,
}

#[derive(Default)]
pub struct TaskStore {
    tasks: Mutex<HashMap<String, Arc<DemoTask>>>,
    next: AtomicU64,
}

fn now() -> String {
    chrono::Utc::now()
        .format("%Y-%m-%dT%H:%M:%S%.3fZ")
        .to_string()
}

fn invalid(message: &str) -> McpError {
    McpError::invalid_params(message.to_owned(), None)
}

impl TaskStore {
    fn get(&self, params: &Value) -> Result<(String, Arc<DemoTask>), McpError> {
        let id = params
            .get("taskId")
            .and_then(Value::as_str)
            .ok_or_else(|| invalid("taskId is required"))?;
        let tasks = self.tasks.lock().unwrap_or_else(PoisonError::into_inner);
        let task = tasks.get(id).ok_or_else(|| invalid("unknown taskId"))?;
        Ok((id.to_owned(), Arc::clone(task)))
    }

    /// Starts `research` as a task and returns the `CreateTaskResult`.
    pub fn start(&self, args: &JsonObject, shape: Shape, faults: &Faults, server: &str) -> Value {
        let topic = args
            .get("topic")
            .and_then(Value::as_str)
            .unwrap_or("nothing in particular")
            .to_owned();
        let seconds = args.get("seconds").and_then(Value::as_f64).unwrap_or(3.0);
        let id = format!("task-{}", self.next.fetch_add(1, Ordering::Relaxed) + 1);
        let created = now();
        let task = Arc::new(DemoTask {
            state: Mutex::new(State {
                status: Status::Working,
                message: "starting".into(),
                created: created.clone(),
                updated: created,
                result: None,
            }),
            changed: watch::channel(0).0,
            cancel: CancellationToken::new(),
        });
        self.tasks
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(id.clone(), Arc::clone(&task));
        log(format_args!("research: task {id} started ({seconds}s)"));
        let (worker, never_ends) = (Arc::clone(&task), faults.task_never_ends);
        let text = faults.taint(format!(
            "research on {topic}: three sources agree ({server})"
        ));
        tokio::spawn(async move {
            const STEPS: u32 = 4;
            let step = Duration::from_secs_f64(seconds.clamp(0.0, 600.0) / f64::from(STEPS));
            for done in 1..=STEPS {
                tokio::select! {
                    () = tokio::time::sleep(step) => {}
                    () = worker.cancel.cancelled() => return,
                }
                worker.update(|s| s.message = format!("step {done} of {STEPS}"));
            }
            if never_ends {
                log("task-never-ends: staying in `working`");
                return;
            }
            worker.update(|s| {
                s.status = Status::Completed;
                s.message = "done".into();
                s.result = Some(CallToolResult::success(vec![ContentBlock::text(text)]));
            });
        });
        let mut created = task_json(&id, &task.state(), shape, faults);
        if faults.task_goes_back {
            // Claims to be done already; later answers say it is still working.
            created["status"] = json!("completed");
        }
        match shape {
            Shape::Experimental => json!({"task": created}),
            Shape::Extension => {
                created["resultType"] = json!("task");
                created
            }
        }
    }

    /// `tasks/get`.
    pub fn status(&self, params: &Value, shape: Shape, faults: &Faults) -> Result<Value, McpError> {
        let (id, task) = self.get(params)?;
        let state = task.state();
        let mut answer = task_json(&id, &state, shape, faults);
        if shape == Shape::Extension {
            answer["resultType"] = json!("complete");
            if let Some(result) = &state.result {
                answer["result"] = serde_json::to_value(result).unwrap_or(Value::Null);
            }
        }
        Ok(answer)
    }

    /// `tasks/result` (experimental tasks): waits for a terminal status.
    pub async fn result(&self, params: &Value) -> Result<Value, McpError> {
        let (id, task) = self.get(params)?;
        let mut changed = task.changed.subscribe();
        loop {
            {
                let state = task.state();
                match (state.status, &state.result) {
                    (Status::Completed, Some(result)) => {
                        let mut result = serde_json::to_value(result).unwrap_or(Value::Null);
                        result["_meta"] =
                            json!({"io.modelcontextprotocol/related-task": {"taskId": id}});
                        return Ok(result);
                    }
                    (Status::Cancelled, _) => {
                        return Err(McpError::internal_error("the task was cancelled", None));
                    }
                    _ => {}
                }
            }
            if changed.changed().await.is_err() {
                return Err(McpError::internal_error("the task is gone", None));
            }
        }
    }

    /// `tasks/cancel`.
    pub fn cancel(&self, params: &Value, shape: Shape, faults: &Faults) -> Result<Value, McpError> {
        let (id, task) = self.get(params)?;
        if task.state().status.terminal() {
            return Err(invalid("the task is already in a terminal status"));
        }
        task.cancel.cancel();
        task.update(|s| {
            s.status = Status::Cancelled;
            s.message = "cancelled by the client".into();
        });
        log(format_args!("research: task {id} cancelled"));
        Ok(match shape {
            Shape::Experimental => task_json(&id, &task.state(), shape, faults),
            Shape::Extension => json!({"resultType": "complete"}),
        })
    }
}

fn task_json(id: &str, state: &State, shape: Shape, faults: &Faults) -> Value {
    let poll = faults.task_poll_ms.unwrap_or(DEFAULT_POLL_MS);
    let mut task = json!({
        "taskId": id,
        "status": state.status.as_str(),
        "statusMessage": faults.taint(state.message.clone()),
        "createdAt": state.created,
        "lastUpdatedAt": state.updated,
    });
    match shape {
        Shape::Experimental => {
            task["ttl"] = json!(TTL_MS);
            task["pollInterval"] = json!(poll);
        }
        Shape::Extension => {
            task["ttlMs"] = json!(TTL_MS);
            task["pollIntervalMs"] = json!(poll);
        }
    }
    task
}
