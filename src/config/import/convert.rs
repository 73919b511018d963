//! Source files → `Imported`: the per-format rules (which key means which
//! transport, which variable syntax, timeouts, tool filters).

use std::path::{Path, PathBuf};

use indexmap::IndexMap;
use serde::de::DeserializeOwned;

use super::formats::{CodexFile, CodexServer, JsonServer, McpServersFile, Scalar, VscodeFile};
use super::jsonc;
use super::values::{Syntax, Translated, Translator, variable_name};
use super::{Format, ImportError, Imported, ImportedServer, ImportedTransport, Skipped};
use crate::mcp::names::normalize;

pub fn parse(path: &Path, text: &str, format: Format) -> Result<Imported, ImportError> {
    let mut out = Imported {
        format,
        path: path.to_path_buf(),
        servers: Vec::new(),
        variables: Vec::new(),
        skipped: Vec::new(),
        notes: Vec::new(),
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
                    .map_err(|m| fail(at, m).at(format!("mcp_servers.{name}")))?;
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
                    .map_err(|m| fail(at, m).at(format!("servers.{name}")))?;
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
                    .map_err(|m| fail(at, m).at(format!("mcpServers.{name}")))?;
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

/// Accumulates one server's translated values.
struct Server<'a> {
    t: Translator<'a>,
    out: &'a mut Imported,
}

impl Server<'_> {
    fn take(&mut self, translated: Translated) -> String {
        self.out.notes.extend(translated.notes);
        for v in translated.variables {
            if !self.out.variables.contains(&v) {
                self.out.variables.push(v);
            }
        }
        translated.text
    }

    fn plain(&mut self, raw: &str, key: &str) -> String {
        let t = self.t.value(raw, key);
        self.take(t)
    }
}

fn unique_alias(out: &mut Imported, name: &str) -> String {
    let base = match normalize(name) {
        a if a.is_empty() => "server".to_string(),
        a => a,
    };
    let taken = |a: &str| out.servers.iter().any(|s| s.alias == a);
    let mut alias = base.clone();
    let mut n = 2;
    while taken(&alias) {
        alias = format!("{base}_{n}");
        n += 1;
    }
    if alias != base {
        out.notes.push(format!(
            "`{name}` became `{alias}`: `{base}` was already taken by another server of this file"
        ));
    }
    alias
}

fn json_server(
    out: &mut Imported,
    name: &str,
    server: JsonServer,
    inputs: &[(String, String)],
    workspace: Option<&Path>,
) -> Result<(), String> {
    let format = out.format;
    let syntax = match format {
        Format::ClaudeCode => Syntax::Braces,
        Format::Cursor | Format::Vscode => Syntax::Editor,
        Format::Gemini => Syntax::Shell,
        Format::ClaudeDesktop | Format::Codex => Syntax::None,
    };
    let kind = server.kind.as_deref().map(str::to_ascii_lowercase);
    let skip = |out: &mut Imported, reason: String| {
        out.skipped.push(Skipped {
            name: name.to_string(),
            reason,
        })
    };
    // Which transport: Gemini's `url` is SSE and `httpUrl` Streamable HTTP;
    // elsewhere `type` says, and a bare `url` is Streamable HTTP.
    let url = match (format, &server.http_url, &server.url) {
        (Format::Gemini, Some(http), _) => Some(http.clone()),
        (Format::Gemini, None, Some(_)) if kind.as_deref() != Some("http") => {
            skip(out, "uses the SSE transport (Gemini's `url`), which mcp-harness does not speak (stdio and Streamable HTTP only)".into());
            return Ok(());
        }
        (_, _, url) => url.clone(),
    };
    match kind.as_deref() {
        None
        | Some("stdio" | "http" | "streamable-http" | "streamablehttp" | "local" | "remote") => {}
        Some("sse") => {
            skip(out, "uses the SSE transport, which mcp-harness does not speak (stdio and Streamable HTTP only)".into());
            return Ok(());
        }
        Some(other) => {
            skip(
                out,
                format!(
                    "uses the `{}` transport, which mcp-harness does not speak (stdio and Streamable HTTP only)",
                    crate::sanitize::inert_line(other, 40)
                ),
            );
            return Ok(());
        }
    }
    let alias = unique_alias(out, name);
    if let Some(file) = &server.env_file {
        out.notes.push(format!(
            "servers.{alias}: its env file {} was not read; set those variables in the environment mcp-harness runs in",
            crate::sanitize::inert_line(file, 200)
        ));
    }
    let mut s = Server {
        t: Translator {
            syntax,
            alias: &alias,
            workspace,
            inputs,
        },
        out,
    };
    let transport = match (server.command, url) {
        (Some(_), Some(_)) => {
            return Err("has both `command` and a URL: which one should mcp-harness use?".into());
        }
        (None, None) => {
            return Err(
                "has neither `command` (a stdio server) nor `url` (a Streamable HTTP server)"
                    .into(),
            );
        }
        (Some(command), None) => {
            if command.trim().is_empty() {
                return Err("`command` is empty".into());
            }
            let command = s.plain(&command, &format!("servers.{alias}.command"));
            let args = server
                .args
                .unwrap_or_default()
                .iter()
                .enumerate()
                .map(|(i, Scalar(a))| s.plain(a, &format!("servers.{alias}.args[{i}]")))
                .collect();
            let env = server
                .env
                .unwrap_or_default()
                .into_iter()
                .map(|(k, Scalar(v))| {
                    let t = s.t.env_value(&k, &v, &format!("servers.{alias}.env.{k}"));
                    (k, s.take(t))
                })
                .collect();
            let cwd = server
                .cwd
                .map(|c| s.plain(&c, &format!("servers.{alias}.cwd")));
            ImportedTransport::Stdio {
                command,
                args,
                env,
                cwd,
            }
        }
        (None, Some(url)) => {
            let url = s.plain(&url, &format!("servers.{alias}.url"));
            if !(url.starts_with("http://") || url.starts_with("https://") || url.starts_with("${"))
            {
                s.out.skipped.push(Skipped {
                    name: name.to_string(),
                    reason: "its URL is not http:// or https://".into(),
                });
                return Ok(());
            }
            let headers = server
                .headers
                .unwrap_or_default()
                .into_iter()
                .map(|(h, Scalar(v))| {
                    let t =
                        s.t.header_value(&h, &v, &format!("servers.{alias}.headers.{h}"));
                    (h, s.take(t))
                })
                .collect();
            ImportedTransport::Http { url, headers }
        }
    };
    out.servers.push(ImportedServer {
        source_name: name.to_string(),
        alias,
        transport,
        connect_timeout_ms: None,
        call_timeout_ms: server.timeout.filter(|t| *t > 0),
        disabled: server.disabled.unwrap_or(false),
        denied_tools: server.exclude_tools.unwrap_or_default(),
        only_tools: server.include_tools,
    });
    Ok(())
}

fn codex_server(out: &mut Imported, name: &str, server: CodexServer) -> Result<(), String> {
    let alias = unique_alias(out, name);
    let mut s = Server {
        t: Translator {
            syntax: Syntax::None,
            alias: &alias,
            workspace: None,
            inputs: &[],
        },
        out,
    };
    let transport = match (server.command, server.url) {
        (Some(_), Some(_)) => {
            return Err("has both `command` and `url`: which one should mcp-harness use?".into());
        }
        (None, None) => {
            return Err(
                "has neither `command` (a stdio server) nor `url` (a Streamable HTTP server)"
                    .into(),
            );
        }
        (Some(command), None) => {
            if command.trim().is_empty() {
                return Err("`command` is empty".into());
            }
            let command = s.plain(&command, &format!("servers.{alias}.command"));
            let args = server
                .args
                .unwrap_or_default()
                .iter()
                .enumerate()
                .map(|(i, a)| s.plain(a, &format!("servers.{alias}.args[{i}]")))
                .collect();
            let mut env: Vec<(String, String)> = server
                .env
                .unwrap_or_default()
                .into_iter()
                .map(|(k, v)| {
                    let t = s.t.env_value(&k, &v, &format!("servers.{alias}.env.{k}"));
                    (k, s.take(t))
                })
                .collect();
            // Passed through from Codex's own environment: from ours, by name.
            for var in server.env_vars.unwrap_or_default() {
                if !env.iter().any(|(k, _)| *k == var) {
                    env.push((var.clone(), format!("${{{var}}}")));
                }
            }
            let cwd = server
                .cwd
                .map(|c| s.plain(&c, &format!("servers.{alias}.cwd")));
            ImportedTransport::Stdio {
                command,
                args,
                env,
                cwd,
            }
        }
        (None, Some(url)) => {
            if !(url.starts_with("http://") || url.starts_with("https://")) {
                s.out.skipped.push(Skipped {
                    name: name.to_string(),
                    reason: "its URL is not http:// or https://".into(),
                });
                return Ok(());
            }
            let url = s.plain(&url, &format!("servers.{alias}.url"));
            let mut headers: Vec<(String, String)> = server
                .http_headers
                .unwrap_or_default()
                .into_iter()
                .map(|(h, v)| {
                    let t =
                        s.t.header_value(&h, &v, &format!("servers.{alias}.headers.{h}"));
                    (h, s.take(t))
                })
                .collect();
            for (h, var) in server.env_http_headers.unwrap_or_default() {
                headers.push((h, format!("${{{var}}}")));
            }
            if let Some(var) = server.bearer_token_env_var {
                headers.push(("Authorization".into(), format!("Bearer ${{{var}}}")));
            } else if server.bearer_token.is_some() {
                let var = variable_name(&alias, "bearer_token");
                s.out.variables.push(super::Variable {
                    name: var.clone(),
                    key: format!("servers.{alias}.headers.Authorization"),
                    why: "held a literal bearer token, not copied".into(),
                });
                headers.push(("Authorization".into(), format!("Bearer ${{{var}}}")));
            }
            ImportedTransport::Http { url, headers }
        }
    };
    let secs = |s: f64| (s.is_finite() && s > 0.0).then(|| (s * 1000.0).round() as u64);
    out.servers.push(ImportedServer {
        source_name: name.to_string(),
        alias,
        transport,
        connect_timeout_ms: server
            .startup_timeout_ms
            .filter(|t| *t > 0)
            .or_else(|| server.startup_timeout_sec.and_then(secs)),
        call_timeout_ms: server.tool_timeout_sec.and_then(secs),
        disabled: server.enabled == Some(false),
        denied_tools: server.disabled_tools.unwrap_or_default(),
        only_tools: server.enabled_tools,
    });
    Ok(())
}
