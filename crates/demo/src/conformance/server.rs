//! `demo-server conformance` (test builds): the upstream the server side of the
//! official conformance suite is run against, directly and behind `serve`. It
//! implements what the suite's server scenarios ask for by name — the
//! `test_*` tools, the `test://` resources and template, the `test_*` prompts,
//! `logging/setLevel`, `completion/complete`, `resources/subscribe` — each
//! answering as the scenario's text describes, and nothing else.
//!
//! `test://watched-resource` changes on every read and on `touch_watched`
//! (a tool of its own), and each subscribed session is told so
//! (`notifications/resources/updated`): what a subscription through the
//! gateway is tested with.
//!
//! Logging and sampling are deprecated in rmcp (SEP-2577), but the suite's
//! 2025-11-25 scenarios still ask for them.
#![allow(deprecated)]

use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::{
    ErrorData as McpError, Peer, RoleServer, ServerHandler,
    model::{
        CallToolRequestParams, CallToolResponse, CallToolResult, CompleteRequestParams,
        CompleteResult, ContentBlock, ElicitRequest, ElicitRequestParams, GetPromptRequestParams,
        GetPromptResponse, GetPromptResult, Implementation, ListPromptsResult,
        ListResourceTemplatesResult, ListResourcesResult, ListToolsResult,
        LoggingMessageNotificationParam, PaginatedRequestParams, ProgressNotificationParam,
        ProtocolVersion, ReadResourceRequestParams, ReadResourceResponse, ReadResourceResult,
        ResourceUpdatedNotificationParam, ServerCapabilities, ServerConfig, ServerRequest,
        SetLevelRequestParams, SubscribeRequestParams, SubscriptionFilter, Tool,
        UnsubscribeRequestParams,
    },
    service::{RequestContext, SubscriptionContext, SubscriptionSink},
};
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

/// A 1×1 red PNG.
const PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==";
/// A WAV header with no samples (44 bytes).
const WAV: &str = "UklGRiQAAABXQVZFZm10IBAAAAABAAEAQB8AAIA+AAACABAAZGF0YQAAAAA=";
/// The resource whose reads and `touch_watched` tell its subscribers.
pub const WATCHED: &str = "test://watched-resource";

#[derive(Clone)]
pub struct ConformanceServer {
    inner: Arc<Inner>,
    /// Which revisions it speaks (`--protocol`).
    protocol: crate::DemoProtocol,
}

#[derive(Default)]
struct Inner {
    /// Bumped by `touch_watched`: the watched resource's text changes with it.
    version: Mutex<u64>,
    /// The sessions subscribed to the watched resource.
    subscribers: Mutex<Vec<Peer<RoleServer>>>,
    /// The 2026-07-28 subscriptions (`subscriptions/listen`) to it.
    sinks: Mutex<Vec<SubscriptionSink>>,
}

fn typed<T: DeserializeOwned>(value: Value) -> Result<T, McpError> {
    serde_json::from_value(value).map_err(|e| McpError::internal_error(e.to_string(), None))
}

fn tool(name: &str, description: &str, schema: Value) -> Tool {
    let schema = match schema {
        Value::Object(map) => map,
        _ => serde_json::Map::new(),
    };
    Tool::new(name.to_string(), description.to_string(), Arc::new(schema))
}

fn no_arguments() -> Value {
    json!({"type": "object", "properties": {}})
}

fn string_argument(name: &str) -> Value {
    json!({"type": "object", "properties": {name: {"type": "string"}}, "required": [name]})
}

/// The string argument `key`, empty when absent or not a string (the suite's
/// tools and prompts echo what they were given).
fn string_of(args: &serde_json::Map<String, Value>, key: &str) -> String {
    args.get(key)
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string()
}

fn text(text: impl Into<String>) -> CallToolResult {
    CallToolResult::success(vec![ContentBlock::text(text)])
}

fn blocks(value: Value) -> Result<CallToolResult, McpError> {
    Ok(CallToolResult::success(typed::<Vec<ContentBlock>>(value)?))
}

impl ConformanceServer {
    pub fn new(protocol: crate::DemoProtocol) -> Self {
        Self {
            inner: Arc::default(),
            protocol,
        }
    }

    fn tools() -> Vec<Tool> {
        vec![
            tool("test_simple_text", "Returns simple text", no_arguments()),
            tool("test_image_content", "Returns an image", no_arguments()),
            tool("test_audio_content", "Returns audio", no_arguments()),
            tool(
                "test_embedded_resource",
                "Returns an embedded resource",
                no_arguments(),
            ),
            tool(
                "test_multiple_content_types",
                "Returns text, an image and a resource",
                no_arguments(),
            ),
            tool(
                "test_tool_with_logging",
                "Logs three messages while it runs",
                no_arguments(),
            ),
            tool("test_error_handling", "Always fails", no_arguments()),
            tool(
                "test_tool_with_progress",
                "Reports progress 0, 50, 100 of 100",
                no_arguments(),
            ),
            tool(
                "test_sampling",
                "Asks the client's model",
                string_argument("prompt"),
            ),
            tool(
                "test_elicitation",
                "Asks the user",
                string_argument("message"),
            ),
            tool(
                "test_elicitation_sep1034_defaults",
                "Asks the user with defaults for every primitive type",
                no_arguments(),
            ),
            tool(
                "test_elicitation_sep1330_enums",
                "Asks the user with every enum variant",
                no_arguments(),
            ),
            tool(
                "json_schema_2020_12_tool",
                "Tool with JSON Schema 2020-12 features",
                json!({
                    "$schema": "https://json-schema.org/draft/2020-12/schema",
                    "type": "object",
                    "$defs": {"address": {"type": "object", "properties": {
                        "street": {"type": "string"}, "city": {"type": "string"}}}},
                    "properties": {"name": {"type": "string"}, "address": {"$ref": "#/$defs/address"}},
                    "additionalProperties": false
                }),
            ),
            tool(
                "test_reconnection",
                "Answers on its POST stream (rmcp's server cannot close it mid-call)",
                no_arguments(),
            ),
            tool(
                "touch_watched",
                "Changes test://watched-resource and tells its subscribers",
                no_arguments(),
            ),
        ]
    }

    async fn run(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, McpError> {
        let args = request.arguments.unwrap_or_default();
        let arg = |key: &str| string_of(&args, key);
        let peer = &context.peer;
        match request.name.as_ref() {
            "test_simple_text" => Ok(text("This is a simple text response for testing.")),
            "test_image_content" => {
                blocks(json!([{"type": "image", "data": PNG, "mimeType": "image/png"}]))
            }
            "test_audio_content" => {
                blocks(json!([{"type": "audio", "data": WAV, "mimeType": "audio/wav"}]))
            }
            "test_embedded_resource" => blocks(json!([{"type": "resource", "resource": {
                "uri": "test://embedded-resource", "mimeType": "text/plain",
                "text": "This is an embedded resource content."}}])),
            "test_multiple_content_types" => blocks(json!([
                {"type": "text", "text": "Multiple content types test:"},
                {"type": "image", "data": PNG, "mimeType": "image/png"},
                {"type": "resource", "resource": {"uri": "test://mixed-content-resource",
                    "mimeType": "application/json", "text": "{\"test\":\"data\",\"value\":123}"}}
            ])),
            "test_tool_with_logging" => {
                for (i, message) in [
                    "Tool execution started",
                    "Tool processing data",
                    "Tool execution completed",
                ]
                .into_iter()
                .enumerate()
                {
                    if i > 0 {
                        tokio::time::sleep(Duration::from_millis(50)).await;
                    }
                    let param = typed::<LoggingMessageNotificationParam>(
                        json!({"level": "info", "data": message}),
                    )?;
                    let _ = peer.notify_logging_message(param).await;
                }
                Ok(text("Tool with logging executed successfully"))
            }
            "test_error_handling" => Ok(CallToolResult::error(vec![ContentBlock::text(
                "This tool intentionally returns an error for testing",
            )])),
            "test_tool_with_progress" => {
                let token = context.meta.get_progress_token();
                for (i, progress) in [0, 50, 100].into_iter().enumerate() {
                    if i > 0 {
                        tokio::time::sleep(Duration::from_millis(50)).await;
                    }
                    if let Some(token) = &token {
                        let param = typed::<ProgressNotificationParam>(json!({
                            "progressToken": token, "progress": progress, "total": 100}))?;
                        let _ = peer.notify_progress(param).await;
                    }
                }
                Ok(text("Tool with progress executed successfully"))
            }
            "test_sampling" => {
                let params = typed(json!({
                    "messages": [{"role": "user", "content": {"type": "text", "text": arg("prompt")}}],
                    "maxTokens": 100
                }))?;
                #[allow(deprecated)]
                let answer = peer.create_message(params).await;
                Ok(match answer {
                    Ok(result) => text(format!(
                        "LLM response: {}",
                        serde_json::to_value(&result.message.content).unwrap_or(Value::Null)
                    )),
                    Err(e) => CallToolResult::error(vec![ContentBlock::text(format!(
                        "sampling failed: {e}"
                    ))]),
                })
            }
            "test_elicitation" => {
                self.elicit(peer, &arg("message"), json!({
                    "type": "object",
                    "properties": {
                        "username": {"type": "string", "description": "User's response"},
                        "email": {"type": "string", "description": "User's email address"}
                    },
                    "required": ["username", "email"]
                }))
                .await
            }
            "test_elicitation_sep1034_defaults" => {
                self.elicit(peer, "Please review and update the form fields with defaults", json!({
                    "type": "object",
                    "properties": {
                        "name": {"type": "string", "default": "John Doe"},
                        "age": {"type": "integer", "default": 30},
                        "score": {"type": "number", "default": 95.5},
                        "status": {"type": "string", "enum": ["active", "inactive", "pending"], "default": "active"},
                        "verified": {"type": "boolean", "default": true}
                    }
                }))
                .await
            }
            "test_elicitation_sep1330_enums" => {
                self.elicit(peer, "Please choose from the enum variants", json!({
                    "type": "object",
                    "properties": {
                        "untitledSingle": {"type": "string", "enum": ["option1", "option2", "option3"]},
                        "titledSingle": {"type": "string", "oneOf": [
                            {"const": "value1", "title": "First Option"},
                            {"const": "value2", "title": "Second Option"},
                            {"const": "value3", "title": "Third Option"}]},
                        "legacyEnum": {"type": "string", "enum": ["opt1", "opt2", "opt3"],
                            "enumNames": ["Option One", "Option Two", "Option Three"]},
                        "untitledMulti": {"type": "array", "items": {"type": "string", "enum": ["option1", "option2", "option3"]}},
                        "titledMulti": {"type": "array", "items": {"anyOf": [
                            {"const": "value1", "title": "First Choice"},
                            {"const": "value2", "title": "Second Choice"},
                            {"const": "value3", "title": "Third Choice"}]}}
                    }
                }))
                .await
            }
            "json_schema_2020_12_tool" => Ok(text(format!(
                "json_schema_2020_12_tool called with {}",
                Value::Object(args.clone())
            ))),
            "test_reconnection" => Ok(text("Reconnection test completed")),
            "touch_watched" => {
                let told = self.touch().await;
                Ok(text(format!(
                    "test://watched-resource changed; {told} subscribed sessions told"
                )))
            }
            other => Err(McpError::invalid_params(format!("no tool {other:?}"), None)),
        }
    }

    async fn elicit(
        &self,
        peer: &Peer<RoleServer>,
        message: &str,
        schema: Value,
    ) -> Result<CallToolResult, McpError> {
        let params: ElicitRequestParams =
            typed(json!({"mode": "form", "message": message, "requestedSchema": schema}))?;
        let request = ServerRequest::ElicitRequest(ElicitRequest::new(params));
        Ok(match peer.send_request(request).await {
            Ok(result) => text(format!(
                "Elicitation completed: {}",
                serde_json::to_value(&result).unwrap_or(Value::Null)
            )),
            Err(e) => {
                CallToolResult::error(vec![ContentBlock::text(format!("elicitation failed: {e}"))])
            }
        })
    }

    /// The watched resource changes; every subscribed session is told. How
    /// many were.
    async fn touch(&self) -> usize {
        *self.inner.version.lock().unwrap_or_else(|e| e.into_inner()) += 1;
        let peers = {
            let mut subscribers = self.subscribers();
            subscribers.retain(|peer| !peer.is_transport_closed());
            subscribers.clone()
        };
        let sinks = self.sinks().clone();
        let mut told = 0;
        for sink in sinks {
            told += usize::from(sink.notify_resource_updated(WATCHED).await.is_ok());
        }
        for peer in peers {
            told += usize::from(
                peer.notify_resource_updated(ResourceUpdatedNotificationParam::new(WATCHED))
                    .await
                    .is_ok(),
            );
        }
        told
    }

    fn sinks(&self) -> std::sync::MutexGuard<'_, Vec<SubscriptionSink>> {
        self.inner.sinks.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn subscribers(&self) -> std::sync::MutexGuard<'_, Vec<Peer<RoleServer>>> {
        self.inner
            .subscribers
            .lock()
            .unwrap_or_else(|e| e.into_inner())
    }
}

impl ServerHandler for ConformanceServer {
    fn get_info(&self) -> ServerConfig {
        let capabilities = ServerCapabilities::builder()
            .enable_tools()
            .enable_resources()
            .enable_resources_subscribe()
            .enable_prompts()
            .enable_logging()
            .enable_completions()
            .build();
        ServerConfig::new(capabilities).with_server_info(Implementation::new(
            "demo-conformance",
            env!("CARGO_PKG_VERSION"),
        ))
    }

    fn supported_protocol_versions(&self) -> std::borrow::Cow<'static, [ProtocolVersion]> {
        use std::borrow::Cow;
        match self.protocol {
            crate::DemoProtocol::Both => Cow::Borrowed(ProtocolVersion::KNOWN_VERSIONS),
            crate::DemoProtocol::Stateless => Cow::Owned(vec![ProtocolVersion::V_2026_07_28]),
            crate::DemoProtocol::Handshake => {
                Cow::Borrowed(ProtocolVersion::known_up_to(&ProtocolVersion::V_2025_11_25))
            }
        }
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        Ok(ListToolsResult::with_all_items(Self::tools()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        self.run(request, context).await.map(Into::into)
    }

    async fn set_level(
        &self,
        _request: SetLevelRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        Ok(())
    }

    async fn complete(
        &self,
        request: CompleteRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, McpError> {
        let prefix = request.argument.value;
        // `many-…`: more values than the spec lets one answer carry (100), to
        // show a gateway caps them.
        let many = (0..150).map(|i| format!("many-{i:03}"));
        let values: Vec<String> = ["paris", "park", "party", "test-value"]
            .into_iter()
            .map(str::to_string)
            .chain(many)
            .filter(|v| v.starts_with(prefix.as_str()))
            .collect();
        typed(json!({"completion": {"values": values, "total": values.len(), "hasMore": false}}))
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, McpError> {
        typed(json!({"resources": [
            {"uri": "test://static-text", "name": "static-text",
             "description": "A static text resource", "mimeType": "text/plain"},
            {"uri": "test://static-binary", "name": "static-binary",
             "description": "A static binary resource", "mimeType": "image/png"},
            {"uri": WATCHED, "name": "watched-resource",
             "description": "Changes on touch_watched; subscribe to hear of it", "mimeType": "text/plain"}
        ]}))
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, McpError> {
        typed(json!({"resourceTemplates": [
            {"uriTemplate": "test://template/{id}/data", "name": "template",
             "description": "Data for an id", "mimeType": "application/json"}
        ]}))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, McpError> {
        let uri = request.uri.as_str();
        let content = match uri {
            "test://static-text" => json!({"uri": uri, "mimeType": "text/plain",
                "text": "This is the content of the static text resource."}),
            "test://static-binary" => json!({"uri": uri, "mimeType": "image/png", "blob": PNG}),
            WATCHED => {
                let version = *self.inner.version.lock().unwrap_or_else(|e| e.into_inner());
                json!({"uri": uri, "mimeType": "text/plain", "text": format!("version {version}")})
            }
            _ => match uri
                .strip_prefix("test://template/")
                .and_then(|rest| rest.strip_suffix("/data"))
            {
                Some(id) if !id.is_empty() && !id.contains('/') => json!({
                    "uri": uri, "mimeType": "application/json",
                    "text": json!({"id": id, "templateTest": true, "data": format!("Data for ID: {id}")}).to_string()
                }),
                _ => {
                    return Err(McpError::resource_not_found(
                        format!("no resource {uri:?}"),
                        Some(json!({"uri": uri})),
                    ));
                }
            },
        };
        typed::<ReadResourceResult>(json!({"contents": [content]})).map(Into::into)
    }

    /// 2026-07-28: the watched resource, by `resourceSubscriptions`.
    fn accepted_subscription_filter(
        &self,
        requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        let mut accepted = SubscriptionFilter::new();
        accepted.resource_subscriptions = requested
            .resource_subscriptions
            .as_ref()
            .map(|uris| uris.iter().filter(|u| *u == WATCHED).cloned().collect());
        Some(accepted)
    }

    async fn listen(&self, context: SubscriptionContext) -> Result<(), McpError> {
        let sink = context.sink().clone();
        let watches = sink
            .accepted()
            .resource_subscriptions
            .as_ref()
            .is_some_and(|uris| !uris.is_empty());
        if watches {
            self.sinks().push(sink.clone());
        }
        context.cancelled().await;
        self.sinks().retain(|s| s.id() != sink.id());
        Ok(())
    }

    #[allow(deprecated)]
    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        if request.uri == WATCHED {
            let mut subscribers = self.subscribers();
            if !subscribers.iter().any(|p| same_session(p, &context.peer)) {
                subscribers.push(context.peer);
            }
        }
        Ok(())
    }

    #[allow(deprecated)]
    async fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        if request.uri == WATCHED {
            let gone = context.peer;
            self.subscribers().retain(|peer| !same_session(peer, &gone));
        }
        Ok(())
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, McpError> {
        typed(json!({"prompts": [
            {"name": "test_simple_prompt", "description": "A simple prompt without arguments"},
            {"name": "test_prompt_with_arguments", "description": "A prompt with two arguments",
             "arguments": [
                {"name": "arg1", "description": "First test argument", "required": true},
                {"name": "arg2", "description": "Second test argument", "required": true}]},
            {"name": "test_prompt_with_embedded_resource", "description": "A prompt with an embedded resource",
             "arguments": [{"name": "resourceUri", "description": "URI of the resource to embed", "required": true}]},
            {"name": "test_prompt_with_image", "description": "A prompt with an image"}
        ]}))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, McpError> {
        let args = request.arguments.unwrap_or_default();
        let arg = |key: &str| string_of(&args, key);
        let messages = match request.name.as_str() {
            "test_simple_prompt" => json!([{"role": "user", "content": {"type": "text",
                "text": "This is a simple prompt for testing."}}]),
            "test_prompt_with_arguments" => json!([{"role": "user", "content": {"type": "text",
                "text": format!("Prompt with arguments: arg1='{}', arg2='{}'", arg("arg1"), arg("arg2"))}}]),
            "test_prompt_with_embedded_resource" => json!([
                {"role": "user", "content": {"type": "resource", "resource": {
                    "uri": arg("resourceUri"), "mimeType": "text/plain",
                    "text": "Embedded resource content for testing."}}},
                {"role": "user", "content": {"type": "text",
                    "text": "Please process the embedded resource above."}}
            ]),
            "test_prompt_with_image" => json!([
                {"role": "user", "content": {"type": "image", "data": PNG, "mimeType": "image/png"}},
                {"role": "user", "content": {"type": "text", "text": "Please analyze the image above."}}
            ]),
            other => {
                return Err(McpError::invalid_params(
                    format!("no prompt {other:?}"),
                    None,
                ));
            }
        };
        typed::<GetPromptResult>(json!({"messages": messages})).map(Into::into)
    }
}

/// Whether two peers are one session's: a session's peers share its peer
/// info (a peer has no identity of its own).
fn same_session(a: &Peer<RoleServer>, b: &Peer<RoleServer>) -> bool {
    match (a.peer_info(), b.peer_info()) {
        (Some(a), Some(b)) => Arc::ptr_eq(&a, &b),
        _ => false,
    }
}
