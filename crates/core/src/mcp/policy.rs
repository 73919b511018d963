//! Local policy (SPEC rule 5): the operator's effect for every remote tool, and the
//! exact-equality rule between the policy and what a server publishes.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use serde::{Deserialize, Serialize};

use super::names::ServerAlias;

/// What the harness does when the model calls a tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Effect {
    /// Run without asking.
    Allow,
    /// Ask the operator first.
    Confirm,
    /// Never run; not offered to the model.
    Deny,
}

impl fmt::Display for Effect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Effect::Allow => "allow",
            Effect::Confirm => "confirm",
            Effect::Deny => "deny",
        })
    }
}

/// The local policy of one alias: remote tool name (as published) → effect.
///
/// Trusted: written by the operator. A server's claims (`readOnlyHint`, "safe")
/// never change it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ToolPolicy {
    effects: BTreeMap<String, Effect>,
}

/// The difference between a policy and a published tool set.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PolicyMismatch {
    /// Published by the server, but the policy says nothing about them.
    pub missing: Vec<String>,
    /// In the policy, but the server does not publish them.
    pub extra: Vec<String>,
}

impl ToolPolicy {
    pub fn new(effects: BTreeMap<String, Effect>) -> Self {
        Self { effects }
    }

    pub fn effect(&self, remote_name: &str) -> Option<Effect> {
        self.effects.get(remote_name).copied()
    }

    pub fn is_empty(&self) -> bool {
        self.effects.is_empty()
    }

    pub fn entries(&self) -> impl Iterator<Item = (&str, Effect)> {
        self.effects.iter().map(|(k, v)| (k.as_str(), *v))
    }

    /// Exact equality, not intersection: one tool too many or too few on either
    /// side rejects the whole connection.
    pub fn check_exact<'a>(
        &self,
        published: impl IntoIterator<Item = &'a str>,
    ) -> Result<(), PolicyMismatch> {
        let published: BTreeSet<&str> = published.into_iter().collect();
        let configured: BTreeSet<&str> = self.effects.keys().map(String::as_str).collect();
        let missing: Vec<String> = published
            .difference(&configured)
            .map(|s| s.to_string())
            .collect();
        let extra: Vec<String> = configured
            .difference(&published)
            .map(|s| s.to_string())
            .collect();
        if missing.is_empty() && extra.is_empty() {
            Ok(())
        } else {
            Err(PolicyMismatch { missing, extra })
        }
    }

    /// The `[servers.ALIAS.tools]` block for exactly `published`, every entry
    /// `confirm`: the operator's one explicit step to satisfy exact equality.
    pub fn block_for<'a>(
        alias: &ServerAlias,
        published: impl IntoIterator<Item = &'a str>,
    ) -> String {
        Self::block_with(alias, published, |_| Effect::Confirm)
    }

    /// The same block with the effect `effect_of` gives each tool.
    pub fn block_with<'a>(
        alias: &ServerAlias,
        published: impl IntoIterator<Item = &'a str>,
        effect_of: impl Fn(&str) -> Effect,
    ) -> String {
        let mut block = format!("[servers.{}.tools]\n", toml_key(alias.as_str()));
        // In listing order, each name once.
        let mut seen = std::collections::HashSet::new();
        for name in published.into_iter().filter(|n| seen.insert(*n)) {
            block.push_str(&format!("{} = \"{}\"\n", toml_key(name), effect_of(name)));
        }
        block
    }
}

/// Flow labels a server's annotations suggest, as TOML *comments* (a claim
/// never becomes a label by itself): an empty string when nothing suggests any.
pub fn label_suggestions(alias: &ServerAlias, published: &[super::PublishedTool]) -> String {
    let mut lines = Vec::new();
    for tool in published {
        if let Some((labels, why)) = super::flows::suggested_labels(tool.annotations.as_ref()) {
            let labels: Vec<String> = labels.iter().map(|l| format!("\"{l}\"")).collect();
            lines.push(format!(
                "# {} = [{}]   # suggested: {why}",
                toml_key(&tool.name),
                labels.join(", ")
            ));
        }
    }
    if lines.is_empty() {
        return String::new();
    }
    format!(
        "# Flow labels its annotations suggest (claims, not facts: uncomment what you\n\
         # agree with; see [flows] in config.example.toml):\n\
         # [servers.{}.tool_labels]\n{}\n",
        toml_key(alias.as_str()),
        lines.join("\n")
    )
}

/// A TOML key for a server-controlled name: bare when it can be, else a basic
/// string in which quotes, backslashes, every control character (C0, DEL, C1)
/// and bidi override are `\uXXXX` escapes. The block is printed to a terminal,
/// so nothing in it may act on the terminal; TOML reads the escapes back into
/// the exact published name.
fn toml_key(name: &str) -> String {
    let bare = !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if bare {
        return name.to_string();
    }
    let mut key = String::with_capacity(name.len() + 2);
    key.push('"');
    for c in name.chars() {
        match c {
            '"' => key.push_str("\\\""),
            '\\' => key.push_str("\\\\"),
            c if c.is_control() || crate::sanitize::is_dangerous(c) => {
                key.push_str(&format!("\\u{:04X}", c as u32));
            }
            c => key.push(c),
        }
    }
    key.push('"');
    key
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy(entries: &[(&str, Effect)]) -> ToolPolicy {
        ToolPolicy::new(entries.iter().map(|(k, v)| (k.to_string(), *v)).collect())
    }

    #[test]
    fn annotations_suggest_labels_in_comments_only() {
        let tool =
            |name: &str, annotations: Option<serde_json::Value>| super::super::PublishedTool {
                name: name.into(),
                title: None,
                description: None,
                input_schema: std::sync::Arc::new(serde_json::json!({"type": "object"})),
                output_schema: None,
                annotations,
                task_support: Default::default(),
            };
        let alias = ServerAlias::new("web");
        let published = [
            tool(
                "fetch",
                Some(serde_json::json!({"openWorldHint": true, "readOnlyHint": true})),
            ),
            tool("post", Some(serde_json::json!({"openWorldHint": true}))),
            tool("local", Some(serde_json::json!({"readOnlyHint": true}))),
        ];
        let text = label_suggestions(&alias, &published);
        assert!(text.contains("# [servers.web.tool_labels]"), "{text}");
        assert!(text.contains("# fetch = [\"untrusted_content\"]"), "{text}");
        assert!(
            text.contains("# post = [\"untrusted_content\", \"external_sink\"]"),
            "{text}"
        );
        assert!(!text.contains("local"), "{text}");
        // Every line is a comment: pasted as it is, it sets no label.
        assert!(text.lines().all(|l| l.starts_with('#')), "{text}");
        let parsed: toml::Table = toml::from_str(&text).unwrap();
        assert!(parsed.is_empty());
        assert_eq!(label_suggestions(&alias, &published[2..]), "");
    }

    #[test]
    fn exact_equality_accepts_the_same_set() {
        let p = policy(&[("lookup", Effect::Allow), ("reset", Effect::Deny)]);
        assert_eq!(p.check_exact(["reset", "lookup"]), Ok(()));
    }

    #[test]
    fn exact_equality_reports_missing_and_extra() {
        let p = policy(&[("lookup", Effect::Allow), ("gone", Effect::Confirm)]);
        let err = p.check_exact(["lookup", "new_tool"]).unwrap_err();
        assert_eq!(err.missing, vec!["new_tool".to_string()]);
        assert_eq!(err.extra, vec!["gone".to_string()]);
    }

    #[test]
    fn empty_policy_misses_everything() {
        let err = ToolPolicy::default().check_exact(["a"]).unwrap_err();
        assert_eq!(err.missing, vec!["a".to_string()]);
    }

    #[test]
    fn block_is_valid_toml_with_every_tool_confirm() {
        let alias = ServerAlias::new("my-server");
        let block = ToolPolicy::block_for(&alias, ["lookup", "files/read.all", "evil\"]\n[x"]);
        let parsed: toml::Table = toml::from_str(&block).expect("block parses");
        let tools = parsed["servers"]["my-server"]["tools"]
            .as_table()
            .expect("tools table");
        assert_eq!(tools.len(), 3);
        assert!(tools.values().all(|v| v.as_str() == Some("confirm")));
        assert!(tools.contains_key("evil\"]\n[x"));
    }

    #[test]
    fn block_never_prints_terminal_controls_and_reads_back_exactly() {
        let names = ["a\u{1b}[2J", "b\u{9b}31m", "c\u{202e}d", "q\"\\x", "plain"];
        let block = ToolPolicy::block_for(&ServerAlias::new("s.x"), names);
        assert!(
            !block
                .chars()
                .any(|c| (c.is_control() && c != '\n') || crate::sanitize::is_dangerous(c)),
            "{block:?}"
        );
        let parsed: toml::Table = toml::from_str(&block).expect("block parses");
        let tools = parsed["servers"]["s.x"]["tools"].as_table().unwrap();
        for name in names {
            assert!(tools.contains_key(name), "{name:?} in {block}");
        }
    }
}
