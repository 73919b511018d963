//! Source files → `Imported`: the per-format rules (which key means which
//! transport, which variable syntax, timeouts, tool filters).

use std::path::{Path, PathBuf};

use indexmap::IndexMap;
use serde::de::DeserializeOwned;

use super::entry::{codex_server, json_server};
use super::formats::{CodexFile, JsonServer, McpServersFile, VscodeFile};
use super::jsonc;
use super::{Format, ImportError, Imported};

pub fn parse(
    path: &Path,
    text: &str,
    format: Format,
    copy_env: &[String],
) -> Result<Imported, ImportError> {
    let mut out = Imported {
        format,
        path: path.to_path_buf(),
        servers: Vec::new(),
        variables: Vec::new(),
        skipped: Vec::new(),
        notes: Vec::new(),
        copy_env: copy_env.to_vec(),
        copied: Vec::new(),
    };
    let fail = |position, message: String| ImportError {
        file: path.to_path_buf(),
        path: None,
        position,
        message,
    };
    match format {
        Format::Codex => {
            let file: CodexFile = toml_file(path, text)?;
            for (name, server) in file.mcp_servers.unwrap_or_default() {
                let at = toml_position(text, &name);
                codex_server(&mut out, &name, server)
                    .map_err(|m| fail(at, m.to_string()).at(format!("mcp_servers.{name}")))?;
            }
        }
        Format::Vscode => {
            let file: VscodeFile = json_file(path, text)?;
            let inputs: Vec<(String, String)> = file
                .inputs
                .unwrap_or_default()
                .into_iter()
                .map(|i| (i.id, i.description.unwrap_or_default()))
                .collect();
            let workspace = workspace_of(path);
            for (name, server) in file.servers.unwrap_or_default() {
                let at = json_position(text, &name);
                json_server(&mut out, &name, server, &inputs, workspace.as_deref())
                    .map_err(|m| fail(at, m.to_string()).at(format!("servers.{name}")))?;
            }
        }
        _ => {
            let file: McpServersFile = json_file(path, text)?;
            let mut all: IndexMap<String, JsonServer> = file.mcp_servers.unwrap_or_default();
            // `~/.claude.json` also keeps servers per project.
            for (_, project) in file.projects.unwrap_or_default() {
                for (name, server) in project.mcp_servers.unwrap_or_default() {
                    all.entry(name).or_insert(server);
                }
            }
            let workspace = workspace_of(path);
            for (name, server) in all {
                let at = json_position(text, &name);
                json_server(&mut out, &name, server, &[], workspace.as_deref())
                    .map_err(|m| fail(at, m.to_string()).at(format!("mcpServers.{name}")))?;
            }
        }
    }
    Ok(out)
}

impl ImportError {
    fn at(mut self, path: String) -> Self {
        self.path = Some(path);
        self
    }
}

fn json_file<T: DeserializeOwned>(path: &Path, text: &str) -> Result<T, ImportError> {
    let strict = jsonc::to_strict(text);
    let mut de = serde_json::Deserializer::from_str(&strict);
    let error = |key: Option<String>, e: &serde_json::Error| {
        let message = e.to_string();
        let message = match message.rfind(" at line ") {
            Some(cut) => message[..cut].to_string(),
            None => message,
        };
        ImportError {
            file: path.to_path_buf(),
            path: key,
            position: Some((e.line(), e.column())),
            message,
        }
    };
    let parsed: T = serde_path_to_error::deserialize(&mut de).map_err(|e| {
        // A syntax error has no meaningful key path (serde_path_to_error says `?`).
        let key = e.path().to_string();
        let known = key != "." && !key.contains('?') && e.inner().is_data();
        error(known.then_some(key), e.inner())
    })?;
    de.end().map_err(|e| error(None, &e))?;
    Ok(parsed)
}

fn toml_file<T: DeserializeOwned>(path: &Path, text: &str) -> Result<T, ImportError> {
    let error = |key: Option<String>, e: &toml::de::Error| ImportError {
        file: path.to_path_buf(),
        path: key,
        position: e.span().map(|s| line_column(text, s.start)),
        message: e.message().trim().to_string(),
    };
    let de = toml::Deserializer::parse(text).map_err(|e| error(None, &e))?;
    serde_path_to_error::deserialize(de).map_err(|e| {
        let key = e.path().to_string();
        error((key != ".").then_some(key), e.inner())
    })
}

/// 1-based line and column of byte `offset`.
fn line_column(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..offset.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let column = before.len() - before.rfind('\n').map(|i| i + 1).unwrap_or(0) + 1;
    (line, column)
}

/// Where a server's entry starts in a JSON file: its key.
fn json_position(text: &str, name: &str) -> Option<(usize, usize)> {
    let key = serde_json::to_string(name).ok()?;
    text.find(&key).map(|at| line_column(text, at))
}

/// Where `[mcp_servers.NAME]` starts in a TOML file.
fn toml_position(text: &str, name: &str) -> Option<(usize, usize)> {
    let doc = toml_edit::Document::parse(text.to_string()).ok()?;
    let span = doc.get("mcp_servers")?.get(name)?.span()?;
    Some(line_column(text, span.start))
}

/// The folder that holds `.vscode/` or `.cursor/` (for `${workspaceFolder}`).
fn workspace_of(path: &Path) -> Option<PathBuf> {
    let dir = path.parent()?;
    let name = dir.file_name()?.to_str()?;
    if !matches!(name, ".vscode" | ".cursor") {
        return None;
    }
    let root = dir.parent()?;
    let root = if root.as_os_str().is_empty() {
        Path::new(".")
    } else {
        root
    };
    std::fs::canonicalize(root).ok()
}
