//! The config file: TOML, found at `--config`, else the platform config dir, else
//! the embedded default. Errors name the file, the key path and what is wrong.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;
use thiserror::Error;

use crate::mcp::names::normalize;
use crate::mcp::{Effect, Limits, ServerAlias, ServerSpec, ToolPolicy, TransportSpec, vars};

/// The embedded default: the two demo servers, launched from this binary.
pub const EMBEDDED_DEFAULT: &str = include_str!("../assets/default-config.toml");

/// Where the config came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ConfigSource {
    File(PathBuf),
    Embedded,
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
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawLimits {
    connect_timeout_ms: Option<u64>,
    call_timeout_ms: Option<u64>,
    max_result_bytes: Option<usize>,
    close_grace_ms: Option<u64>,
    max_tools: Option<usize>,
    max_list_pages: Option<usize>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawServer {
    command: Option<String>,
    args: Option<Vec<String>>,
    env: Option<BTreeMap<String, String>>,
    cwd: Option<String>,
    url: Option<String>,
    headers: Option<BTreeMap<String, String>>,
    connect_timeout_ms: Option<u64>,
    call_timeout_ms: Option<u64>,
    tools: Option<BTreeMap<String, Effect>>,
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
    let limits = limits(&raw.limits).map_err(|(key, m)| fail(Some(format!("limits.{key}")), m))?;
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
        let spec = server_spec(&alias, server, &limits)
            .map_err(|(key, m)| fail(Some(format!("servers.{alias}{key}")), m))?;
        servers.push(spec);
    }
    Ok(Config {
        source,
        limits,
        servers,
    })
}

type KeyError = (String, String);

fn limits(raw: &RawLimits) -> Result<Limits, KeyError> {
    let d = Limits::default();
    let ms = |key: &str, v: Option<u64>, default: Duration| match v {
        Some(0) => Err((key.to_string(), "must be at least 1".to_string())),
        Some(ms) => Ok(Duration::from_millis(ms)),
        None => Ok(default),
    };
    let count = |key: &str, v: Option<usize>, default: usize| match v {
        Some(0) => Err((key.to_string(), "must be at least 1".to_string())),
        Some(n) => Ok(n),
        None => Ok(default),
    };
    Ok(Limits {
        connect_timeout: ms(
            "connect_timeout_ms",
            raw.connect_timeout_ms,
            d.connect_timeout,
        )?,
        call_timeout: ms("call_timeout_ms", raw.call_timeout_ms, d.call_timeout)?,
        max_result_bytes: count("max_result_bytes", raw.max_result_bytes, d.max_result_bytes)?,
        close_grace: ms("close_grace_ms", raw.close_grace_ms, d.close_grace)?,
        max_tools: count("max_tools", raw.max_tools, d.max_tools)?,
        max_list_pages: count("max_list_pages", raw.max_list_pages, d.max_list_pages)?,
    })
}

fn server_spec(alias: &str, raw: RawServer, limits: &Limits) -> Result<ServerSpec, KeyError> {
    let key = |k: &str| format!(".{k}");
    let transport = match (raw.command, raw.url) {
        (Some(_), Some(_)) => {
            return Err((
                String::new(),
                "set either `command` (stdio) or `url` (Streamable HTTP), not both".into(),
            ));
        }
        (None, None) => {
            return Err((
                String::new(),
                "set `command` (a stdio server) or `url` (a Streamable HTTP server)".into(),
            ));
        }
        (Some(command), None) => {
            if raw.headers.is_some() {
                return Err((
                    key("headers"),
                    "`headers` only applies to `url` servers".into(),
                ));
            }
            if command.trim().is_empty() {
                return Err((key("command"), "must not be empty".into()));
            }
            TransportSpec::Stdio {
                command,
                args: raw.args.unwrap_or_default(),
                env: raw.env.unwrap_or_default().into_iter().collect(),
                cwd: raw.cwd,
            }
        }
        (None, Some(url)) => {
            for (present, name) in [
                (raw.args.is_some(), "args"),
                (raw.env.is_some(), "env"),
                (raw.cwd.is_some(), "cwd"),
            ] {
                if present {
                    return Err((
                        key(name),
                        format!("`{name}` only applies to `command` servers"),
                    ));
                }
            }
            if !(url.starts_with("http://") || url.starts_with("https://") || url.starts_with("${"))
            {
                return Err((key("url"), "must start with http:// or https://".into()));
            }
            TransportSpec::Http {
                url,
                headers: raw.headers.unwrap_or_default().into_iter().collect(),
            }
        }
    };
    check_templates(&transport)?;
    let timeout = |k: &str, v: Option<u64>, default: Duration| match v {
        Some(0) => Err((key(k), "must be at least 1".to_string())),
        Some(ms) => Ok(Duration::from_millis(ms)),
        None => Ok(default),
    };
    Ok(ServerSpec {
        alias: ServerAlias::new(alias),
        transport,
        connect_timeout: timeout(
            "connect_timeout_ms",
            raw.connect_timeout_ms,
            limits.connect_timeout,
        )?,
        call_timeout: timeout("call_timeout_ms", raw.call_timeout_ms, limits.call_timeout)?,
        policy: ToolPolicy::new(raw.tools.unwrap_or_default()),
    })
}

/// `${VAR}` syntax is checked at load time; values are looked up at connect time.
fn check_templates(transport: &TransportSpec) -> Result<(), KeyError> {
    let check = |key: String, value: &str| vars::check_syntax(value).map_err(|e| (key, e));
    match transport {
        TransportSpec::Stdio {
            command,
            args,
            env,
            cwd,
        } => {
            check(".command".into(), command)?;
            for (i, a) in args.iter().enumerate() {
                check(format!(".args[{i}]"), a)?;
            }
            for (k, v) in env {
                check(format!(".env.{k}"), v)?;
            }
            if let Some(cwd) = cwd {
                check(".cwd".into(), cwd)?;
            }
        }
        TransportSpec::Http { url, headers } => {
            check(".url".into(), url)?;
            for (k, v) in headers {
                check(format!(".headers.{k}"), v)?;
            }
        }
    }
    Ok(())
}

/// The TOML error's own message plus the line and column it points at.
fn toml_message(text: &str, error: &toml::de::Error) -> String {
    let message = error.message().trim().to_string();
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
        let text = include_str!("../config.example.toml");
        let config = parse(text, ConfigSource::File("config.example.toml".into())).unwrap();
        let aliases: Vec<&str> = config.servers.iter().map(|s| s.alias.as_str()).collect();
        assert_eq!(aliases, ["demo_alpha", "demo_beta", "remote"]);
        assert_eq!(config.limits, Limits::default());
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
    fn aliases_that_normalize_alike_are_refused() {
        let e = err("[servers.a-b]\ncommand=\"x\"\n[servers.a_b]\ncommand=\"y\"\n");
        assert!(e.message.contains("both become `a_b`"), "{e}");
    }

    #[test]
    fn servers_keep_file_order_and_overrides() {
        let text = "[limits]\ncall_timeout_ms = 500\n[servers.zeta]\ncommand=\"z\"\n[servers.alpha]\nurl=\"http://x\"\ncall_timeout_ms=7\n";
        let config = parse(text, ConfigSource::Embedded).unwrap();
        assert_eq!(config.servers[0].alias.as_str(), "zeta");
        assert_eq!(config.servers[0].call_timeout, Duration::from_millis(500));
        assert_eq!(config.servers[1].call_timeout, Duration::from_millis(7));
    }
}
