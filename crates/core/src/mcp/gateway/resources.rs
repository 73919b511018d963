//! Resources through the gateway: the listings of the aliases a client sees,
//! under outside URIs one alias cannot shadow another's with, and reads that
//! go through the hub's `read_resource` (its read policy, `confirm` asking the
//! approver as the client's call, the result cut and saved as a tool's is).
//!
//! Outside URIs: with `names = "prefixed"` (the default) a resource `U` of
//! alias `A` is `mcp-harness://A/U` (`A` as in tool names, `U` verbatim, so a
//! template stays a template the client fills in); with `names = "bare"` it is
//! `U` itself, and an alias listing a URI (or a template) another alias listed
//! first is not offered at all. A read is resolved only by a lookup in what
//! the gateway offers now — a fresh listing: the URI listed, or filling one of
//! the listed templates — never by passing on the client's string.

use std::collections::HashSet;

use serde_json::{Map, Value, json};

use super::super::call::{CallIdentity, CallOutcome, ToolOutput};
use super::super::envelope::{ToolError, ToolErrorCode as Code};
use super::super::events::Offering;
use super::super::names::ServerAlias;
use super::super::observe::Decision;
use super::super::offerings::ResourceList;
use super::super::policy::Effect;
use super::Shared;
use super::offered::{aliases_offering, envelope};
use super::settings::{ClientProfile, Naming};
use crate::sanitize::{for_model, for_model_line, hidden};

/// The scheme of outside resource URIs (`names = "prefixed"`).
pub const URI_SCHEME: &str = "mcp-harness";

/// One listed resource or template: whose, the upstream URI (or template),
/// and the entry as the client gets it.
struct Listed {
    alias: ServerAlias,
    upstream: String,
    outside: Value,
}

/// What one client is offered now, from fresh listings.
#[derive(Default)]
pub(super) struct ResourceView {
    resources: Vec<Listed>,
    templates: Vec<Listed>,
}

/// The outside URI of `upstream` of `alias`.
pub(super) fn outside_uri(naming: Naming, alias: &ServerAlias, upstream: &str) -> String {
    match naming {
        Naming::Prefixed => format!("{}{upstream}", prefix(alias)),
        Naming::Bare => upstream.to_string(),
    }
}

/// What every prefixed outside URI of `alias` starts with.
fn prefix(alias: &ServerAlias) -> String {
    format!("{URI_SCHEME}://{}/", alias.normalized())
}

/// Only a URI a client can send back unchanged is offered: no white space,
/// control or invisible character (an SDK or a URL parser would change it,
/// and the model would never see it as listed).
fn offerable(uri: &str) -> bool {
    !uri.chars()
        .any(|c| c.is_whitespace() || c.is_control() || hidden::is_invisible(c))
}

impl ResourceView {
    /// The listings of `aliases` (each asked now), in alias order.
    pub(super) async fn of(shared: &Shared, aliases: &[ServerAlias]) -> Self {
        let hub = &shared.hub;
        let naming = shared.settings.names;
        let listed =
            futures::future::join_all(aliases.iter().map(|a| hub.list_resources(a.as_str()))).await;
        let mut view = ResourceView::default();
        let mut taken: HashSet<String> = HashSet::new();
        for (alias, listed) in aliases.iter().zip(listed) {
            let list = match listed.result {
                Ok(list) => list,
                Err(e) => {
                    tracing::info!(
                        alias = alias.as_str(),
                        "gateway: resources not offered: {}",
                        e.message
                    );
                    continue;
                }
            };
            let (resources, templates) = entries(alias, &list, naming);
            if naming == Naming::Bare {
                let mut keys = resources
                    .iter()
                    .chain(&templates)
                    .map(|l| outside_key(&l.outside));
                if let Some(key) = keys.find(|key| taken.contains(key)) {
                    tracing::warn!(
                        alias = alias.as_str(),
                        "gateway: resources not offered: `{}` is listed by another alias too \
                         ([serve] names = \"bare\")",
                        crate::sanitize::inert_line(&key, 200)
                    );
                    continue;
                }
                taken.extend(
                    resources
                        .iter()
                        .chain(&templates)
                        .map(|l| outside_key(&l.outside)),
                );
            }
            view.resources.extend(resources);
            view.templates.extend(templates);
        }
        view
    }

    pub(super) fn resources(&self) -> Vec<Value> {
        self.resources.iter().map(|l| l.outside.clone()).collect()
    }

    pub(super) fn templates(&self) -> Vec<Value> {
        self.templates.iter().map(|l| l.outside.clone()).collect()
    }

    /// The alias and upstream template of the template listed as `outside`
    /// (the very string, not one it fills in).
    pub(super) fn template(&self, outside: &str) -> Option<(&ServerAlias, &str)> {
        self.templates
            .iter()
            .find(|l| outside_key(&l.outside) == outside)
            .map(|l| (&l.alias, l.upstream.as_str()))
    }

    /// The alias and upstream URI an outside URI stands for: a listed
    /// resource, or a listed template it fills in.
    fn resolve(&self, naming: Naming, uri: &str) -> Option<(ServerAlias, String)> {
        if let Some(l) = self
            .resources
            .iter()
            .find(|l| outside_key(&l.outside) == uri)
        {
            return Some((l.alias.clone(), l.upstream.clone()));
        }
        self.templates.iter().find_map(|l| {
            let upstream = match naming {
                Naming::Prefixed => uri.strip_prefix(&prefix(&l.alias))?,
                Naming::Bare => uri,
            };
            fills(&l.upstream, upstream).then(|| (l.alias.clone(), upstream.to_string()))
        })
    }
}

fn outside_key(entry: &Value) -> String {
    entry
        .get("uri")
        .or_else(|| entry.get("uriTemplate"))
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string()
}

/// An alias's listing as the client gets it: what can be sent back, its
/// server text as the model would read it (invisible code points and
/// controls removed), under outside URIs.
fn entries(alias: &ServerAlias, list: &ResourceList, naming: Naming) -> (Vec<Listed>, Vec<Listed>) {
    let text = |entry: &mut Map<String, Value>, key: &str, value: Option<&String>, line: bool| {
        if let Some(value) = value {
            let clean = if line {
                for_model_line(value, 256)
            } else {
                for_model(value).into_owned()
            };
            entry.insert(key.into(), Value::String(clean));
        }
    };
    let resources = list
        .resources
        .iter()
        .filter(|r| offerable(&r.uri))
        .map(|r| {
            let mut entry = Map::new();
            entry.insert("uri".into(), outside_uri(naming, alias, &r.uri).into());
            entry.insert("name".into(), for_model_line(&r.name, 256).into());
            text(&mut entry, "title", r.title.as_ref(), true);
            text(&mut entry, "description", r.description.as_ref(), false);
            text(&mut entry, "mimeType", r.mime_type.as_ref(), true);
            if let Some(size) = r.size {
                entry.insert("size".into(), size.into());
            }
            Listed {
                alias: alias.clone(),
                upstream: r.uri.clone(),
                outside: Value::Object(entry),
            }
        })
        .collect();
    let templates = list
        .templates
        .iter()
        .filter(|t| offerable(&t.uri_template))
        .map(|t| {
            let mut entry = Map::new();
            entry.insert(
                "uriTemplate".into(),
                outside_uri(naming, alias, &t.uri_template).into(),
            );
            entry.insert("name".into(), for_model_line(&t.name, 256).into());
            text(&mut entry, "title", t.title.as_ref(), true);
            text(&mut entry, "description", t.description.as_ref(), false);
            text(&mut entry, "mimeType", t.mime_type.as_ref(), true);
            Listed {
                alias: alias.clone(),
                upstream: t.uri_template.clone(),
                outside: Value::Object(entry),
            }
        })
        .collect();
    (resources, templates)
}

/// Where an outside URI leads, or the envelope saying why nowhere.
pub(super) async fn resolve(
    shared: &Shared,
    client: &ClientProfile,
    uri: &str,
) -> Result<(ServerAlias, String), ToolError> {
    let hub = &shared.hub;
    let naming = shared.settings.names;
    let shown = crate::sanitize::inert_line(uri, 200);
    let unknown = |alias: Option<&ServerAlias>| {
        envelope(
            Code::McpUnknownTool,
            format!(
                "`{shown}` is not a resource offered to client `{}` now; list the resources \
                 (and templates) again",
                client.name
            ),
            alias,
        )
    };
    let offering = aliases_offering(hub, &hub.snapshot(), client, Offering::Resources);
    let aliases: Vec<ServerAlias> = match naming {
        Naming::Bare => offering.into_iter().map(|(a, _)| a).collect(),
        Naming::Prefixed => {
            let rest = uri
                .strip_prefix(URI_SCHEME)
                .and_then(|r| r.strip_prefix("://"))
                .ok_or_else(|| unknown(None))?;
            let (name, _) = rest.split_once('/').ok_or_else(|| unknown(None))?;
            // An alias this client sees, by the name its URIs carry.
            let seen: Vec<ServerAlias> = hub
                .aliases()
                .into_iter()
                .map(|(a, _)| a)
                .filter(|a| client.sees(a) && a.normalized() == name)
                .collect();
            let [alias] = seen.as_slice() else {
                return Err(unknown(None));
            };
            if hub.resource_policy(alias.as_str()) == Effect::Deny {
                return Err(envelope(
                    Code::McpPermissionDenied,
                    format!(
                        "reading the resources of `{alias}` is denied by local policy \
                         ([servers.{alias}.resources] read = \"deny\"); nothing was sent"
                    ),
                    Some(alias),
                ));
            }
            if !offering.iter().any(|(a, _)| a == alias) {
                return Err(envelope(
                    Code::McpNotConnected,
                    format!(
                        "`{alias}` is not connected (or offers no resources) now; list the \
                         resources again"
                    ),
                    Some(alias),
                ));
            }
            vec![alias.clone()]
        }
    };
    let view = ResourceView::of(shared, &aliases).await;
    view.resolve(naming, uri)
        .ok_or_else(|| unknown(aliases.first().filter(|_| aliases.len() == 1)))
}

/// A read's outcome as `resources/read` contents: each content under its
/// outside URI, its text without invisible code points (what the model would
/// get). Blocks that are not contents (the harness's notice of a cut) are
/// left out: the cut text says it ends early by its length only.
pub(super) fn contents(
    output: &ToolOutput,
    naming: Naming,
    alias: &ServerAlias,
    upstream: &str,
    outside: &str,
) -> Vec<Value> {
    output
        .content
        .iter()
        .filter(|b| b.get("type").and_then(Value::as_str) == Some("resource"))
        .filter_map(|b| b.get("resource").and_then(Value::as_object).cloned())
        .map(|mut content| {
            let uri = match content.get("uri").and_then(Value::as_str) {
                Some(u) if u == upstream => outside.to_string(),
                Some(u) => outside_uri(naming, alias, u),
                None => outside.to_string(),
            };
            content.insert("uri".into(), uri.into());
            if let Some(Value::String(text)) = content.get_mut("text")
                && let std::borrow::Cow::Owned(clean) = hidden::strip(text)
            {
                *text = clean;
            }
            Value::Object(content)
        })
        .collect()
}

/// A read that was refused before the hub saw it.
pub(super) fn refused(call: &CallIdentity, error: ToolError) -> CallOutcome {
    CallOutcome {
        id: call.id.clone(),
        result: Err(error),
        decision: Decision::NotRun,
        server_output: None,
        elapsed: std::time::Duration::ZERO,
        dropped_nulls: Vec::new(),
    }
}

/// Whether `uri` fills in the RFC 6570 `template`: its literal parts in
/// order, each `{…}` standing for any run of characters — without `/`, `?`
/// or `#` for a simple `{var}` (whose value is percent-encoded), anything for
/// the other operators (`{+var}`, `{/var}`, `{?q}`, …). Worked as a set of
/// positions, so no template costs more than its parts times the URI.
pub fn fills(template: &str, uri: &str) -> bool {
    let bytes = uri.as_bytes();
    let mut at = vec![false; bytes.len() + 1];
    at[0] = true;
    let mut rest = template;
    while !rest.is_empty() {
        let (literal, expression, after) = match rest.find('{') {
            Some(0) => match rest.find('}') {
                Some(end) => ("", Some(&rest[1..end]), &rest[end + 1..]),
                None => return false,
            },
            Some(open) => (&rest[..open], None, &rest[open..]),
            None => (rest, None, ""),
        };
        let mut next = vec![false; bytes.len() + 1];
        if let Some(expression) = expression {
            let simple = !expression.starts_with(['+', '#', '.', '/', ';', '?', '&']);
            let mut reach = false;
            for i in 0..=bytes.len() {
                reach |= at[i];
                next[i] = reach;
                if i < bytes.len() && simple && matches!(bytes[i], b'/' | b'?' | b'#') {
                    reach = false;
                }
            }
        } else {
            for i in 0..=bytes.len() {
                if at[i] && bytes[i..].starts_with(literal.as_bytes()) {
                    next[i + literal.len()] = true;
                }
            }
        }
        at = next;
        rest = after;
    }
    at[bytes.len()]
}

/// The request's `uri` and arguments as a call's, for the watcher.
pub(super) fn arguments(uri: &str) -> Value {
    json!({ "uri": uri })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_uri_fills_a_template_only_where_its_expressions_may_stand() {
        let t = "demo://demo-alpha/entry/{key}";
        assert!(fills(t, "demo://demo-alpha/entry/apple"));
        assert!(fills(t, "demo://demo-alpha/entry/"));
        assert!(!fills(t, "demo://demo-alpha/entry/a/b"), "simple: no `/`");
        assert!(!fills(t, "demo://demo-beta/entry/apple"));
        assert!(!fills(t, "demo://demo-alpha/entries/apple"));
        assert!(fills("file:///{+path}", "file:///a/b/c.txt"));
        assert!(fills("x://{a}/{b}.json", "x://one/two.json"));
        assert!(!fills("x://{a}/{b}.json", "x://one/two.txt"));
        assert!(fills("plain://no-vars", "plain://no-vars"));
        assert!(!fills("plain://no-vars", "plain://no-vars/x"));
        assert!(!fills("broken://{a", "broken://x"));
    }

    #[test]
    fn prefixed_uris_carry_the_alias_and_the_upstream_uri_verbatim() {
        let alias = ServerAlias::new("demo-alpha");
        assert_eq!(
            outside_uri(Naming::Prefixed, &alias, "demo://x/{key}"),
            "mcp-harness://demo_alpha/demo://x/{key}"
        );
        assert_eq!(outside_uri(Naming::Bare, &alias, "demo://x"), "demo://x");
        assert!(!offerable("demo://a b"));
        assert!(!offerable("demo://a\u{200b}b"));
        assert!(offerable("demo://a/b?c=d#e"));
    }
}
