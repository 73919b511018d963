//! The `ServerHandler` side of alpha/beta: protocol steps (initialize, tools/list paging,
//! tools/call dispatch, cancellation), with the faults that bend each of them.

use std::time::Duration;

use rmcp::{
    ErrorData as McpError, RoleServer, ServerHandler,
    model::{
        CallToolRequestParams, CallToolResponse, CancelledNotificationParam, Implementation,
        InitializeRequestParams, InitializeResult, ListToolsResult, PaginatedRequestParams,
        ServerCapabilities, ServerConfig,
    },
    service::{NotificationContext, RequestContext},
};

use super::{faults, log, tools::DemoHandler, toolsets::Behaviour};

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
        if let Some(ms) = self.inner.faults.mutate_after_ms {
            let (handler, peer) = (self.clone(), context.peer.clone());
            tokio::spawn(async move {
                tokio::time::sleep(Duration::from_millis(ms)).await;
                handler.mutate_and_notify(&peer).await;
            });
        }
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
        // Tests wait for a re-list after this line instead of sleeping.
        if let Some(recorder) = &self.inner.recorder {
            recorder.storm_sent(count);
        }
    }

    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        if let Some(recorder) = &self.inner.recorder {
            recorder.list(request.as_ref().and_then(|r| r.cursor.as_deref()));
        }
        if let Some(ms) = self.inner.faults.slow_list_ms {
            tokio::time::sleep(std::time::Duration::from_millis(ms)).await;
        }
        let tools = self.tools();
        let Some(page_size) = self.inner.page_size else {
            return Ok(ListToolsResult::with_all_items(tools.to_vec()));
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
        if faults.rpc_error_on.iter().any(|t| t == name) {
            log(format_args!(
                "rpc-error-on: answering {name} with a JSON-RPC error"
            ));
            return Err(McpError::internal_error(
                faults.taint(super::tools::rpc_error_text(name)),
                None,
            ));
        }
        if faults.mutate_after_ms.is_none() {
            self.mutate_and_notify(&context.peer).await;
        }
        if !self.tools().iter().any(|t| t.name == name) {
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
        let request_id = notification
            .request_id
            .as_ref()
            .map_or_else(|| "(no id)".to_owned(), ToString::to_string);
        log(format_args!(
            "notifications/cancelled {request_id} ({})",
            notification.reason.as_deref().unwrap_or("no reason")
        ));
        if let Some(recorder) = &self.inner.recorder {
            recorder.cancelled(&notification);
        }
    }
}

impl DemoHandler {
    /// `mutate-tools`: switch to the mutated tool set (once) and tell the client.
    async fn mutate_and_notify(&self, peer: &rmcp::service::Peer<RoleServer>) {
        if !self.mutate() {
            return;
        }
        log("mutate-tools: the published tools changed; notifying");
        if let Err(error) = peer.notify_tool_list_changed().await {
            log(format_args!("mutate-tools: notify failed: {error}"));
        }
    }
}
