//! `mcp-harness import`: servers configured in another host (Claude Desktop,
//! Claude Code, Cursor, VS Code, Codex, Gemini CLI) brought into our config.
//! Reading is here and in `formats`/`values`; writing (with `toml_edit`, keeping
//! the file's comments) is in `write`. Secret values are never copied.

mod convert;
mod entry;
mod formats;
mod jsonc;
mod values;
pub mod write;

use std::fmt;
use std::path::{Path, PathBuf};

use thiserror::Error;

/// The hosts whose configs we read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    ClaudeDesktop,
    ClaudeCode,
    Cursor,
    Vscode,
    Codex,
    Gemini,
}

impl Format {
    pub const ALL: [Format; 6] = [
        Format::ClaudeDesktop,
        Format::ClaudeCode,
        Format::Cursor,
        Format::Vscode,
        Format::Codex,
        Format::Gemini,
    ];

    /// The `--from` name.
    pub fn name(self) -> &'static str {
        match self {
            Format::ClaudeDesktop => "claude-desktop",
            Format::ClaudeCode => "claude-code",
            Format::Cursor => "cursor",
            Format::Vscode => "vscode",
            Format::Codex => "codex",
            Format::Gemini => "gemini",
        }
    }

    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|f| f.name() == name)
    }

    /// Where the host keeps its config, most specific first (project, then user).
    pub fn default_paths(self) -> Vec<PathBuf> {
        let home = std::env::var_os("HOME").map(PathBuf::from);
        let in_home = |rel: &str| home.as_ref().map(|h| h.join(rel));
        let here = |rel: &str| Some(PathBuf::from(rel));
        let paths = match self {
            Format::ClaudeDesktop => vec![
                directories::BaseDirs::new()
                    .map(|d| d.config_dir().join("Claude/claude_desktop_config.json")),
                in_home("Library/Application Support/Claude/claude_desktop_config.json"),
            ],
            Format::ClaudeCode => vec![here(".mcp.json"), in_home(".claude.json")],
            Format::Cursor => vec![here(".cursor/mcp.json"), in_home(".cursor/mcp.json")],
            Format::Vscode => vec![here(".vscode/mcp.json")],
            Format::Codex => vec![
                std::env::var_os("CODEX_HOME").map(|h| PathBuf::from(h).join("config.toml")),
                in_home(".codex/config.toml"),
            ],
            Format::Gemini => vec![
                here(".gemini/settings.json"),
                in_home(".gemini/settings.json"),
            ],
        };
        paths.into_iter().flatten().collect()
    }

    /// Guesses the format of `path` from its name, then from its content.
    pub fn detect(path: &Path, text: &str) -> Format {
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default();
        let parent = path
            .parent()
            .and_then(Path::file_name)
            .and_then(|n| n.to_str())
            .unwrap_or_default();
        match (name, parent) {
            (_, _) if name.ends_with(".toml") => return Format::Codex,
            (".mcp.json" | ".claude.json", _) => return Format::ClaudeCode,
            ("claude_desktop_config.json", _) => return Format::ClaudeDesktop,
            (_, ".cursor") => return Format::Cursor,
            (_, ".vscode") => return Format::Vscode,
            (_, ".gemini") | ("settings.json", _) => return Format::Gemini,
            _ => {}
        }
        let value: serde_json::Value =
            serde_json::from_str(&jsonc::to_strict(text)).unwrap_or_default();
        if value.get("mcpServers").is_none() && value.get("servers").is_some() {
            return Format::Vscode;
        }
        let servers: Vec<&serde_json::Value> = value
            .get("mcpServers")
            .and_then(|s| s.as_object())
            .map(|m| m.values().collect())
            .unwrap_or_default();
        let has = |key: &str| servers.iter().any(|s| s.get(key).is_some());
        if has("httpUrl") || has("trust") || has("includeTools") || has("excludeTools") {
            Format::Gemini
        } else if has("type") {
            Format::ClaudeCode
        } else {
            Format::ClaudeDesktop
        }
    }
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One server read from the source, in our terms (values already translated:
/// no secret in it).
#[derive(Debug, Clone, PartialEq)]
pub struct ImportedServer {
    /// The name in the source file.
    pub source_name: String,
    /// Our alias: the source name with every character outside `[A-Za-z0-9_]` as `_`.
    pub alias: String,
    pub transport: ImportedTransport,
    pub connect_timeout_ms: Option<u64>,
    pub call_timeout_ms: Option<u64>,
    /// Switched off in the source (imported all the same: nothing connects by itself).
    pub disabled: bool,
    /// Tools the source kept from the model: `deny` when `--with-policy` writes a policy.
    pub denied_tools: Vec<String>,
    /// Tools the source allowed exclusively (every other one is denied), if it said.
    pub only_tools: Option<Vec<String>>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum ImportedTransport {
    Stdio {
        command: String,
        args: Vec<String>,
        env: Vec<(String, String)>,
        cwd: Option<String>,
    },
    Http {
        url: String,
        headers: Vec<(String, String)>,
    },
}

/// A variable the operator must set for an imported server to start.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Variable {
    pub name: String,
    /// Where it is used, e.g. `servers.github.env.GITHUB_TOKEN`.
    pub key: String,
    /// Why it is a variable (a literal secret that was not copied, an editor prompt).
    pub why: String,
}

/// A server of the source that was not imported, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skipped {
    pub name: String,
    pub reason: String,
}

/// Everything read from one source file.
#[derive(Debug, Clone)]
pub struct Imported {
    pub format: Format,
    pub path: PathBuf,
    pub servers: Vec<ImportedServer>,
    pub variables: Vec<Variable>,
    pub skipped: Vec<Skipped>,
    /// Things the operator should know (defaults dropped, env files not read…).
    pub notes: Vec<String>,
    /// `env` keys whose literal values the operator asked to copy (`--copy-env`).
    pub copy_env: Vec<String>,
    /// Where a literal `env` value was copied as asked (`servers.ALIAS.env.KEY`).
    pub copied: Vec<String>,
}

/// A source file that cannot be read (the command exits with status 2).
#[derive(Debug, Error)]
pub struct ImportError {
    pub file: PathBuf,
    /// The key path, e.g. `mcpServers.github.args[0]`.
    pub path: Option<String>,
    /// 1-based line and column.
    pub position: Option<(usize, usize)>,
    pub message: String,
}

impl fmt::Display for ImportError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file.display())?;
        if let Some((line, column)) = self.position {
            write!(f, ":{line}:{column}")?;
        }
        if let Some(path) = &self.path {
            write!(f, " at `{path}`")?;
        }
        write!(f, ": {}", self.message)
    }
}

/// Reads `path` as `format` (or the detected format).
pub fn read(path: &Path, format: Option<Format>) -> Result<Imported, ImportError> {
    read_copying(path, format, &[])
}

/// [`read`], copying the literal values of the `env` keys in `copy_env` (the
/// operator says they are no secrets: a path, a log level) instead of turning
/// them into variables; a key whose name looks like a secret is never copied.
pub fn read_copying(
    path: &Path,
    format: Option<Format>,
    copy_env: &[String],
) -> Result<Imported, ImportError> {
    let text = std::fs::read_to_string(path).map_err(|e| ImportError {
        file: path.to_path_buf(),
        path: None,
        position: None,
        message: format!("cannot read the file: {e}"),
    })?;
    let format = format.unwrap_or_else(|| Format::detect(path, &text));
    convert::parse(path, &text, format, copy_env)
}

/// No default location of a format holds a file (the paths it looked at).
#[derive(Debug, Clone, thiserror::Error)]
#[error(
    "no {format} config found (looked at {}); pass the file: mcp-harness import FILE --from {format}",
    tried.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", ")
)]
pub struct NotFound {
    pub format: Format,
    pub tried: Vec<PathBuf>,
}

/// The first default location of `format` that exists.
pub fn locate(format: Format) -> Result<PathBuf, NotFound> {
    let candidates = format.default_paths();
    candidates
        .iter()
        .find(|p| p.is_file())
        .cloned()
        .ok_or(NotFound {
            format,
            tried: candidates,
        })
}
