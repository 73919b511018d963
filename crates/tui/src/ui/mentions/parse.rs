//! What a message asks for when it is sent: a server's prompt (`/alias:prompt
//! key=value …`, when the message starts with it), or text with resources
//! attached (`@alias:uri` anywhere). A refusal says what to change; the text
//! stays in the box.

use std::collections::BTreeMap;

use super::catalog::{Catalog, split_alias};
use crate::protocol::{
    AliasStatus, MAX_ATTACHED, PromptRow, PromptUse, ResourceRef, ServerView, UserMessage,
};
use crate::sanitize::inert_line;

/// What the operator's message asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Parsed {
    Message(UserMessage),
    Prompt(PromptUse),
}

/// Reads the operator's message. `@x:…` and `/x:…` mean server content only
/// when `x` is a configured alias; other text is sent as it is.
pub fn parse(text: &str, servers: &[ServerView], catalog: &Catalog) -> Result<Parsed, String> {
    if let Some(rest) = text.strip_prefix('/') {
        let first = rest.split_whitespace().next().unwrap_or_default();
        if let Some((alias, name)) = split_alias(first) {
            let arguments = &rest[first.len()..];
            return match servers.iter().find(|s| s.alias == alias) {
                Some(server) => prompt(server, name, arguments, catalog).map(Parsed::Prompt),
                None => Err(format!(
                    "no server `{}` is configured ({}): /alias:prompt uses a connected \
                     server's prompt; to send text that starts with /, begin it with a space",
                    inert_line(alias, 40),
                    aliases(servers)
                )),
            };
        }
    }
    let mut resources: Vec<ResourceRef> = Vec::new();
    for word in text.split_whitespace() {
        let Some(mention) = word.strip_prefix('@') else {
            continue;
        };
        // A mention ending a sentence: the stop is not part of the URI.
        let mention = mention.trim_end_matches(['.', ',', ';', '!', '?']);
        let Some((alias, uri)) = split_alias(mention) else {
            continue;
        };
        let Some(server) = servers.iter().find(|s| s.alias == alias) else {
            continue;
        };
        if uri.is_empty() {
            return Err(format!(
                "@{alias}: names no resource: write @{alias}:URI (Tab completes after @)"
            ));
        }
        connected(server, "attach its resources")?;
        let r = ResourceRef {
            alias: alias.to_string(),
            uri: uri.to_string(),
        };
        if !resources.contains(&r) {
            resources.push(r);
        }
    }
    if resources.len() > MAX_ATTACHED {
        return Err(format!(
            "{} resources are attached: at most {MAX_ATTACHED} go with one message",
            resources.len()
        ));
    }
    Ok(Parsed::Message(UserMessage {
        text: text.to_string(),
        resources,
    }))
}

fn prompt(
    server: &ServerView,
    name: &str,
    arguments: &str,
    catalog: &Catalog,
) -> Result<PromptUse, String> {
    let alias = &server.alias;
    if name.is_empty() {
        return Err(format!(
            "/{alias}: names no prompt: write /{alias}:NAME (Tab completes after /)"
        ));
    }
    connected(server, "use its prompts")?;
    let words = shlex::split(arguments).ok_or_else(|| {
        "a quote is not closed in the prompt's arguments (key=\"two words\")".to_string()
    })?;
    let mut given = BTreeMap::new();
    for word in words {
        let Some((key, value)) = word.split_once('=').filter(|(k, _)| !k.is_empty()) else {
            return Err(format!(
                "`{}` is not key=value: give each argument as key=value \
                 (quote a value with spaces: key=\"two words\")",
                inert_line(&word, 40)
            ));
        };
        if given.insert(key.to_string(), value.to_string()).is_some() {
            return Err(format!(
                "the argument `{}` is given twice",
                inert_line(key, 40)
            ));
        }
    }
    let listed = catalog
        .prompts()
        .get(alias)
        .and_then(|l| l.view.as_ref())
        .filter(|v| v.error.is_none());
    if let Some(view) = listed {
        let row = view
            .prompts
            .iter()
            .find(|p| p.name == name)
            .ok_or_else(|| {
                format!(
                    "`{alias}` has no prompt `{}`: Tab after / lists its prompts",
                    inert_line(name, 60)
                )
            })?;
        check(alias, row, &given)?;
    }
    Ok(PromptUse {
        alias: alias.clone(),
        name: name.to_string(),
        arguments: given,
    })
}

/// The arguments against the prompt's listing (the backend checks again).
fn check(alias: &str, row: &PromptRow, given: &BTreeMap<String, String>) -> Result<(), String> {
    let named = |names: Vec<&String>| {
        names
            .iter()
            .map(|n| inert_line(n, 40))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let name = inert_line(&row.name, 60);
    let missing: Vec<&String> = row
        .arguments
        .iter()
        .filter(|a| a.required && !given.contains_key(&a.name))
        .map(|a| &a.name)
        .collect();
    if !missing.is_empty() {
        return Err(format!(
            "/{alias}:{name} needs {} (as key=value; Tab completes the names)",
            named(missing)
        ));
    }
    if let Some(unknown) = given
        .keys()
        .find(|k| !row.arguments.iter().any(|a| a.name == **k))
    {
        let takes: Vec<&String> = row.arguments.iter().map(|a| &a.name).collect();
        return Err(format!(
            "/{alias}:{name} takes no argument `{}`; it takes: {}",
            inert_line(unknown, 40),
            if takes.is_empty() {
                "none".to_string()
            } else {
                named(takes)
            }
        ));
    }
    Ok(())
}

fn connected(server: &ServerView, to: &str) -> Result<(), String> {
    if server.state == AliasStatus::Ready {
        return Ok(());
    }
    Err(format!(
        "`{}` is not connected: connect it (Servers, c) to {to}",
        server.alias
    ))
}

fn aliases(servers: &[ServerView]) -> String {
    if servers.is_empty() {
        return "none are".to_string();
    }
    let names: Vec<&str> = servers.iter().map(|s| s.alias.as_str()).collect();
    format!("configured: {}", names.join(", "))
}
