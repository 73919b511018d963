//! One server entry of a source file → an `ImportedServer`: the alias, the
//! transport, variables in the source's syntax, timeouts and tool filters.

use std::path::Path;

use super::formats::{CodexServer, JsonServer, Scalar};
use super::values::{Syntax, Translated, Translator, variable_name};
use super::{Format, Imported, ImportedServer, ImportedTransport, Skipped};
use crate::mcp::names::normalize;

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

    /// A stdio server's `args`, each translated under its own key.
    fn args<'s>(&mut self, alias: &str, args: impl IntoIterator<Item = &'s str>) -> Vec<String> {
        args.into_iter()
            .enumerate()
            .map(|(i, a)| self.plain(a, &format!("servers.{alias}.args[{i}]")))
            .collect()
    }

    /// A stdio server's `env`: secrets become `${VAR}` references.
    fn env(
        &mut self,
        alias: &str,
        env: impl IntoIterator<Item = (String, String)>,
    ) -> Vec<(String, String)> {
        env.into_iter()
            .map(|(k, v)| {
                let key = format!("servers.{alias}.env.{k}");
                if self.out.copy_env.contains(&k) {
                    if looks_secret(&k) {
                        self.out.notes.push(format!(
                            "{key}: not copied although --copy-env asked: its name looks like a secret"
                        ));
                    } else {
                        // The operator vouches for it: the literal, `$` escaped.
                        let value = self.plain(&v, &key);
                        self.out.copied.push(key);
                        return (k, value);
                    }
                }
                let t = self.t.env_value(&k, &v, &key);
                (k, self.take(t))
            })
            .collect()
    }

    /// An HTTP server's headers: secrets become `${ALIAS_HEADERNAME}` references.
    fn headers(
        &mut self,
        alias: &str,
        headers: impl IntoIterator<Item = (String, String)>,
    ) -> Vec<(String, String)> {
        headers
            .into_iter()
            .map(|(h, v)| {
                let t = self
                    .t
                    .header_value(&h, &v, &format!("servers.{alias}.headers.{h}"));
                (h, self.take(t))
            })
            .collect()
    }
}

/// The transport a source entry names: a command or a URL, never both.
enum Named {
    Command(String),
    Url(String),
}

/// Why a source entry names no transport mcp-harness can take (the import
/// stops there, naming the entry).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(super) enum EntryError {
    /// `url_word`: how the source calls its URL.
    #[error("has both `command` and {url_word}: which one should mcp-harness use?")]
    Both { url_word: &'static str },
    #[error("has neither `command` (a stdio server) nor `url` (a Streamable HTTP server)")]
    Neither,
    #[error("`command` is empty")]
    EmptyCommand,
}

/// `url_word`: how the source calls its URL, for the message.
fn named(
    command: Option<String>,
    url: Option<String>,
    url_word: &'static str,
) -> Result<Named, EntryError> {
    match (command, url) {
        (Some(_), Some(_)) => Err(EntryError::Both { url_word }),
        (None, None) => Err(EntryError::Neither),
        (Some(command), None) if command.trim().is_empty() => Err(EntryError::EmptyCommand),
        (Some(command), None) => Ok(Named::Command(command)),
        (None, Some(url)) => Ok(Named::Url(url)),
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

pub(super) fn json_server(
    out: &mut Imported,
    name: &str,
    server: JsonServer,
    inputs: &[(String, String)],
    workspace: Option<&Path>,
) -> Result<(), EntryError> {
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
    let transport = match named(server.command, url, "a URL")? {
        Named::Command(command) => {
            let command = s.plain(&command, &format!("servers.{alias}.command"));
            let args = server.args.unwrap_or_default();
            let args = s.args(&alias, args.iter().map(|Scalar(a)| a.as_str()));
            let env = server.env.unwrap_or_default().into_iter();
            let env = s.env(&alias, env.map(|(k, Scalar(v))| (k, v)));
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
        Named::Url(url) => {
            let url = s.plain(&url, &format!("servers.{alias}.url"));
            if !(url.starts_with("http://") || url.starts_with("https://") || url.starts_with("${"))
            {
                s.out.skipped.push(Skipped {
                    name: name.to_string(),
                    reason: "its URL is not http:// or https://".into(),
                });
                return Ok(());
            }
            let headers = server.headers.unwrap_or_default().into_iter();
            let headers = s.headers(&alias, headers.map(|(h, Scalar(v))| (h, v)));
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

pub(super) fn codex_server(
    out: &mut Imported,
    name: &str,
    server: CodexServer,
) -> Result<(), EntryError> {
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
    let transport = match named(server.command, server.url, "`url`")? {
        Named::Command(command) => {
            let command = s.plain(&command, &format!("servers.{alias}.command"));
            let args = server.args.unwrap_or_default();
            let args = s.args(&alias, args.iter().map(String::as_str));
            let mut env = s.env(&alias, server.env.unwrap_or_default());
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
        Named::Url(url) => {
            if !(url.starts_with("http://") || url.starts_with("https://")) {
                s.out.skipped.push(Skipped {
                    name: name.to_string(),
                    reason: "its URL is not http:// or https://".into(),
                });
                return Ok(());
            }
            let url = s.plain(&url, &format!("servers.{alias}.url"));
            let mut headers = s.headers(&alias, server.http_headers.unwrap_or_default());
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

/// A variable name that says it holds a secret: never copied, whatever the
/// operator asked.
fn looks_secret(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    [
        "TOKEN",
        "SECRET",
        "PASSWORD",
        "PASSWD",
        "KEY",
        "AUTH",
        "CREDENTIAL",
        "COOKIE",
        "SESSION",
    ]
    .iter()
    .any(|word| upper.contains(word))
}
