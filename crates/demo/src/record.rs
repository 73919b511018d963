//! `--record FILE`: what actually reached the server, one JSON object per line, so tests can
//! prove that a call (or a cancellation) was or was not forwarded, and count `tools/list`s.

// Without the `test-fixtures` feature there is no --record flag: no recorder is ever opened.
#![cfg_attr(not(feature = "test-fixtures"), allow(dead_code))]

use std::{
    fs::{File, OpenOptions},
    io::Write,
    path::Path,
    sync::{Mutex, PoisonError},
};

use anyhow::Context;
use rmcp::model::{CancelledNotificationParam, JsonObject};
use serde_json::{Value, json};

use super::log;

pub struct Recorder {
    file: Mutex<File>,
}

impl Recorder {
    /// Opens FILE for appending, so several servers (or restarts) can share one record.
    pub fn open(path: &Path) -> anyhow::Result<Self> {
        let file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .with_context(|| format!("opening record file {}", path.display()))?;
        Ok(Self {
            file: Mutex::new(file),
        })
    }

    pub fn call(&self, name: &str, arguments: Option<&JsonObject>) {
        let arguments = arguments.map_or(Value::Null, |args| Value::Object(args.clone()));
        self.write(&json!({"event": "call", "name": name, "arguments": arguments}));
    }

    pub fn list(&self, cursor: Option<&str>) {
        self.write(&json!({"event": "list", "cursor": cursor}));
    }

    /// Every notification of a `list-changed-storm` has been written.
    pub fn storm_sent(&self, count: u32) {
        self.write(&json!({"event": "storm_sent", "count": count}));
    }

    pub fn cancelled(&self, params: &CancelledNotificationParam) {
        self.write(&json!({
            "event": "cancelled",
            "request_id": params.request_id,
            "reason": params.reason,
        }));
    }

    /// A `tasks/get` that reached the server (either shape).
    pub fn task_polled(&self, params: &Value) {
        // When it arrived (ms since the epoch): tests measure the harness's
        // poll spacing by the server's own clock.
        let at_ms = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX));
        self.write(&json!({"event": "task_get", "task_id": params.get("taskId"), "at_ms": at_ms}));
    }

    /// A `tasks/cancel` that reached the server (either shape).
    pub fn task_cancelled(&self, params: &Value) {
        self.write(&json!({"event": "task_cancel", "task_id": params.get("taskId")}));
    }

    /// One whole line per write, flushed at once: a crash right after must not lose it.
    fn write(&self, event: &Value) {
        let mut line = event.to_string();
        line.push('\n');
        let mut file = self.file.lock().unwrap_or_else(PoisonError::into_inner);
        if let Err(error) = file.write_all(line.as_bytes()).and_then(|()| file.flush()) {
            log(format_args!("record: write failed: {error}"));
        }
    }
}
