//! `completion/complete`: suggestions for a prompt's argument or a resource
//! template's variable, asked of the server that lists them. Only of a
//! connection that declared `completions` and offers the prompts (or
//! resources, under a read policy that is not `deny`) the reference names;
//! the values are the server's text, kept only when they can be sent back
//! unchanged and at most [`MAX_VALUES`] (the spec's cap).

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::{Map, Value, json};

use super::super::connection::raw;
use super::super::envelope::{ToolError, ToolErrorCode as Code};
use super::super::hub::Hub;
use super::super::policy::Effect;
use super::{Kind, Offered, malformed, request_failed};
use crate::sanitize::hidden;

/// At most this many values in one completion (the spec's cap).
pub const MAX_VALUES: usize = 100;
/// A longer value is not kept (it would be no completion of an argument).
pub const MAX_VALUE_BYTES: usize = 1024;

/// What a completion is for, by its name (or template) upstream.
#[derive(Debug, Clone, Copy)]
pub enum CompletionRef<'a> {
    Prompt(&'a str),
    ResourceTemplate(&'a str),
}

/// The server's suggestions, capped.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Completion {
    pub values: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub total: Option<u64>,
    /// More values than those given: the server said so, or some were cut.
    pub has_more: bool,
}

/// Only a value a client can send back as it is: no control or invisible
/// character, not empty, not over [`MAX_VALUE_BYTES`].
fn kept(value: &str) -> bool {
    !value.is_empty()
        && value.len() <= MAX_VALUE_BYTES
        && !value
            .chars()
            .any(|c| c.is_control() || hidden::is_invisible(c))
}

/// The `completion` of an answer, or what is wrong with it.
pub(super) fn completion(answer: &Value) -> Result<Completion, String> {
    let completion = answer
        .get("completion")
        .ok_or("the result has no `completion`")?;
    let values = completion
        .get("values")
        .and_then(Value::as_array)
        .ok_or("the completion has no `values` array")?;
    let mut kept_values: Vec<String> = values
        .iter()
        .filter_map(Value::as_str)
        .filter(|v| kept(v))
        .map(str::to_string)
        .collect();
    let cut = kept_values.len() > MAX_VALUES;
    kept_values.truncate(MAX_VALUES);
    Ok(Completion {
        values: kept_values,
        total: completion.get("total").and_then(Value::as_u64),
        has_more: cut
            || completion
                .get("hasMore")
                .and_then(Value::as_bool)
                .unwrap_or(false),
    })
}

impl Hub {
    /// `completion/complete` of `argument` (name, value so far) for
    /// `reference` on `alias`, with the values already given (`context`).
    pub async fn complete(
        &self,
        alias: &str,
        reference: CompletionRef<'_>,
        argument: (&str, &str),
        context: &BTreeMap<String, String>,
    ) -> Offered<Completion> {
        let kind = match reference {
            CompletionRef::Prompt(_) => Kind::Prompts,
            CompletionRef::ResourceTemplate(_) => Kind::Resources,
        };
        let conn = match self.offering(alias, kind) {
            Ok(conn) => conn,
            Err(e) => return Offered::local(e),
        };
        let refuse = |code, message: String| {
            let mut e = ToolError::new(code, message);
            e.alias = Some(alias.to_string());
            Offered::local(e)
        };
        if !conn.has_completions() {
            return refuse(
                Code::McpUnknownTool,
                format!("`{alias}` offers no completions (it did not declare them)"),
            );
        }
        if kind == Kind::Resources && self.resource_policy(alias) == Effect::Deny {
            return refuse(
                Code::McpPermissionDenied,
                format!(
                    "the resources of `{alias}` are denied by local policy \
                     ([servers.{alias}.resources] read = \"deny\")"
                ),
            );
        }
        let reference = match reference {
            CompletionRef::Prompt(name) => json!({ "type": "ref/prompt", "name": name }),
            CompletionRef::ResourceTemplate(uri) => json!({ "type": "ref/resource", "uri": uri }),
        };
        let mut params = json!({
            "ref": reference,
            "argument": { "name": argument.0, "value": argument.1 },
        });
        if !context.is_empty() {
            let arguments: Map<String, Value> = context
                .iter()
                .map(|(k, v)| (k.clone(), Value::String(v.clone())))
                .collect();
            params["context"] = json!({ "arguments": arguments });
        }
        match conn
            .request("completion/complete", params, conn.call_timeout())
            .await
        {
            Ok(answer) => match completion(&raw(answer)) {
                Ok(completion) => Offered::ok(completion),
                Err(problem) => malformed(alias, "completion/complete", problem),
            },
            Err(e) => request_failed(alias, "completion/complete", e),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_capped_at_the_spec_maximum_and_the_rest_is_said() {
        let values: Vec<String> = (0..150).map(|i| format!("v{i}")).collect();
        let got = completion(&json!({"completion": {"values": values, "total": 150}})).unwrap();
        assert_eq!(got.values.len(), MAX_VALUES);
        assert_eq!(got.values[0], "v0");
        assert!(got.has_more);
        assert_eq!(got.total, Some(150));
    }

    #[test]
    fn values_that_cannot_be_sent_back_as_they_are_are_left_out() {
        let got = completion(&json!({"completion": {
            "values": ["ok", "in\u{200B}visible", "new\nline", "", 7, "x".repeat(2000)],
            "hasMore": false
        }}))
        .unwrap();
        assert_eq!(got.values, vec!["ok".to_string()]);
        assert!(!got.has_more);
    }

    #[test]
    fn an_answer_without_values_is_malformed() {
        assert!(completion(&json!({"completion": {}})).is_err());
        assert!(completion(&json!({})).is_err());
    }
}
