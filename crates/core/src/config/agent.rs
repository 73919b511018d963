//! `[model]`, `[builtin_tools]` and `[[teammates]]`: who the Lead talks to and
//! what its own tools may do. Plain data; the agent builds providers from it.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::Deserialize;

use super::servers::KeyError;
use crate::mcp::Effect;

/// Which provider `[model] provider` names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ProviderKind {
    Anthropic,
    Openai,
    Scripted,
}

/// `[model]` as written; `provider` is required (checked when the config is
/// loaded), other missing keys take provider defaults (see `agent::model::select`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelSection {
    pub provider: Option<ProviderKind>,
    pub model: Option<String>,
    pub base_url: Option<String>,
    /// The *name* of the environment variable that holds the key.
    pub api_key_env: Option<String>,
    pub max_tokens: Option<u32>,
    /// Scripted only: the scenario file (default: the embedded demo scenario).
    /// A relative path is resolved against the config file's directory when
    /// the config is loaded from a file.
    pub scenario: Option<PathBuf>,
    /// Rough size of the model's context window in tokens; the conversation is
    /// compacted before a request would exceed it.
    pub context_tokens: Option<u64>,
}

/// A named, long-lived teammate with its own context.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TeammateConfig {
    pub name: String,
    pub system_prompt: String,
}

/// Everything the agent needs from the config.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AgentConfig {
    /// `None` when the file has no `[model]` section (then the environment decides).
    pub model: Option<ModelSection>,
    /// Effects for built-in tools (absent ones take their defaults).
    pub builtin_tools: BTreeMap<String, Effect>,
    pub teammates: Vec<TeammateConfig>,
}

/// Built-in tool names the config may set effects for.
pub const BUILTIN_TOOLS: &[&str] = &[
    "read_file",
    "list_dir",
    "search_text",
    "connect_mcp",
    "disconnect_mcp",
    "list_mcp_servers",
    "spawn_subagent",
    "ask_teammate",
    "read_result",
    "search_tools",
];

pub(super) fn agent_config(
    model: Option<ModelSection>,
    builtin_tools: BTreeMap<String, Effect>,
    teammates: Vec<TeammateConfig>,
) -> Result<AgentConfig, KeyError> {
    for name in builtin_tools.keys() {
        if !BUILTIN_TOOLS.contains(&name.as_str()) {
            return Err((
                format!("builtin_tools.{name}"),
                format!(
                    "not a built-in tool; built-in tools are: {}",
                    BUILTIN_TOOLS.join(", ")
                ),
            ));
        }
    }
    if let Some(m) = &model {
        // Guessing from the environment here could send `model = "gpt-4o"` to
        // Anthropic because ANTHROPIC_API_KEY happens to be set.
        if m.provider.is_none() {
            return Err((
                "model.provider".into(),
                "is required in [model]: anthropic, openai or scripted (without a [model] \
                 section the API keys in the environment decide)"
                    .into(),
            ));
        }
        if m.max_tokens == Some(0) {
            return Err(("model.max_tokens".into(), "must be at least 1".into()));
        }
        if m.context_tokens.is_some_and(|t| t < 1000) {
            return Err((
                "model.context_tokens".into(),
                "must be at least 1000".into(),
            ));
        }
        if m.scenario.is_some() && m.provider != Some(ProviderKind::Scripted) {
            return Err((
                "model.scenario".into(),
                "only applies to provider = \"scripted\"".into(),
            ));
        }
    }
    let mut seen = std::collections::BTreeSet::new();
    for (i, t) in teammates.iter().enumerate() {
        let valid = !t.name.is_empty()
            && t.name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
        if !valid {
            return Err((
                format!("teammates[{i}].name"),
                "use letters, digits, `_` or `-`".into(),
            ));
        }
        if !seen.insert(t.name.as_str()) {
            return Err((
                format!("teammates[{i}].name"),
                format!("`{}` is declared twice", t.name),
            ));
        }
    }
    Ok(AgentConfig {
        model,
        builtin_tools,
        teammates,
    })
}
