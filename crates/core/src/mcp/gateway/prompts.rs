//! Prompts through the gateway: the prompts of the aliases a client sees,
//! named as tools are (`ALIAS__NAME`, or `NAME` with `names = "bare"`; the
//! name normalized to `[A-Za-z0-9_]`, at most `[serve] max_name_len`), and
//! `prompts/get` through the hub's `get_prompt` (arguments checked against
//! the listing before anything is sent). As for tools, a name that collides
//! or is too long keeps the alias's prompts out whole; a get is resolved only
//! by a lookup in a fresh listing of what is offered.

use std::collections::BTreeMap;

use serde_json::{Map, Value, json};

use super::super::call::{CallIdentity, CallOutcome, ToolOutput};
use super::super::envelope::{ToolError, ToolErrorCode as Code};
use super::super::events::Offering;
use super::super::names::{ServerAlias, normalize};
use super::super::observe::Decision;
use super::super::offerings::{Prompt, PromptMessages};
use super::Shared;
use super::offered::{aliases_offering, envelope};
use super::resources::outside_uri;
use super::settings::{ClientProfile, Naming};
use crate::sanitize::{for_model, for_model_line, hidden};

/// One offered prompt: whose, its name upstream, the entry the client gets.
struct Listed {
    alias: ServerAlias,
    remote: String,
    outside: Value,
}

/// What one client is offered now, by outside name.
#[derive(Default)]
pub(super) struct PromptView {
    prompts: BTreeMap<String, Listed>,
}

/// Why an alias's prompts are not offered (all or nothing).
fn not_offered(
    alias: &ServerAlias,
    prompts: &[Prompt],
    shared: &Shared,
    taken: &BTreeMap<String, Listed>,
) -> Result<Vec<(String, Listed)>, String> {
    let settings = &shared.settings;
    let mut named: Vec<(String, Listed)> = Vec::with_capacity(prompts.len());
    for prompt in prompts {
        // Argument names go back to the server as given: only ones a client
        // can send back unchanged.
        if prompt.arguments.iter().any(|a| {
            a.name
                .chars()
                .any(|c| c.is_control() || hidden::is_invisible(c))
        }) {
            continue;
        }
        let name = match settings.names {
            Naming::Prefixed => format!("{}__{}", alias.normalized(), normalize(&prompt.name)),
            Naming::Bare => normalize(&prompt.name),
        };
        if name.len() > settings.max_name_len {
            return Err(format!(
                "the outside prompt name `{name}` is {} characters, over [serve] max_name_len = {}",
                name.len(),
                settings.max_name_len
            ));
        }
        if taken.contains_key(&name) || named.iter().any(|(n, _)| *n == name) {
            return Err(format!(
                "the outside prompt name `{name}` is taken by another prompt"
            ));
        }
        let arguments: Vec<Value> = prompt
            .arguments
            .iter()
            .map(|a| {
                let mut arg = Map::new();
                arg.insert("name".into(), a.name.clone().into());
                if let Some(d) = &a.description {
                    arg.insert("description".into(), for_model(d).into());
                }
                arg.insert("required".into(), a.required.into());
                Value::Object(arg)
            })
            .collect();
        let mut entry = Map::new();
        entry.insert("name".into(), name.clone().into());
        if let Some(title) = &prompt.title {
            entry.insert("title".into(), for_model_line(title, 256).into());
        }
        if let Some(d) = &prompt.description {
            entry.insert("description".into(), for_model(d).into());
        }
        entry.insert("arguments".into(), arguments.into());
        named.push((
            name,
            Listed {
                alias: alias.clone(),
                remote: prompt.name.clone(),
                outside: Value::Object(entry),
            },
        ));
    }
    Ok(named)
}

impl PromptView {
    /// The prompts of every alias `client` sees that offers them, asked now.
    pub(super) async fn of(shared: &Shared, client: &ClientProfile) -> Self {
        let hub = &shared.hub;
        let aliases: Vec<ServerAlias> =
            aliases_offering(hub, &hub.snapshot(), client, Offering::Prompts)
                .into_iter()
                .map(|(a, _)| a)
                .collect();
        let listed =
            futures::future::join_all(aliases.iter().map(|a| hub.list_prompts(a.as_str()))).await;
        let mut view = PromptView::default();
        for (alias, listed) in aliases.iter().zip(listed) {
            let prompts = match listed.result {
                Ok(prompts) => prompts,
                Err(e) => {
                    tracing::info!(
                        alias = alias.as_str(),
                        "gateway: prompts not offered: {}",
                        e.message
                    );
                    continue;
                }
            };
            match not_offered(alias, &prompts, shared, &view.prompts) {
                Ok(named) => view.prompts.extend(named),
                Err(why) => tracing::warn!(
                    client = client.name,
                    alias = alias.as_str(),
                    "gateway: prompts not offered: {why}"
                ),
            }
        }
        view
    }

    /// The alias, upstream name and argument names of the prompt offered as `name`.
    pub(super) fn find(&self, name: &str) -> Option<(&ServerAlias, &str, Vec<&str>)> {
        let listed = self.prompts.get(name)?;
        let arguments = listed.outside["arguments"]
            .as_array()
            .map(|args| args.iter().filter_map(|a| a["name"].as_str()).collect())
            .unwrap_or_default();
        Some((&listed.alias, listed.remote.as_str(), arguments))
    }

    pub(super) fn prompts(&self) -> Vec<Value> {
        self.prompts.values().map(|l| l.outside.clone()).collect()
    }
}

/// One `prompts/get`: resolved in a fresh view, its arguments (strings, as
/// the protocol says) checked by the hub against the listing before anything
/// is sent. The alias, and the messages as the client gets them.
pub(super) async fn get(
    shared: &Shared,
    client: &ClientProfile,
    name: &str,
    arguments: Option<&Map<String, Value>>,
) -> Got {
    let view = PromptView::of(shared, client).await;
    let Some(listed) = view.prompts.get(name) else {
        let shown = crate::sanitize::inert_line(name, 100);
        let error = envelope(
            Code::McpUnknownTool,
            format!(
                "there is no prompt named `{shown}` offered to client `{}` now; list the prompts again",
                client.name
            ),
            None,
        );
        return Got::refused(None, error);
    };
    let alias = listed.alias.clone();
    let mut strings = BTreeMap::new();
    for (key, value) in arguments.into_iter().flatten() {
        let Value::String(value) = value else {
            let error = envelope(
                Code::McpInvalidArguments,
                format!(
                    "the argument `{}` is not a string (prompt arguments are strings); nothing was sent",
                    crate::sanitize::inert_line(key, 64)
                ),
                Some(&alias),
            );
            return Got::refused(Some(alias), error);
        };
        strings.insert(key.clone(), value.clone());
    }
    let got = shared
        .hub
        .get_prompt(alias.as_str(), &listed.remote, &strings)
        .await;
    let result = got.result.map_err(|mut e| {
        // The harness's message names the upstream prompt; the client knows
        // it by its outside name.
        e.message = e.message.replace(listed.remote.as_str(), name);
        e
    });
    Got {
        alias: Some(alias),
        result,
        server_output: got.server_output,
    }
}

/// What one get came to.
pub(super) struct Got {
    pub(super) alias: Option<ServerAlias>,
    pub(super) result: Result<PromptMessages, ToolError>,
    /// The server's own words, for the operator.
    pub(super) server_output: Option<String>,
}

impl Got {
    pub(super) fn refused(alias: Option<ServerAlias>, error: ToolError) -> Self {
        Self {
            alias,
            result: Err(error),
            server_output: None,
        }
    }
}

/// The messages as the client gets them: each text without invisible code
/// points (what the model would read); a content block the SDK would not
/// take is passed on as its JSON text.
pub(super) fn result(got: &PromptMessages, naming: Naming, alias: &ServerAlias) -> Value {
    let messages: Vec<Value> = got
        .messages
        .iter()
        .map(|m| {
            let mut content = hidden::strip_value(&m.content);
            // An embedded resource under its outside URI, as listed.
            if let Some(Value::String(uri)) = content.pointer_mut("/resource/uri") {
                *uri = outside_uri(naming, alias, uri);
            }
            let readable =
                serde_json::from_value::<rmcp::model::ContentBlock>(content.clone()).is_ok();
            let block = if readable {
                content
            } else {
                json!({ "type": "text", "text": content.to_string() })
            };
            json!({ "role": m.role, "content": block })
        })
        .collect();
    let mut result = Map::new();
    if let Some(d) = &got.description {
        result.insert("description".into(), for_model(d).into());
    }
    result.insert("messages".into(), messages.into());
    Value::Object(result)
}

/// The get as a call's outcome, for the watcher (the conversation row and
/// the audit record).
pub(super) fn outcome(call: &CallIdentity, got: Got, elapsed: std::time::Duration) -> CallOutcome {
    let result = got.result;
    let decision = if result.is_ok() {
        Decision::Allow
    } else {
        Decision::NotRun
    };
    CallOutcome {
        id: call.id.clone(),
        result: result.map(|m| ToolOutput {
            content: m.messages.into_iter().map(|m| m.content).collect(),
            structured_content: None,
            truncated: m.truncated,
            redacted: Vec::new(),
        }),
        decision,
        server_output: got.server_output,
        elapsed,
        dropped_nulls: Vec::new(),
    }
}
