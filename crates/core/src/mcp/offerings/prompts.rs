//! Prompts: `prompts/list` and `prompts/get`. Arguments are checked locally
//! against the listing before anything is sent (a required one missing, an
//! unknown one); the messages come back as the server's words.

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::{Map, Value, json};

use super::super::connection::raw;
use super::super::envelope::{ToolError, ToolErrorCode as Code};
use super::super::events::McpEvent;
use super::super::flows::{Label, Labels};
use super::super::hub::Hub;
use super::super::secrets;
use super::paged::{self, PageError, string};
use super::{Kind, Offered, malformed, request_failed};

/// The longest text of one prompt message the harness keeps (bytes).
pub const MAX_MESSAGE_TEXT: usize = 256 * 1024;
/// At most this many messages in one prompt.
pub const MAX_MESSAGES: usize = 256;

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PromptArgument {
    pub name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    pub required: bool,
}

/// One prompt as the server lists it (its text, untrusted).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Prompt {
    pub name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    pub arguments: Vec<PromptArgument>,
}

/// One message of a prompt: its role (`user` or `assistant`) and its content
/// block as the server sent it (text capped at [`MAX_MESSAGE_TEXT`]).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PromptMessage {
    pub role: String,
    pub content: Value,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PromptMessages {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    pub messages: Vec<PromptMessage>,
    /// Whether a text was cut at [`MAX_MESSAGE_TEXT`] or messages dropped.
    pub truncated: bool,
}

fn prompt(item: &Value) -> Option<Prompt> {
    let name = string(item, "name").filter(|n| !n.is_empty() && n.len() <= 256)?;
    let arguments = item
        .get("arguments")
        .and_then(Value::as_array)
        .map(|args| {
            args.iter()
                .filter_map(|a| {
                    Some(PromptArgument {
                        name: string(a, "name").filter(|n| !n.is_empty() && n.len() <= 256)?,
                        description: string(a, "description"),
                        required: a.get("required").and_then(Value::as_bool).unwrap_or(false),
                    })
                })
                .collect()
        })
        .unwrap_or_default();
    Some(Prompt {
        name,
        title: string(item, "title"),
        description: string(item, "description"),
        arguments,
    })
}

fn cut(text: &mut String, max: usize) -> bool {
    if text.len() <= max {
        return false;
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    text.truncate(end);
    true
}

impl Hub {
    /// `prompts/list` of a connected alias (malformed entries are left out).
    pub async fn list_prompts(&self, alias: &str) -> Offered<Vec<Prompt>> {
        let conn = match self.offering(alias, Kind::Prompts) {
            Ok(conn) => conn,
            Err(e) => return Offered::local(e),
        };
        let pages = self.limits().max_list_pages;
        match paged::list_all(&conn, "prompts/list", "prompts", pages).await {
            Ok(items) => Offered::ok(items.iter().filter_map(prompt).collect()),
            Err(PageError::Request(e)) => request_failed(alias, "prompts/list", e),
            Err(PageError::Malformed(problem)) => malformed(alias, "prompts/list", problem),
        }
    }

    /// `prompts/get` of `name` with `arguments`, checked against the listing
    /// first: an unknown prompt, a missing required argument or an unknown
    /// argument is refused and nothing is sent.
    pub async fn get_prompt(
        &self,
        alias: &str,
        name: &str,
        arguments: &BTreeMap<String, String>,
    ) -> Offered<PromptMessages> {
        let listed = self.list_prompts(alias).await;
        let prompts = match listed.result {
            Ok(prompts) => prompts,
            Err(e) => {
                return Offered {
                    result: Err(e),
                    server_output: listed.server_output,
                };
            }
        };
        let refuse = |message: String| {
            let mut e = ToolError::new(Code::McpInvalidArguments, message);
            e.alias = Some(alias.to_string());
            Offered::local(e)
        };
        let Some(prompt) = prompts.iter().find(|p| p.name == name) else {
            let names: Vec<String> = prompts
                .iter()
                .map(|p| crate::sanitize::inert_line(&p.name, 64))
                .collect();
            return refuse(format!(
                "`{alias}` lists no such prompt; it lists: {}",
                if names.is_empty() {
                    "(none)".into()
                } else {
                    names.join(", ")
                }
            ));
        };
        let missing: Vec<String> = prompt
            .arguments
            .iter()
            .filter(|a| a.required && !arguments.contains_key(&a.name))
            .map(|a| crate::sanitize::inert_line(&a.name, 64))
            .collect();
        if !missing.is_empty() {
            return refuse(format!(
                "the prompt needs {}: {}; nothing was sent",
                if missing.len() == 1 {
                    "an argument"
                } else {
                    "arguments"
                },
                missing.join(", ")
            ));
        }
        let unknown: Vec<String> = arguments
            .keys()
            .filter(|k| !prompt.arguments.iter().any(|a| &a.name == *k))
            .map(|k| crate::sanitize::inert_line(k, 64))
            .collect();
        if !unknown.is_empty() {
            return refuse(format!(
                "the prompt takes no argument {}; it takes: {}; nothing was sent",
                unknown.join(", "),
                prompt
                    .arguments
                    .iter()
                    .map(|a| crate::sanitize::inert_line(&a.name, 64))
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
        let conn = match self.offering(alias, Kind::Prompts) {
            Ok(conn) => conn,
            Err(e) => return Offered::local(e),
        };
        let args: Map<String, Value> = arguments
            .iter()
            .map(|(k, v)| (k.clone(), Value::String(v.clone())))
            .collect();
        let answer = match conn
            .request_long(
                "prompts/get",
                json!({ "name": prompt.name, "arguments": args }),
                conn.call_timeout(),
                None,
            )
            .await
        {
            Ok(answer) => answer,
            Err(e) => return request_failed(alias, "prompts/get", e),
        };
        let mut result = raw(answer.result);
        let Some(Value::Array(messages)) = result.get_mut("messages").map(Value::take) else {
            return malformed(
                alias,
                "prompts/get",
                "the result has no `messages` array".into(),
            );
        };
        // What the gate cut from long texts: the head stays, and says so.
        let mut truncated =
            messages.len() > MAX_MESSAGES || answer.spilled.is_some_and(|s| !s.is_empty());
        let mut kept = Vec::new();
        // Credentials in the messages are kept from the model (SPEC rule 20).
        let mut withheld = secrets::Redactions::default();
        for message in messages.into_iter().take(MAX_MESSAGES) {
            let role = match string(&message, "role").as_deref() {
                Some(role @ ("user" | "assistant")) => role.to_string(),
                _ => {
                    return malformed(
                        alias,
                        "prompts/get",
                        "a message's role is neither `user` nor `assistant`".into(),
                    );
                }
            };
            let mut content = message.get("content").cloned().unwrap_or(Value::Null);
            if let Some(Value::String(text)) = content.get_mut("text") {
                truncated |= cut(text, MAX_MESSAGE_TEXT);
            }
            secrets::redact_blocks(std::slice::from_mut(&mut content), &mut withheld);
            kept.push(PromptMessage { role, content });
        }
        // The operator brings a prompt into the Lead's conversation: it
        // taints that session as a call of the server's labels would (under
        // an id of its own: a prompt is no call).
        let mut labels = self
            .spec(alias)
            .map(|s| s.labels.server)
            .unwrap_or_default();
        if !withheld.is_empty() {
            labels = labels.with(Labels::of(&[Label::PrivateData]));
        }
        if !labels.is_empty() {
            let id = crate::protocol::CallId::mint("prompt");
            let tool = format!("prompt {}", crate::sanitize::inert_line(&prompt.name, 64));
            self.tainted(&crate::protocol::Requester::Lead, &id, &tool, labels);
        }
        if !withheld.is_empty() {
            self.inner.events.emit(McpEvent::Redacted {
                alias: Some(conn.alias().clone()),
                call: None,
                tool: format!("prompt {}", crate::sanitize::inert_line(&prompt.name, 64)),
                kinds: withheld.kinds(),
            });
        }
        Offered {
            result: Ok(PromptMessages {
                description: string(&result, "description"),
                messages: kept,
                truncated,
            }),
            server_output: withheld.for_operator(),
        }
    }
}
