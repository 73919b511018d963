//! Resources and prompts of alpha and beta: what the harness shows in
//! `resources`, `prompts`, `list_mcp_resources` and `read_mcp_resource`.
//!
//! - `demo://NAME/readme` (Markdown), `demo://NAME/table` (JSON: the lookup
//!   table as it is now), `demo://NAME/large` (plain text, 300 kB: larger
//!   than a result may show) and `demo://NAME/broken` (always an error whose
//!   text holds a stack trace and a secret, which the model must never see);
//! - the template `demo://NAME/entry/{key}`: one entry of the table;
//! - prompts `summarize {topic, style?}` and `quiz` (no arguments).
//!
//! Under the `escapes` and `hidden-text` faults (test builds) every name, URI,
//! description and text the server sends carries their payloads: a hostile
//! server's resources and prompts.

use rmcp::{
    ErrorData as McpError,
    model::{
        GetPromptRequestParams, GetPromptResult, ListPromptsResult, ListResourceTemplatesResult,
        ListResourcesResult, ReadResourceRequestParams, ReadResourceResult,
    },
};
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use super::tools::{DemoHandler, rpc_error_text};

/// Bytes of `demo://NAME/large`.
pub const LARGE_BYTES: usize = 300 * 1024;

fn typed<T: DeserializeOwned>(value: Value) -> Result<T, McpError> {
    serde_json::from_value(value).map_err(|e| McpError::internal_error(e.to_string(), None))
}

impl DemoHandler {
    fn prefix(&self) -> String {
        format!("demo://{}", self.name())
    }

    pub(super) fn resource_list(&self) -> Result<ListResourcesResult, McpError> {
        let t = |s: &str| self.inner.faults.taint(s);
        let p = self.prefix();
        typed(json!({ "resources": [
            {"uri": t(&format!("{p}/readme")), "name": t("readme"), "title": t("About this server"),
             "description": t("What this demo server is for"), "mimeType": "text/markdown"},
            {"uri": format!("{p}/table"), "name": "table", "title": "The lookup table",
             "description": t(&format!("Every entry `lookup` knows: {}", self.inner.flavor.domain())),
             "mimeType": "application/json"},
            {"uri": format!("{p}/large"), "name": "large", "description": "A long text, for paging",
             "mimeType": "text/plain", "size": LARGE_BYTES},
            {"uri": format!("{p}/broken"), "name": "broken", "description": "Always fails to read",
             "mimeType": "text/plain"},
        ]}))
    }

    pub(super) fn resource_templates(&self) -> Result<ListResourceTemplatesResult, McpError> {
        let t = |s: &str| self.inner.faults.taint(s);
        typed(json!({ "resourceTemplates": [
            {"uriTemplate": t(&format!("{}/entry/{{key}}", self.prefix())), "name": t("entry"),
             "description": t("One entry of the lookup table"), "mimeType": "text/plain"},
        ]}))
    }

    pub(super) fn resource_read(
        &self,
        request: ReadResourceRequestParams,
    ) -> Result<ReadResourceResult, McpError> {
        let uri = request.uri;
        let t = |s: &str| self.inner.faults.taint(s);
        let p = self.prefix();
        // The hostile variant lists its readme under a tainted URI.
        let rest = if uri == t(&format!("{p}/readme")) {
            Some("/readme".to_owned())
        } else {
            uri.strip_prefix(&p).map(str::to_owned)
        };
        let text = |mime: &str, text: String| {
            typed(json!({ "contents": [{"uri": uri, "mimeType": mime, "text": text}] }))
        };
        match rest.as_deref() {
            Some("/readme") => text(
                "text/markdown",
                t(&format!(
                    "# {}\n\nA demo MCP server of mcp-harness: tools `lookup`, `set`, `reset`, \
                     `fail`, `slow`; these resources; prompts `summarize` and `quiz`.\n",
                    self.name()
                )),
            ),
            Some("/table") => {
                let table = serde_json::to_string_pretty(&*self.table())
                    .map_err(|e| McpError::internal_error(e.to_string(), None))?;
                text("application/json", table)
            }
            Some("/large") => {
                let line = "0123456789 the quick brown fox jumps over the lazy dog 0123456789\n";
                let mut body = line.repeat(LARGE_BYTES / line.len() + 1);
                body.truncate(LARGE_BYTES - 4);
                body.push_str("END\n");
                text("text/plain", body)
            }
            Some("/broken") => Err(McpError::internal_error(
                rpc_error_text("resources/read"),
                Some(json!({ "trace": rpc_error_text("resources/read") })),
            )),
            Some(entry) if entry.starts_with("/entry/") => {
                let key = &entry["/entry/".len()..];
                match self.table().get(key) {
                    Some(value) => text("text/plain", t(&format!("{key}: {value}"))),
                    None => Err(McpError::resource_not_found(
                        format!("no entry {key:?}"),
                        None,
                    )),
                }
            }
            _ => Err(McpError::resource_not_found(
                format!("no resource {uri:?}"),
                None,
            )),
        }
    }

    pub(super) fn prompt_list(&self) -> Result<ListPromptsResult, McpError> {
        let t = |s: &str| self.inner.faults.taint(s);
        typed(json!({ "prompts": [
            {"name": t("summarize"), "title": t("Summarize a topic"),
             "description": t("Asks for a short summary of a topic from the lookup table"),
             "arguments": [
                {"name": t("topic"), "description": t("What to summarize"), "required": true},
                {"name": "style", "description": "How: `short` (default) or `detailed`", "required": false}
             ]},
            {"name": "quiz", "title": "A quiz", "description": "Asks the model to quiz the operator"},
        ]}))
    }

    pub(super) fn prompt_get(
        &self,
        request: GetPromptRequestParams,
    ) -> Result<GetPromptResult, McpError> {
        let t = |s: &str| self.inner.faults.taint(s);
        let args = request.arguments.unwrap_or_default();
        let arg = |key: &str| args.get(key).and_then(Value::as_str).map(str::to_owned);
        let messages = if request.name == t("summarize") || request.name == "summarize" {
            let topic = arg("topic")
                .or_else(|| arg(&t("topic")))
                .ok_or_else(|| McpError::invalid_params("missing argument `topic`", None))?;
            let style = arg("style").unwrap_or_else(|| "short".into());
            json!([
                {"role": "user", "content": {"type": "text", "text": t(&format!(
                    "Give a {style} summary of {topic}, using `lookup` on {} for facts.",
                    self.name()
                ))}},
                {"role": "assistant", "content": {"type": "text", "text": "I will look it up first."}},
            ])
        } else if request.name == "quiz" {
            json!([{"role": "user", "content": {"type": "text", "text": format!(
                "Quiz me on {}: ask one question at a time and check my answers with `lookup`.",
                self.inner.flavor.domain()
            )}}])
        } else {
            return Err(McpError::invalid_params(
                format!("no prompt {:?}", request.name),
                None,
            ));
        };
        typed(json!({ "description": t("A prompt of the demo server"), "messages": messages }))
    }
}
