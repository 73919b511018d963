//! Which provider to use: `[model]` if present (its `provider` is required, so
//! a model name never lands on the wrong API); else Anthropic if
//! ANTHROPIC_API_KEY is set, else OpenAI if OPENAI_API_KEY is set, else — for
//! the embedded default only — the scripted demo, and for a config file of the
//! operator's own no model at all (the demo's script names the demo's servers).

use std::sync::Arc;

use thiserror::Error;

use super::scripted::{DEMO_SCENARIO, Scenario, ScriptedProvider};
use super::unconfigured::Unconfigured;
use super::{
    AnthropicProvider, HttpSettings, ModelError, ModelProvider, OpenAiProvider, RetryPolicy,
};
use crate::config::{ModelSection, ProviderKind};

const DEFAULT_MAX_TOKENS: u32 = 4096;

/// Why no provider could be built (the session does not start).
#[derive(Debug, Clone, Error, PartialEq, Eq)]
pub enum SelectError {
    /// The variable that should hold the API key is not set.
    #[error(
        "[model] provider \"{provider}\" needs an API key in ${var}, which is not set; \
         set it, or name another variable with api_key_env"
    )]
    MissingKey { provider: &'static str, var: String },
    /// A `[model]` section that does not say which provider (the config loader
    /// refuses these; this guards callers that build a section themselves).
    #[error("[model] needs `provider`: anthropic, openai or scripted")]
    NoProvider,
    /// The scenario file of the scripted provider cannot be used.
    #[error(transparent)]
    Scenario(#[from] ModelError),
}

/// What a config without `[model]` and without a key in the environment gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fallback {
    /// The scripted demo (the embedded default: its servers are the demo's).
    Demo,
    /// No model (a config file of the operator's own).
    Nothing,
}

/// The chosen provider and its limits.
pub struct Selection {
    pub provider: Arc<dyn ModelProvider>,
    pub max_tokens: u32,
    pub context_tokens: u64,
}

/// Which provider the section (or, without one, the environment) names;
/// `None`: no model at all. `env` reads environment variables (a parameter so
/// tests do not depend on the developer's environment).
pub fn kind(
    section: Option<&ModelSection>,
    fallback: Fallback,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Option<ProviderKind>, SelectError> {
    Ok(match section {
        Some(s) => Some(s.provider.ok_or(SelectError::NoProvider)?),
        None if env("ANTHROPIC_API_KEY").is_some() => Some(ProviderKind::Anthropic),
        None if env("OPENAI_API_KEY").is_some() => Some(ProviderKind::Openai),
        None => match fallback {
            Fallback::Demo => Some(ProviderKind::Scripted),
            Fallback::Nothing => None,
        },
    })
}

/// Picks and builds the provider (see [`kind`]).
pub fn select(
    section: Option<&ModelSection>,
    fallback: Fallback,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Selection, SelectError> {
    let implicit = ModelSection::default();
    let Some(kind) = kind(section, fallback, env)? else {
        return Ok(Selection {
            provider: Arc::new(Unconfigured),
            max_tokens: DEFAULT_MAX_TOKENS,
            context_tokens: 100_000,
        });
    };
    let section = section.unwrap_or(&implicit);
    let max_tokens = section.max_tokens.unwrap_or(DEFAULT_MAX_TOKENS);
    let (provider, context): (Arc<dyn ModelProvider>, u64) = match kind {
        ProviderKind::Anthropic => {
            let key_env = section
                .api_key_env
                .as_deref()
                .unwrap_or("ANTHROPIC_API_KEY");
            let key = env(key_env).ok_or_else(|| SelectError::MissingKey {
                provider: "anthropic",
                var: key_env.to_string(),
            })?;
            let settings = http(
                section,
                "https://api.anthropic.com",
                "claude-sonnet-4-5",
                Some(key),
            );
            (Arc::new(AnthropicProvider::new(settings)), 200_000)
        }
        ProviderKind::Openai => {
            // Local servers (Ollama, llama.cpp, vLLM) need no key; a variable the
            // config names explicitly must exist.
            let key = match &section.api_key_env {
                Some(name) => Some(env(name).ok_or_else(|| SelectError::MissingKey {
                    provider: "openai",
                    var: name.clone(),
                })?),
                None => env("OPENAI_API_KEY"),
            };
            let settings = http(section, "https://api.openai.com/v1", "gpt-4o-mini", key);
            (Arc::new(OpenAiProvider::new(settings)), 128_000)
        }
        ProviderKind::Scripted => {
            let scenario = match &section.scenario {
                Some(path) => Scenario::load(path)?,
                None => Scenario::parse(DEMO_SCENARIO, "demo")?,
            };
            let label = section
                .scenario
                .as_ref()
                .map_or("demo scenario".into(), |p| p.display().to_string());
            (Arc::new(ScriptedProvider::new(scenario, label)), 100_000)
        }
    };
    Ok(Selection {
        provider,
        max_tokens,
        context_tokens: section.context_tokens.unwrap_or(context),
    })
}

fn http(
    section: &ModelSection,
    base_url: &str,
    model: &str,
    api_key: Option<String>,
) -> HttpSettings {
    HttpSettings {
        base_url: section
            .base_url
            .clone()
            .unwrap_or_else(|| base_url.to_string()),
        api_key,
        model: section.model.clone().unwrap_or_else(|| model.to_string()),
        retry: RetryPolicy::default(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with(vars: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
        move |name| {
            vars.iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| v.to_string())
        }
    }

    #[test]
    fn no_section_follows_the_environment() {
        let pick = |vars, fallback| {
            select(None, fallback, &with(vars))
                .map(|s| s.provider.name())
                .unwrap()
        };
        assert_eq!(pick(&[], Fallback::Demo), "scripted");
        assert_eq!(pick(&[("OPENAI_API_KEY", "k")], Fallback::Demo), "openai");
        assert_eq!(
            pick(
                &[("OPENAI_API_KEY", "k"), ("ANTHROPIC_API_KEY", "k")],
                Fallback::Nothing
            ),
            "anthropic"
        );
    }

    #[test]
    fn without_a_key_only_the_embedded_default_replays_the_demo() {
        let none = select(None, Fallback::Nothing, &with(&[])).unwrap();
        assert_eq!(none.provider.name(), "none");
        assert!(!none.provider.is_configured());
        assert!(!none.provider.is_replay());
        assert_eq!(kind(None, Fallback::Nothing, &with(&[])), Ok(None));
        // An explicit scripted section is the operator's choice, file or not.
        let scripted = ModelSection {
            provider: Some(ProviderKind::Scripted),
            ..Default::default()
        };
        let chosen = select(Some(&scripted), Fallback::Nothing, &with(&[])).unwrap();
        assert_eq!(chosen.provider.name(), "scripted");
        assert!(chosen.provider.is_configured());
    }

    #[test]
    fn a_section_without_provider_is_refused_not_guessed() {
        let section = ModelSection {
            model: Some("gpt-4o".into()),
            ..Default::default()
        };
        let keys = with(&[("ANTHROPIC_API_KEY", "k")]);
        assert_eq!(
            select(Some(&section), Fallback::Demo, &keys).err(),
            Some(SelectError::NoProvider)
        );
    }

    #[test]
    fn a_missing_key_is_a_clear_error() {
        let section = ModelSection {
            provider: Some(ProviderKind::Anthropic),
            ..Default::default()
        };
        let Err(e) = select(Some(&section), Fallback::Demo, &with(&[])) else {
            panic!("selected without a key")
        };
        assert_eq!(
            e,
            SelectError::MissingKey {
                provider: "anthropic",
                var: "ANTHROPIC_API_KEY".into()
            }
        );
        assert!(e.to_string().contains("$ANTHROPIC_API_KEY"), "{e}");
        let section = ModelSection {
            provider: Some(ProviderKind::Openai),
            api_key_env: Some("MY_OPENAI_KEY".into()),
            ..Default::default()
        };
        let Err(e) = select(
            Some(&section),
            Fallback::Demo,
            &with(&[("OPENAI_API_KEY", "k")]),
        ) else {
            panic!("selected without the named key")
        };
        assert!(
            matches!(&e, SelectError::MissingKey { provider: "openai", var } if var == "MY_OPENAI_KEY"),
            "{e}"
        );
        let section = ModelSection {
            provider: Some(ProviderKind::Openai),
            base_url: Some("http://localhost:11434/v1".into()),
            ..Default::default()
        };
        assert_eq!(
            select(Some(&section), Fallback::Demo, &with(&[]))
                .map(|s| s.provider.name())
                .ok(),
            Some("openai")
        );
    }
}
