//! The alpha/beta MCP server: a hand-written `ServerHandler` (no macros), so tool sets can carry
//! arbitrary JSON schemas and faults can bend every step of the protocol.

use std::{
    collections::BTreeMap,
    sync::{Arc, Mutex, PoisonError},
    time::Duration,
};

use rmcp::{
    ErrorData as McpError, RoleServer, ServerHandler,
    model::{
        CallToolRequestParams, CallToolResponse, CallToolResult, CancelledNotificationParam,
        ContentBlock, Implementation, InitializeRequestParams, InitializeResult, JsonObject,
        ListToolsResult, PaginatedRequestParams, ProgressNotificationParam, ServerCapabilities,
        ServerConfig,
    },
    service::{NotificationContext, RequestContext},
};
use serde_json::Value;

use super::{
    faults::{self, Faults},
    log,
    record::Recorder,
    toolsets::{Behaviour, ToolSet},
};

/// Which demo server: same tools, different data, so tests can tell who answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flavor {
    Alpha,
    Beta,
}

impl Flavor {
    pub fn server_name(self) -> &'static str {
        match self {
            Flavor::Alpha => "demo-alpha",
            Flavor::Beta => "demo-beta",
        }
    }

    pub fn domain(self) -> &'static str {
        match self {
            Flavor::Alpha => "the colour of a fruit",
            Flavor::Beta => "the country of a city",
        }
    }

    fn initial_table(self) -> BTreeMap<String, String> {
        let pairs: &[(&str, &str)] = match self {
            Flavor::Alpha => &[
                ("apple", "red"),
                ("banana", "yellow"),
                ("cherry", "dark red"),
                ("lime", "green"),
                ("plum", "purple"),
            ],
            Flavor::Beta => &[
                ("paris", "France"),
                ("lima", "Peru"),
                ("oslo", "Norway"),
                ("kyoto", "Japan"),
                ("quito", "Ecuador"),
            ],
        };
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }
}

/// Cheap to clone: the HTTP transport makes one handler per session, all sharing one table.
#[derive(Clone)]
pub struct DemoHandler {
    inner: Arc<Inner>,
}

struct Inner {
    flavor: Flavor,
    tool_set: ToolSet,
    page_size: Option<usize>,
    table: Mutex<BTreeMap<String, String>>,
    faults: Faults,
    recorder: Option<Recorder>,
}

/// Text a misconfigured server might put into an error: a stack trace, a private path and a
/// secret. The harness must never show this to the model.
const LEAKY_TRACE: &str = "Traceback (most recent call last):
  File \"/srv/demo/app/handlers.py\", line 87, in call_tool
    creds = load_credentials(\"/home/demo/.config/demo/credentials.json\")
  File \"/srv/demo/app/auth.py\", line 23, in load_credentials
    return Client(api_key=\"sk-demo-0123456789abcdef\").connect()
ConnectionRefusedError: [Errno 111] upstream refused connection";

impl DemoHandler {
    pub fn new(
        flavor: Flavor,
        tool_set: ToolSet,
        page_size: Option<usize>,
        faults: Faults,
        recorder: Option<Recorder>,
    ) -> Self {
        Self {
            inner: Arc::new(Inner {
                flavor,
                tool_set,
                page_size,
                table: Mutex::new(flavor.initial_table()),
                faults,
                recorder,
            }),
        }
    }

    fn name(&self) -> &'static str {
        self.inner.flavor.server_name()
    }

    fn table(&self) -> std::sync::MutexGuard<'_, BTreeMap<String, String>> {
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

    fn lookup(&self, args: &JsonObject) -> CallToolResult {
        let Some(key) = args.get("key").and_then(Value::as_str) else {
            return self.error("lookup needs a string argument \"key\"");
        };
        if let Some(bytes) = self.inner.faults.huge_result {
            return self.ok(huge_text(bytes));
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

    fn set(&self, args: &JsonObject) -> CallToolResult {
        let key = args.get("key").and_then(Value::as_str);
        let value = args.get("value").and_then(Value::as_str);
        let (Some(key), Some(value)) = (key, value) else {
            return self.error("set needs string arguments \"key\" and \"value\"");
        };
        self.table().insert(key.to_owned(), value.to_owned());
        self.ok(format!("stored {key} = {value}"))
    }

    fn reset(&self) -> CallToolResult {
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

    fn fail(&self, args: &JsonObject) -> CallToolResult {
        let reason = args
            .get("reason")
            .and_then(Value::as_str)
            .unwrap_or("no reason given");
        self.error(format!(
            "internal error in {} (reason: {reason})\n{LEAKY_TRACE}",
            self.name()
        ))
    }

    async fn slow(
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

    fn echo(&self, name: &str, args: &JsonObject) -> CallToolResult {
        self.ok(format!(
            "{name} called on {} with {}",
            self.name(),
            Value::Object(args.clone())
        ))
    }
}

fn huge_text(bytes: usize) -> String {
    const FILLER: &str = "All work and no play makes a huge result. ";
    let mut text = FILLER.repeat(bytes / FILLER.len() + 1);
    text.truncate(bytes);
    text
}

impl ServerHandler for DemoHandler {
    fn get_info(&self) -> ServerConfig {
        let faults = &self.inner.faults;
        let capabilities = ServerCapabilities::builder()
            .enable_tools()
            .enable_tool_list_changed()
            .build();
        let server_info = Implementation::new(
            faults.taint(self.name()),
            faults.taint(env!("CARGO_PKG_VERSION")),
        );
        let instructions = format!(
            "Demo server for mcp-harness. `lookup` finds {} in a small in-memory table; \
             `set` and `reset` change it; `fail` and `slow` exist for testing.",
            self.inner.flavor.domain()
        );
        ServerConfig::new(capabilities)
            .with_server_info(server_info)
            .with_instructions(faults.taint(instructions))
    }

    async fn initialize(
        &self,
        request: InitializeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<InitializeResult, McpError> {
        let faults = &self.inner.faults;
        if faults.hang_on_initialize {
            log("hang-on-initialize: never answering");
            std::future::pending::<()>().await;
        }
        if let Some(ms) = faults.slow_initialize_ms {
            log(format_args!("slow-initialize: answering in {ms} ms"));
            tokio::time::sleep(Duration::from_millis(ms)).await;
        }
        context.peer.set_peer_info(request.clone());
        self.negotiate_initialize(&request)
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        let Some(count) = self.inner.faults.list_changed_storm else {
            return;
        };
        log(format_args!(
            "list-changed-storm: sending {count} notifications"
        ));
        for _ in 0..count {
            if let Err(error) = context.peer.notify_tool_list_changed().await {
                log(format_args!("list-changed-storm: send failed: {error}"));
                return;
            }
        }
    }

    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        let tools = &self.inner.tool_set.tools;
        let Some(page_size) = self.inner.page_size else {
            return Ok(ListToolsResult::with_all_items(tools.clone()));
        };
        let start = match request.and_then(|params| params.cursor) {
            None => 0,
            Some(cursor) => match cursor.parse::<usize>() {
                Ok(offset) if offset < tools.len() => offset,
                _ => {
                    return Err(McpError::invalid_params(
                        format!("unknown cursor {cursor:?}"),
                        None,
                    ));
                }
            },
        };
        let end = start.saturating_add(page_size).min(tools.len());
        let mut result = ListToolsResult::with_all_items(tools[start..end].to_vec());
        result.next_cursor = (end < tools.len()).then(|| end.to_string());
        Ok(result)
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let name = request.name.as_ref();
        log(format_args!("tools/call {name}"));
        if let Some(recorder) = &self.inner.recorder {
            recorder.call(name, request.arguments.as_ref());
        }
        let faults = &self.inner.faults;
        if faults.crash_on_call_partial {
            faults::crash_partial();
        }
        if faults.crash_on_call {
            log("crash-on-call: exiting with status 3");
            std::process::exit(3);
        }
        if faults.hang_on_call {
            log("hang-on-call: never answering");
            std::future::pending::<()>().await;
        }
        if !self.inner.tool_set.contains(name) {
            return Err(McpError::invalid_params(
                format!("unknown tool {name:?}"),
                None,
            ));
        }
        let args = request.arguments.clone().unwrap_or_default();
        let result = match (self.inner.tool_set.behaviour, name) {
            (Behaviour::Echo, _) => self.echo(name, &args),
            (Behaviour::Standard, "lookup") => self.lookup(&args),
            (Behaviour::Standard, "set") => self.set(&args),
            (Behaviour::Standard, "reset") => self.reset(),
            (Behaviour::Standard, "fail") => self.fail(&args),
            (Behaviour::Standard, "slow") => self.slow(&args, &context).await,
            (Behaviour::Standard, _) => self.echo(name, &args),
        };
        Ok(result.into())
    }

    async fn on_cancelled(
        &self,
        notification: CancelledNotificationParam,
        _context: NotificationContext<RoleServer>,
    ) {
        log(format_args!(
            "notifications/cancelled {:?} ({})",
            notification.request_id,
            notification.reason.as_deref().unwrap_or("no reason")
        ));
        if let Some(recorder) = &self.inner.recorder {
            recorder.cancelled(&notification);
        }
    }
}
