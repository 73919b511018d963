//! The alpha/beta tools and their table. The protocol side is in `handler.rs`: a hand-written
//! `ServerHandler` (no macros), so tool sets can carry arbitrary JSON schemas.

use std::{
    collections::BTreeMap,
    sync::{
        Arc, Mutex, PoisonError,
        atomic::{AtomicBool, Ordering},
    },
    time::Duration,
};

use rmcp::{
    RoleServer,
    model::{CallToolResult, ContentBlock, JsonObject, ProgressNotificationParam, Tool},
    service::{RequestContext, SubscriptionSink},
};
use serde_json::Value;

use super::{
    faults::Faults,
    kind::{DemoProtocol, Flavor},
    log,
    record::Recorder,
    tasks::TaskStore,
    toolsets::{self, ToolSet},
};

/// Cheap to clone: the HTTP transport makes one handler per session, all sharing one table.
#[derive(Clone)]
pub struct DemoHandler {
    pub(super) inner: Arc<Inner>,
}

pub(super) struct Inner {
    pub(super) flavor: Flavor,
    pub(super) tool_set: ToolSet,
    pub(super) page_size: Option<usize>,
    table: Mutex<BTreeMap<String, String>>,
    pub(super) faults: Faults,
    pub(super) recorder: Option<Recorder>,
    /// Under `mutate-tools`: the tools published once the mutation happened.
    pub(super) mutant: Option<Vec<Tool>>,
    pub(super) mutated: AtomicBool,
    /// `--protocol`: the revisions this server speaks.
    pub(super) protocol: DemoProtocol,
    /// `--extras`: `research` (a task) and `guarded_set` (asks first) are published.
    pub(super) extras: bool,
    pub(super) tasks: TaskStore,
    /// Open `subscriptions/listen` requests (2026-07-28 clients), for list changes.
    pub(super) sinks: Mutex<Vec<SubscriptionSink>>,
    /// Every subscription ever opened (their cancellation is not a call's).
    pub(super) subscriptions: Mutex<Vec<rmcp::model::RequestId>>,
}

/// Text a misconfigured server might put into an error: a stack trace, a private path and a
/// secret. The harness must never show this to the model.
const LEAKY_TRACE: &str = "Traceback (most recent call last):
  File \"/srv/demo/app/handlers.py\", line 87, in call_tool
    creds = load_credentials(\"/home/demo/.config/demo/credentials.json\")
  File \"/srv/demo/app/auth.py\", line 23, in load_credentials
    return Client(api_key=\"sk-demo-0123456789abcdef\").connect()
ConnectionRefusedError: [Errno 111] upstream refused connection";

/// The message of a `rpc-error-on` JSON-RPC error: a private path and the secret again.
pub(super) fn rpc_error_text(tool: &str) -> String {
    format!(
        "{tool} failed: unhandled exception at /srv/demo/app/handlers.py:87 \
         (api_key=\"sk-demo-0123456789abcdef\")"
    )
}

impl DemoHandler {
    pub fn new(
        flavor: Flavor,
        mut tool_set: ToolSet,
        page_size: Option<usize>,
        faults: Faults,
        recorder: Option<Recorder>,
        protocol: DemoProtocol,
        extras: bool,
    ) -> Self {
        if extras {
            tool_set
                .tools
                .extend(toolsets::extras::tools(flavor.server_name()));
        }
        Self {
            inner: Arc::new(Inner {
                flavor,
                page_size,
                protocol,
                extras,
                tasks: TaskStore::default(),
                sinks: Mutex::new(Vec::new()),
                subscriptions: Mutex::new(Vec::new()),
                table: Mutex::new(flavor.initial_table()),
                mutant: faults
                    .mutate_tools
                    .map(|kind| toolsets::mutate(&tool_set.tools, kind)),
                mutated: AtomicBool::new(faults.starts_mutated()),
                tool_set,
                faults,
                recorder,
            }),
        }
    }

    /// The tools published right now (after a mutation, the mutated set).
    pub(super) fn tools(&self) -> &[Tool] {
        match &self.inner.mutant {
            Some(mutant) if self.inner.mutated.load(Ordering::SeqCst) => mutant,
            _ => &self.inner.tool_set.tools,
        }
    }

    /// Switches to the mutated tool set; true the first time only. With
    /// `mutate-mark`, the change outlives this process.
    pub(super) fn mutate(&self) -> bool {
        let first = self.inner.mutant.is_some() && !self.inner.mutated.swap(true, Ordering::SeqCst);
        if first
            && let Some(mark) = &self.inner.faults.mutate_mark
            && let Err(error) = std::fs::write(mark, "mutated\n")
        {
            log(format_args!("mutate-mark: cannot write {mark}: {error}"));
        }
        first
    }

    pub(super) fn name(&self) -> &'static str {
        self.inner.flavor.server_name()
    }

    pub(super) fn table(&self) -> std::sync::MutexGuard<'_, BTreeMap<String, String>> {
        self.inner
            .table
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    fn ok(&self, text: impl Into<String>) -> CallToolResult {
        CallToolResult::success(vec![ContentBlock::text(self.inner.faults.taint(text))])
    }

    fn error(&self, text: impl Into<String>) -> CallToolResult {
        CallToolResult::error(vec![ContentBlock::text(self.inner.faults.taint(text))])
    }

    pub(super) fn lookup(&self, args: &JsonObject) -> CallToolResult {
        let Some(key) = args.get("key").and_then(Value::as_str) else {
            return self.error("lookup needs a string argument \"key\"");
        };
        if let Some(bytes) = self.inner.faults.huge_result {
            return self.ok(huge_text(bytes));
        }
        if self.inner.faults.content_blocks {
            return every_block(key);
        }
        let table = self.table();
        match table.get(key) {
            Some(value) => self.ok(format!("{key} = {value} ({})", self.name())),
            None => {
                let known: Vec<&str> = table.keys().map(String::as_str).collect();
                self.ok(format!(
                    "no entry for {key:?} in {}; known keys: {}",
                    self.name(),
                    known.join(", ")
                ))
            }
        }
    }

    pub(super) fn set(&self, args: &JsonObject) -> CallToolResult {
        let key = args.get("key").and_then(Value::as_str);
        let value = args.get("value").and_then(Value::as_str);
        let (Some(key), Some(value)) = (key, value) else {
            return self.error("set needs string arguments \"key\" and \"value\"");
        };
        self.table().insert(key.to_owned(), value.to_owned());
        self.ok(format!("stored {key} = {value}"))
    }

    pub(super) fn reset(&self) -> CallToolResult {
        let initial = self.inner.flavor.initial_table();
        let mut table = self.table();
        let dropped = table
            .iter()
            .filter(|(key, value)| initial.get(*key) != Some(*value))
            .count();
        *table = initial;
        self.ok(format!(
            "reset {}: dropped {dropped} changed entr{}, {} initial entries restored",
            self.name(),
            if dropped == 1 { "y" } else { "ies" },
            table.len()
        ))
    }

    pub(super) fn fail(&self, args: &JsonObject) -> CallToolResult {
        let reason = args
            .get("reason")
            .and_then(Value::as_str)
            .unwrap_or("no reason given");
        self.error(format!(
            "internal error in {} (reason: {reason})\n{LEAKY_TRACE}",
            self.name()
        ))
    }

    pub(super) async fn slow(
        &self,
        args: &JsonObject,
        context: &RequestContext<RoleServer>,
    ) -> CallToolResult {
        let seconds = match args.get("seconds") {
            None => 2.0,
            Some(value) => match value.as_f64() {
                Some(s) if (0.0..=60.0).contains(&s) => s,
                _ => return self.error("slow: \"seconds\" must be a number from 0 to 60"),
            },
        };
        let steps = match args.get("steps") {
            None => 4,
            Some(value) => match value.as_u64() {
                Some(n) if (1..=100).contains(&n) => n,
                _ => return self.error("slow: \"steps\" must be an integer from 1 to 100"),
            },
        };
        // rmcp moves the request's `_meta` into the context: the token is there, not in params.
        let token = context.meta.get_progress_token();
        let step = Duration::from_secs_f64(seconds / steps as f64);
        for done in 1..=steps {
            tokio::select! {
                () = tokio::time::sleep(step) => {}
                () = context.ct.cancelled() => {
                    log(format_args!("slow: cancelled after {} of {steps} steps", done - 1));
                    return self.error(format!("cancelled after {} of {steps} steps", done - 1));
                }
            }
            if let Some(token) = &token {
                let progress = ProgressNotificationParam::new(token.clone(), done as f64)
                    .with_total(steps as f64)
                    .with_message(self.inner.faults.taint(format!("step {done} of {steps}")));
                if let Err(error) = context.peer.notify_progress(progress).await {
                    log(format_args!("slow: progress notification failed: {error}"));
                }
            }
        }
        self.ok(format!("done after {seconds}s"))
    }

    pub(super) fn echo(&self, name: &str, args: &JsonObject) -> CallToolResult {
        self.ok(format!(
            "{name} called on {} with {}",
            self.name(),
            Value::Object(args.clone())
        ))
    }
}

/// One content block of every type, as a server might mix them.
fn every_block(key: &str) -> CallToolResult {
    // A 1x1 PNG, and 3 bytes of audio: small, but real base64.
    const PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";
    let blocks: Vec<ContentBlock> = serde_json::from_value(serde_json::json!([
        {"type": "text", "text": format!("{key}: every kind of block follows")},
        {"type": "image", "mimeType": "image/png", "data": PNG},
        {"type": "audio", "mimeType": "audio/wav", "data": "UklG"},
        {"type": "resource_link", "name": "colours", "uri": "demo://alpha/colours", "mimeType": "text/plain"},
        {"type": "resource", "resource": {"uri": "demo://alpha/readme", "mimeType": "text/markdown", "text": "# Alpha\nFruit colours."}},
        {"type": "resource", "resource": {"uri": "demo://alpha/logo", "mimeType": "image/png", "blob": PNG}},
    ]))
    .unwrap_or_default();
    CallToolResult::success(blocks)
}

fn huge_text(bytes: usize) -> String {
    // Lines of text with a non-ASCII letter, as a real file read would be: the
    // line breaks are escapes on the wire, which is the expensive case to parse.
    const FILLER: &str = "All work and no play makes a huge résult.\n";
    let mut text = FILLER.repeat(bytes / FILLER.len() + 1);
    let mut cut = bytes.min(text.len());
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    text.truncate(cut);
    text
}
