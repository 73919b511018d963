//! The demo servers' `Service` over stdio: rmcp's `ServerHandler` dispatch (in
//! `handler.rs`), plus what rmcp's typed model cannot say — a tool's
//! `execution.taskSupport`, the experimental task shapes of 2025-11-25. (rmcp's
//! HTTP server takes a `ServerHandler` only, so over `--http` `research` is a
//! task on 2026-07-28 connections and an ordinary slow call on older ones.)

use std::borrow::Cow;

use rmcp::{
    ErrorData as McpError, RoleServer, ServerHandler,
    model::{
        ClientNotification, ClientRequest, CustomResult, ProtocolVersion, ServerConfig,
        ServerResult,
    },
    service::{NotificationContext, RequestContext, Service},
};
use serde_json::{Value, json};

use super::tasks::Shape;
use super::tools::DemoHandler;
use super::toolsets::extras::RESEARCH;

#[derive(Clone)]
pub struct DemoService(pub DemoHandler);

/// Whether this request is on a 2026-07-28 connection.
fn stateless(context: &RequestContext<RoleServer>) -> bool {
    context
        .protocol_version()
        .is_some_and(|v| v.as_str() >= ProtocolVersion::V_2026_07_28.as_str())
}

fn raw(value: Value) -> ServerResult {
    ServerResult::CustomResult(CustomResult(value))
}

impl Service<RoleServer> for DemoService {
    async fn handle_request(
        &self,
        request: ClientRequest,
        context: RequestContext<RoleServer>,
    ) -> Result<ServerResult, McpError> {
        let handler = &self.0;
        let inner = &handler.inner;
        let shape = if stateless(&context) {
            Shape::Extension
        } else {
            Shape::Experimental
        };
        // The experimental tasks of 2025-11-25 (rmcp models only the 2026-07-28
        // extension, which `handler.rs` serves).
        let experimental = shape == Shape::Experimental && inner.extras;
        match &request {
            ClientRequest::CallToolRequest(call)
                if experimental && call.params.name == RESEARCH =>
            {
                let args = call.params.arguments.clone().unwrap_or_default();
                if let Some(recorder) = &inner.recorder {
                    recorder.call(RESEARCH, Some(&args));
                }
                let created = inner
                    .tasks
                    .start(&args, shape, &inner.faults, handler.name());
                return Ok(raw(created));
            }
            ClientRequest::GetTaskRequest(get) if experimental => {
                let params = serde_json::to_value(&get.params).unwrap_or(Value::Null);
                if let Some(recorder) = &inner.recorder {
                    recorder.task_polled(&params);
                }
                return inner.tasks.status(&params, shape, &inner.faults).map(raw);
            }
            ClientRequest::CancelTaskRequest(cancel) if experimental => {
                let params = serde_json::to_value(&cancel.params).unwrap_or(Value::Null);
                if let Some(recorder) = &inner.recorder {
                    recorder.task_cancelled(&params);
                }
                return inner.tasks.cancel(&params, shape, &inner.faults).map(raw);
            }
            ClientRequest::CustomRequest(custom)
                if experimental && custom.method == "tasks/result" =>
            {
                let params = custom.params.clone().unwrap_or(Value::Null);
                return inner.tasks.result(&params).await.map(raw);
            }
            _ => {}
        }
        let listing = matches!(request, ClientRequest::ListToolsRequest(_));
        let result =
            <DemoHandler as Service<RoleServer>>::handle_request(handler, request, context).await?;
        if !(listing && inner.extras) {
            return Ok(result);
        }
        // rmcp's `Tool` has no `execution`: add `taskSupport` to the raw listing.
        let mut value = serde_json::to_value(&result).unwrap_or(Value::Null);
        if let Some(tools) = value.get_mut("tools").and_then(Value::as_array_mut) {
            for tool in tools {
                if tool.get("name").and_then(Value::as_str) == Some(RESEARCH) {
                    tool["execution"] = json!({"taskSupport": "required"});
                }
            }
        }
        Ok(raw(value))
    }

    async fn handle_notification(
        &self,
        notification: ClientNotification,
        context: NotificationContext<RoleServer>,
    ) -> Result<(), McpError> {
        <DemoHandler as Service<RoleServer>>::handle_notification(&self.0, notification, context)
            .await
    }

    fn get_info(&self) -> ServerConfig {
        ServerHandler::get_info(&self.0)
    }

    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        ServerHandler::supported_protocol_versions(&self.0)
    }
}
