//! The config file: TOML, found at `--config`, else the platform config dir, else
//! the embedded default. Errors name the file, the key path and what is wrong.

mod agent;
pub mod edit;
pub mod import;
pub mod lines;
mod oauth;
mod serve;
mod servers;
mod telemetry;

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use thiserror::Error;

pub use agent::{AgentConfig, BUILTIN_TOOLS, ModelSection, ProviderKind, TeammateConfig};
use servers::{RawLimits, RawServer};
use telemetry::RawTelemetry;
pub use telemetry::TelemetryConfig;

use crate::mcp::names::normalize;
use crate::mcp::{Effect, Limits, ServerSpec};

/// The embedded default: the two demo servers, launched from this binary.
pub const EMBEDDED_DEFAULT: &str = include_str!("../../../../assets/default-config.toml");

/// Where the config came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ConfigSource {
    File(PathBuf),
    Embedded,
}

impl ConfigSource {
    /// The config file, when there is one.
    pub fn file(&self) -> Option<&Path> {
        match self {
            ConfigSource::File(path) => Some(path),
            ConfigSource::Embedded => None,
        }
    }
}

impl fmt::Display for ConfigSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ConfigSource::File(p) => write!(f, "{}", p.display()),
            ConfigSource::Embedded => f.write_str("the embedded default config"),
        }
    }
}

/// A loaded, validated config.
#[derive(Debug, Clone)]
pub struct Config {
    pub source: ConfigSource,
    pub limits: Limits,
    /// In file order.
    pub servers: Vec<ServerSpec>,
    pub agent: AgentConfig,
    /// `[telemetry]`, when present: OTLP export of calls and events.
    pub telemetry: Option<TelemetryConfig>,
    /// `lock = PATH`: the pins live there (relative to the config file's folder),
    /// not beside the config.
    pub lock: Option<PathBuf>,
    /// `--accept-new-lock`: the operator knows this config's lock is new; trust
    /// on first use even for aliases pinned in another lock.
    pub accept_new_lock: bool,
    /// `[serve]`: the gateway (`mcp-harness serve`); the defaults when absent.
    pub serve: crate::mcp::gateway::GatewaySettings,
    /// `[flows]`: what a sink call in a tainted session meets.
    pub flows: crate::mcp::flows::FlowSettings,
}

/// A config that cannot be used. The CLI exits with status 2.
#[derive(Debug, Error)]
#[error("config error in {file}{}: {message}", .path.as_ref().map(|p| format!(" at `{p}`")).unwrap_or_default())]
pub struct ConfigError {
    pub file: ConfigSource,
    /// The key path, e.g. `servers.demo_alpha.tools.lookup`.
    pub path: Option<String>,
    pub message: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawConfig {
    #[serde(default)]
    limits: RawLimits,
    #[serde(default)]
    servers: indexmap::IndexMap<String, RawServer>,
    model: Option<ModelSection>,
    #[serde(default)]
    builtin_tools: BTreeMap<String, Effect>,
    #[serde(default)]
    teammates: Vec<TeammateConfig>,
    telemetry: Option<RawTelemetry>,
    lock: Option<PathBuf>,
    serve: Option<serve::RawServe>,
    #[serde(default)]
    flows: RawFlows,
}

/// `[flows]` (SPEC rule 20).
#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawFlows {
    on_trifecta: Option<crate::mcp::flows::OnTrifecta>,
    untrusted_sink: Option<crate::mcp::flows::UntrustedSink>,
}

/// Picks the config: `--config` (must exist), else `config.toml` in the platform
/// config dir if present, else the embedded default.
pub fn locate(explicit: Option<&Path>) -> ConfigSource {
    if let Some(path) = explicit {
        return ConfigSource::File(path.to_path_buf());
    }
    match default_path() {
        Some(path) if path.is_file() => ConfigSource::File(path),
        _ => ConfigSource::Embedded,
    }
}

impl Config {
    /// Where the control room of this config listens for `serve --stdio`
    /// relays (see `mcp::gateway::relay`).
    pub fn relay_socket(&self) -> Option<PathBuf> {
        crate::mcp::gateway::relay::socket_path(self.source.file())
    }

    /// `mcp-harness.lock`, where the tools' pins live: beside the config file,
    /// or in the data dir for the embedded default.
    pub fn lock_path(&self) -> Option<PathBuf> {
        let lock = crate::mcp::pins::book::LOCK_FILE;
        if let Some(path) = &self.lock {
            return Some(path.clone());
        }
        match &self.source {
            ConfigSource::File(path) => Some(match path.parent() {
                Some(dir) if !dir.as_os_str().is_empty() => dir.join(lock),
                _ => PathBuf::from(lock),
            }),
            ConfigSource::Embedded => crate::logging::data_dir().map(|d| d.join(lock)),
        }
    }

    /// The pin book for this config (in memory only if there is no data dir).
    /// A config whose lock is new (a copy elsewhere, without `lock = …`)
    /// consults the locks the harness knows before trusting on first use.
    pub fn pin_book(&self) -> crate::mcp::PinBook {
        match self.lock_path() {
            Some(path) => {
                let others = if self.lock.is_some() || self.accept_new_lock {
                    Vec::new()
                } else {
                    known_locks()
                        .into_iter()
                        .filter(|other| !same_file(other, &path))
                        .collect()
                };
                crate::mcp::PinBook::file(path).consulting(others)
            }
            None => crate::mcp::PinBook::in_memory(),
        }
    }
}

/// The locks of the default config and of the embedded default: where a
/// config's aliases were most likely pinned before it was copied.
fn known_locks() -> Vec<PathBuf> {
    let lock = crate::mcp::pins::book::LOCK_FILE;
    let beside_default = default_path().and_then(|p| p.parent().map(|d| d.join(lock)));
    let data = crate::logging::data_dir().map(|d| d.join(lock));
    beside_default.into_iter().chain(data).collect()
}

/// Whether two paths name one file (a file that does not exist yet is compared
/// by its folder).
fn same_file(a: &Path, b: &Path) -> bool {
    let resolve = |p: &Path| {
        let dir = match p.parent() {
            Some(d) if !d.as_os_str().is_empty() => d,
            _ => Path::new("."),
        };
        dir.canonicalize()
            .ok()
            .map(|d| d.join(p.file_name().unwrap_or_default()))
    };
    match (resolve(a), resolve(b)) {
        (Some(a), Some(b)) => a == b,
        _ => a == b,
    }
}

/// `~/.config/mcp-harness/config.toml` on Linux.
pub fn default_path() -> Option<PathBuf> {
    directories::ProjectDirs::from("", "", "mcp-harness")
        .map(|d| d.config_dir().join("config.toml"))
}

pub fn load(source: ConfigSource) -> Result<Config, ConfigError> {
    let text = match &source {
        ConfigSource::File(path) => std::fs::read_to_string(path).map_err(|e| ConfigError {
            file: source.clone(),
            path: None,
            message: format!("cannot read the file: {e}"),
        })?,
        ConfigSource::Embedded => EMBEDDED_DEFAULT.to_string(),
    };
    parse(&text, source)
}

/// Parses and validates config text.
pub fn parse(text: &str, source: ConfigSource) -> Result<Config, ConfigError> {
    let fail = |path: Option<String>, message: String| ConfigError {
        file: source.clone(),
        path,
        message,
    };
    let de = toml::Deserializer::parse(text).map_err(|e| fail(None, toml_message(text, &e)))?;
    let raw: RawConfig = serde_path_to_error::deserialize(de).map_err(|e| {
        let path = e.path().to_string();
        fail((path != ".").then_some(path), toml_message(text, e.inner()))
    })?;
    let limits =
        servers::limits(&raw.limits).map_err(|(key, m)| fail(Some(format!("limits.{key}")), m))?;
    let mut servers = Vec::new();
    let mut normalized: BTreeMap<String, String> = BTreeMap::new();
    for (alias, server) in raw.servers {
        if alias.trim().is_empty() {
            return Err(fail(
                Some("servers".into()),
                "a server alias must not be empty".into(),
            ));
        }
        if let Some(other) = normalized.insert(normalize(&alias), alias.clone()) {
            return Err(fail(
                Some(format!("servers.{alias}")),
                format!(
                    "aliases `{other}` and `{alias}` both become `{}` in exposed tool names; rename one",
                    normalize(&alias)
                ),
            ));
        }
        let base = match &source {
            ConfigSource::File(file) => file.parent(),
            ConfigSource::Embedded => None,
        };
        let spec = servers::server_spec(&alias, server, &limits, base)
            .map_err(|(key, m)| fail(Some(format!("servers.{alias}{key}")), m))?;
        servers.push(spec);
    }
    let mut agent = agent::agent_config(raw.model, raw.builtin_tools, raw.teammates)
        .map_err(|(key, m)| fail(Some(key), m))?;
    // A scenario beside the config file must not depend on where the harness
    // was started; only text with no file (the embedded default) uses the cwd.
    if let (ConfigSource::File(file), Some(model)) = (&source, agent.model.as_mut())
        && let Some(scenario) = model.scenario.as_mut()
        && scenario.is_relative()
        && let Some(dir) = file.parent()
    {
        *scenario = dir.join(&*scenario);
    }
    let telemetry = raw
        .telemetry
        .map(telemetry::telemetry)
        .transpose()
        .map_err(|(key, m)| fail(Some(key), m))?;
    let aliases: Vec<crate::mcp::ServerAlias> = servers.iter().map(|s| s.alias.clone()).collect();
    let serve = raw
        .serve
        .map(|raw| serve::serve(raw, &aliases))
        .transpose()
        .map_err(|(key, m)| fail(Some(key), m))?
        .unwrap_or_default();
    let lock = raw.lock.map(|lock| match &source {
        ConfigSource::File(file) if lock.is_relative() => match file.parent() {
            Some(dir) => dir.join(&lock),
            None => lock,
        },
        _ => lock,
    });
    Ok(Config {
        source,
        limits,
        servers,
        agent,
        telemetry,
        lock,
        accept_new_lock: false,
        serve,
        flows: crate::mcp::flows::FlowSettings {
            on_trifecta: raw.flows.on_trifecta.unwrap_or_default(),
            untrusted_sink: raw.flows.untrusted_sink.unwrap_or_default(),
        },
    })
}

/// The candidate most like `word`, if one is like it at all (the measure and
/// threshold clap uses for its own suggestions).
pub fn closest<'a>(word: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    candidates
        .into_iter()
        .map(|c| (strsim::jaro(word, c), c))
        .filter(|(score, _)| *score > 0.7)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, c)| c)
}

/// serde's "unknown field `x`, expected one of `a`, `b`" (or "unknown
/// variant") plus the closest one.
fn with_suggestion(message: String) -> String {
    let Some((_, rest)) = message
        .split_once("unknown field `")
        .or_else(|| message.split_once("unknown variant `"))
    else {
        return message;
    };
    let Some((field, expected)) = rest.split_once('`') else {
        return message;
    };
    let keys = expected.split('`').skip(1).step_by(2);
    match closest(field, keys) {
        Some(key) => format!("{message}; did you mean `{key}`?"),
        None => message,
    }
}

/// The TOML error's own message plus the line and column it points at.
fn toml_message(text: &str, error: &toml::de::Error) -> String {
    let message = with_suggestion(error.message().trim().to_string());
    match error.span() {
        Some(span) => {
            let before = &text[..span.start.min(text.len())];
            let line = before.matches('\n').count() + 1;
            let column = before.len() - before.rfind('\n').map(|i| i + 1).unwrap_or(0) + 1;
            format!("{message} (line {line}, column {column})")
        }
        None => message,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mcp::PinMode;
    use std::time::Duration;

    fn err(text: &str) -> ConfigError {
        parse(text, ConfigSource::File("test.toml".into())).unwrap_err()
    }

    #[test]
    fn embedded_default_parses() {
        let config = load(ConfigSource::Embedded).unwrap();
        let aliases: Vec<&str> = config.servers.iter().map(|s| s.alias.as_str()).collect();
        assert_eq!(aliases, ["demo_alpha", "demo_beta"]);
    }

    #[test]
    fn example_config_parses() {
        let text = include_str!("../../../../config.example.toml");
        let config = parse(text, ConfigSource::File("config.example.toml".into())).unwrap();
        let aliases: Vec<&str> = config.servers.iter().map(|s| s.alias.as_str()).collect();
        assert_eq!(
            aliases,
            [
                "demo_alpha",
                "demo_beta",
                "remote",
                "socket",
                "hosted",
                "machine",
                "workload",
                "enterprise"
            ]
        );
        assert_eq!(config.limits, Limits::default());
        let model = config.agent.model.as_ref().expect("[model]");
        assert_eq!(model.provider, Some(ProviderKind::Anthropic));
        assert_eq!(config.agent.builtin_tools.len(), BUILTIN_TOOLS.len());
        assert_eq!(config.agent.teammates[0].name, "reviewer");
        let telemetry = config.telemetry.as_ref().expect("[telemetry]");
        assert_eq!(telemetry.otlp_endpoint, "http://localhost:4318");
        assert!(!telemetry.include_arguments);
    }

    #[test]
    fn liveness_ping_ms_sets_the_http_liveness_check_and_0_turns_it_off() {
        let config = parse("", ConfigSource::File("test.toml".into())).unwrap();
        assert_eq!(
            config.limits.liveness_ping,
            Some(Duration::from_millis(5000))
        );
        let config = parse(
            "[limits]\nliveness_ping_ms = 750\n",
            ConfigSource::File("test.toml".into()),
        )
        .unwrap();
        assert_eq!(
            config.limits.liveness_ping,
            Some(Duration::from_millis(750))
        );
        let config = parse(
            "[limits]\nliveness_ping_ms = 0\n",
            ConfigSource::File("test.toml".into()),
        )
        .unwrap();
        assert_eq!(config.limits.liveness_ping, None);
    }

    #[test]
    fn a_ws_url_is_a_websocket_server_bound_like_an_http_one() {
        let text = "[limits]\nidle_timeout_ms = 9000\n\
                    [servers.s]\nurl = \"wss://mcp.example.com/ws\"\n\
                    headers = { Authorization = \"Bearer ${T}\" }\n[servers.s.tools]\n";
        let config = parse(text, ConfigSource::File("test.toml".into())).unwrap();
        let spec = &config.servers[0];
        assert_eq!(spec.transport.kind(), crate::mcp::spec::TransportKind::Ws);
        assert_eq!(spec.idle_timeout, Duration::from_millis(9000));
        assert!(spec.transport.auth().is_none());
        // Plaintext to a remote host, as for http://.
        let e = err("[servers.s]\nurl = \"ws://10.0.0.5/mcp\"\n[servers.s.tools]\n");
        assert!(e.message.contains("plaintext ws:// to `10.0.0.5`"), "{e}");
        // OAuth is for http(s) servers: a token goes in `headers`.
        let e =
            err("[servers.s]\nurl = \"ws://127.0.0.1/mcp\"\nauth = \"oauth\"\n[servers.s.tools]\n");
        assert!(e.to_string().contains("`servers.s.auth`"), "{e}");
        assert!(e.message.contains("WebSocket"), "{e}");
        let e = err("[servers.s]\nurl = \"ftp://x/mcp\"\n[servers.s.tools]\n");
        assert!(e.message.contains("ws:// or wss://"), "{e}");
    }

    #[test]
    fn a_key_typo_names_the_closest_key() {
        let e = err("[servers.a]\ncomand = \"x\"\n");
        assert!(e.message.contains("did you mean `command`?"), "{e}");
        let e = err("[limits]\ncall_timout_ms = 5\n");
        assert!(e.message.contains("did you mean `call_timeout_ms`?"), "{e}");
        let e = err("[limits]\nzzz = 5\n");
        assert!(!e.message.contains("did you mean"), "{e}");
    }

    #[test]
    fn errors_name_the_key_path() {
        let e = err("[servers.a]\ncommand = \"x\"\n[servers.a.tools]\nlookup = \"allw\"\n");
        assert_eq!(e.path.as_deref(), Some("servers.a.tools.lookup"), "{e}");
        assert!(e.message.contains("allow"), "{e}");
        assert!(e.message.contains("line 4"), "{e}");
        let e = err("[servers.a]\ncomand = \"x\"\n");
        assert_eq!(e.path.as_deref(), Some("servers.a.comand"), "{e}");
        let e = err("[limits]\ncall_timeout_ms = 0\n");
        assert_eq!(e.path.as_deref(), Some("limits.call_timeout_ms"), "{e}");
    }

    #[test]
    fn pin_modes_default_to_tofu_and_are_checked() {
        let text =
            "[servers.a]\ncommand = \"x\"\n[servers.b]\ncommand = \"x\"\npin = \"required\"\n";
        let config = parse(text, ConfigSource::Embedded).unwrap();
        let modes: Vec<PinMode> = config.servers.iter().map(|s| s.pin).collect();
        assert_eq!(modes, [PinMode::Tofu, PinMode::Required]);
        let e = err("[servers.a]\ncommand = \"x\"\npin = \"sometimes\"\n");
        assert_eq!(e.path.as_deref(), Some("servers.a.pin"), "{e}");
        assert!(
            e.message.contains("tofu") && e.message.contains("required"),
            "{e}"
        );
    }

    #[test]
    fn the_lock_file_is_beside_the_config_file() {
        let config = parse("", ConfigSource::File("/etc/mcph/config.toml".into())).unwrap();
        assert_eq!(
            config.lock_path(),
            Some(PathBuf::from("/etc/mcph/mcp-harness.lock"))
        );
        let config = parse("", ConfigSource::File("config.toml".into())).unwrap();
        assert_eq!(config.lock_path(), Some(PathBuf::from("mcp-harness.lock")));
    }

    #[test]
    fn agent_sections_are_checked() {
        let e = err("[builtin_tools]\nrm_rf = \"allow\"\n");
        assert_eq!(e.path.as_deref(), Some("builtin_tools.rm_rf"), "{e}");
        let e = err("[model]\nprovider = \"gpt\"\n");
        assert_eq!(e.path.as_deref(), Some("model.provider"), "{e}");
        let e = err(
            "[[teammates]]\nname = \"a\"\nsystem_prompt = \"x\"\n[[teammates]]\nname = \"a\"\nsystem_prompt = \"y\"\n",
        );
        assert!(e.message.contains("declared twice"), "{e}");
        let e = err("[model]\nprovider = \"openai\"\nscenario = \"x.toml\"\n");
        assert_eq!(e.path.as_deref(), Some("model.scenario"), "{e}");
    }

    #[test]
    fn model_needs_a_provider() {
        let e = err("[model]\nmodel = \"gpt-4o\"\n");
        assert_eq!(e.path.as_deref(), Some("model.provider"), "{e}");
        assert!(e.message.contains("anthropic, openai or scripted"), "{e}");
    }

    #[test]
    fn a_relative_scenario_is_beside_the_config_file() {
        let text = "[model]\nprovider = \"scripted\"\nscenario = \"story.toml\"\n";
        let scenario = |source| {
            parse(text, source)
                .unwrap()
                .agent
                .model
                .and_then(|m| m.scenario)
                .unwrap()
        };
        assert_eq!(
            scenario(ConfigSource::File("/etc/mcph/config.toml".into())),
            PathBuf::from("/etc/mcph/story.toml")
        );
        assert_eq!(
            scenario(ConfigSource::File("config.toml".into())),
            PathBuf::from("story.toml"),
            "a config named relative to the cwd keeps its scenario there too"
        );
        assert_eq!(
            scenario(ConfigSource::Embedded),
            PathBuf::from("story.toml")
        );
        let absolute = "[model]\nprovider = \"scripted\"\nscenario = \"/s/story.toml\"\n";
        let config = parse(absolute, ConfigSource::File("/etc/mcph/config.toml".into())).unwrap();
        assert_eq!(
            config.agent.model.and_then(|m| m.scenario),
            Some(PathBuf::from("/s/story.toml"))
        );
    }

    #[test]
    fn transport_rules() {
        assert!(err("[servers.a]\n").message.contains("set `command`"));
        assert!(
            err("[servers.a]\ncommand=\"x\"\nurl=\"http://h\"\n")
                .message
                .contains("not both")
        );
        assert_eq!(
            err("[servers.a]\nurl=\"http://h\"\nargs=[]\n")
                .path
                .as_deref(),
            Some("servers.a.args")
        );
        assert_eq!(
            err("[servers.a]\nurl=\"ftp://h\"\n").path.as_deref(),
            Some("servers.a.url")
        );
        assert_eq!(
            err("[servers.a]\ncommand=\"x\"\nenv={T=\"${bad\"}\n")
                .path
                .as_deref(),
            Some("servers.a.env.T")
        );
    }

    #[test]
    fn plaintext_http_to_a_remote_host_is_refused_unless_allowed() {
        let e = err("[servers.far]\nurl = \"http://mcp.example.com/mcp\"\n");
        assert_eq!(e.path.as_deref(), Some("servers.far.url"), "{e}");
        assert!(
            e.message.contains("`mcp.example.com`")
                && e.message.contains("allow_insecure_http = true"),
            "names the host and the fix: {e}"
        );
        assert_eq!(
            err("[servers.far]\nurl = \"http://10.0.0.5:8080/\"\n")
                .path
                .as_deref(),
            Some("servers.far.url")
        );
        // The benign twins: loopback, https, a host only known at connect time.
        for url in [
            "http://127.0.0.1:9/mcp",
            "http://localhost/mcp",
            "http://[::1]:8080/",
            "https://mcp.example.com/mcp",
            "http://${MCP_HOST}/mcp",
        ] {
            let text = format!("[servers.s]\nurl = \"{url}\"\n");
            let config = parse(&text, ConfigSource::Embedded).unwrap();
            assert!(!config.servers[0].transport.insecure_http(), "{url}");
        }
        let allowed =
            "[servers.far]\nurl = \"http://mcp.example.com/mcp\"\nallow_insecure_http = true\n";
        let config = parse(allowed, ConfigSource::Embedded).unwrap();
        assert!(config.servers[0].transport.insecure_http(), "marked");
        let e = err("[servers.s]\ncommand = \"x\"\nallow_insecure_http = true\n");
        assert_eq!(
            e.path.as_deref(),
            Some("servers.s.allow_insecure_http"),
            "{e}"
        );
    }

    #[test]
    fn aliases_that_normalize_alike_are_refused() {
        let e = err("[servers.a-b]\ncommand=\"x\"\n[servers.a_b]\ncommand=\"y\"\n");
        assert!(e.message.contains("both become `a_b`"), "{e}");
    }

    #[test]
    fn servers_keep_file_order_and_overrides() {
        let text = "[limits]\ncall_timeout_ms = 500\n[servers.zeta]\ncommand=\"z\"\n[servers.alpha]\nurl=\"https://x\"\ncall_timeout_ms=7\n";
        let config = parse(text, ConfigSource::Embedded).unwrap();
        assert_eq!(config.servers[0].alias.as_str(), "zeta");
        assert_eq!(config.servers[0].call_timeout, Duration::from_millis(500));
        assert_eq!(config.servers[1].call_timeout, Duration::from_millis(7));
    }
}
