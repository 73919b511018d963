//! Imported servers → `[servers.ALIAS]` tables in the operator's config file,
//! with `toml_edit` (the file's comments and layout stay), all or nothing: an
//! alias that exists already stops the import unless `force`, and the new text
//! must load as a config before it replaces the old one.

use std::path::{Path, PathBuf};

use toml_edit::{Array, DocumentMut, InlineTable, Item, Table, value};

use super::{Imported, ImportedServer, ImportedTransport};
use crate::config::{ConfigSource, parse};
use crate::mcp::names::normalize;

/// An imported alias that the config already has (compared as exposed names
/// see them: `a-b` and `a_b` are the same alias).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Conflict {
    pub alias: String,
    pub existing: String,
}

/// Why nothing was written.
#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    #[error("{} already has {}", .file.display(), describe(.conflicts))]
    Conflicts {
        file: PathBuf,
        conflicts: Vec<Conflict>,
    },
    #[error("{0}")]
    Config(String),
    #[error("{0}")]
    Io(String),
}

fn describe(conflicts: &[Conflict]) -> String {
    conflicts
        .iter()
        .map(|c| {
            if c.alias == c.existing {
                format!("[servers.{}]", c.existing)
            } else {
                format!("[servers.{}] (the same alias as `{}`)", c.existing, c.alias)
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// What was written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Written {
    pub file: PathBuf,
    /// The file did not exist before.
    pub created: bool,
    pub added: Vec<String>,
    /// Aliases replaced under `force` (their old tables, policy included, are gone).
    pub replaced: Vec<String>,
}

/// Writes every imported server into `file` (created if missing), or nothing.
pub fn write_servers(file: &Path, imported: &Imported, force: bool) -> Result<Written, WriteError> {
    let (text, created) = match std::fs::read_to_string(file) {
        Ok(text) => (text, false),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => (String::new(), true),
        Err(e) => {
            return Err(WriteError::Io(format!(
                "cannot read {}: {e}",
                file.display()
            )));
        }
    };
    let mut doc: DocumentMut = text.parse().map_err(|e: toml_edit::TomlError| {
        WriteError::Config(format!(
            "{} is not valid TOML, so nothing was imported into it: {}",
            file.display(),
            e.to_string().trim()
        ))
    })?;
    let existing: Vec<String> = doc
        .get("servers")
        .and_then(Item::as_table_like)
        .map(|t| t.iter().map(|(k, _)| k.to_string()).collect())
        .unwrap_or_default();
    let conflicts: Vec<Conflict> = imported
        .servers
        .iter()
        .filter_map(|s| {
            existing
                .iter()
                .find(|e| normalize(e) == normalize(&s.alias))
                .map(|e| Conflict {
                    alias: s.alias.clone(),
                    existing: e.clone(),
                })
        })
        .collect();
    if !conflicts.is_empty() && !force {
        return Err(WriteError::Conflicts {
            file: file.to_path_buf(),
            conflicts,
        });
    }
    let mut next = last_position(&doc);
    if doc.get("servers").is_none() {
        let mut servers = Table::new();
        servers.set_implicit(true);
        doc.insert("servers", Item::Table(servers));
    }
    let servers = doc
        .get_mut("servers")
        .and_then(Item::as_table_like_mut)
        .ok_or_else(|| {
            WriteError::Config(format!("`servers` in {} is not a table", file.display()))
        })?;
    // A replaced table keeps its place and its leading comments (often the
    // file's own header); new ones go after everything else.
    let mut kept = std::collections::HashMap::new();
    for c in &conflicts {
        if let Some(Item::Table(old)) = servers.remove(&c.existing) {
            let prefix = old
                .decor()
                .prefix()
                .and_then(|p| p.as_str())
                .unwrap_or_default();
            let prefix = prefix.trim_end_matches('\n').to_string();
            kept.insert(normalize(&c.alias), (prefix, old.position()));
        }
    }
    let Some(servers) = doc.get_mut("servers").and_then(Item::as_table_like_mut) else {
        return Err(WriteError::Config(format!(
            "`servers` in {} is not a table",
            file.display()
        )));
    };
    for server in &imported.servers {
        let mut new = table(server, imported);
        match kept.get(&server.alias) {
            Some((prefix, position)) => {
                if !prefix.trim().is_empty() {
                    let ours = new
                        .decor()
                        .prefix()
                        .and_then(|p| p.as_str())
                        .unwrap_or_default()
                        .to_string();
                    new.decor_mut().set_prefix(format!("{prefix}\n{ours}"));
                }
                new.set_position(*position);
            }
            None => {
                next += 1;
                new.set_position(Some(next));
            }
        }
        servers.insert(&server.alias, Item::Table(new));
    }
    let new_text = doc.to_string();
    // The harness must be able to load what it writes; if not, keep the old file.
    parse(&new_text, ConfigSource::File(file.to_path_buf())).map_err(|e| {
        WriteError::Config(format!(
            "the imported servers would make an invalid config ({e}); nothing was written"
        ))
    })?;
    replace_file(file, &new_text)?;
    Ok(Written {
        file: file.to_path_buf(),
        created,
        added: imported.servers.iter().map(|s| s.alias.clone()).collect(),
        replaced: conflicts.into_iter().map(|c| c.existing).collect(),
    })
}

/// The highest table position in the document (tables print in this order).
fn last_position(doc: &DocumentMut) -> isize {
    fn walk(table: &Table, max: &mut isize) {
        if let Some(p) = table.position() {
            *max = (*max).max(p);
        }
        for (_, item) in table.iter() {
            if let Item::Table(t) = item {
                walk(t, max);
            }
        }
    }
    let mut max = 0;
    walk(doc.as_table(), &mut max);
    max
}

fn table(server: &ImportedServer, imported: &Imported) -> Table {
    let mut t = Table::new();
    let source = imported
        .path
        .display()
        .to_string()
        .replace(['\n', '\r'], " ");
    let mut comment = format!("\n# imported from {source} ({})", imported.format);
    if server.source_name != server.alias {
        comment.push_str(&format!(
            ", where it is named {}",
            crate::sanitize::inert_line(&server.source_name, 80)
        ));
    }
    if server.disabled {
        comment.push_str("; it is disabled there");
    }
    comment.push('\n');
    t.decor_mut().set_prefix(comment);
    let pairs = |pairs: &[(String, String)]| {
        let mut inline = InlineTable::new();
        for (k, v) in pairs {
            inline.insert(k, v.as_str().into());
        }
        inline
    };
    match &server.transport {
        ImportedTransport::Stdio {
            command,
            args,
            env,
            cwd,
        } => {
            t.insert("command", value(command.as_str()));
            if !args.is_empty() {
                t.insert(
                    "args",
                    value(args.iter().map(String::as_str).collect::<Array>()),
                );
            }
            if !env.is_empty() {
                t.insert("env", value(pairs(env)));
            }
            if let Some(cwd) = cwd {
                t.insert("cwd", value(cwd.as_str()));
            }
        }
        ImportedTransport::Http { url, headers } => {
            t.insert("url", value(url.as_str()));
            if !headers.is_empty() {
                t.insert("headers", value(pairs(headers)));
            }
        }
    }
    let ms = |v: u64| value(i64::try_from(v).unwrap_or(i64::MAX));
    if let Some(v) = server.connect_timeout_ms {
        t.insert("connect_timeout_ms", ms(v));
    }
    if let Some(v) = server.call_timeout_ms {
        t.insert("call_timeout_ms", ms(v));
    }
    t
}

/// Writes beside the file, then renames: a crash never leaves half a config.
pub fn replace_file(file: &Path, text: &str) -> Result<(), WriteError> {
    let io = |what: &str, path: &Path, e: std::io::Error| {
        WriteError::Io(format!("cannot {what} {}: {e}", path.display()))
    };
    if let Some(dir) = file.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|e| io("create", dir, e))?;
    }
    let temp = file.with_extension("toml.mcp-harness-tmp");
    if let Err(e) = std::fs::write(&temp, text) {
        let _ = std::fs::remove_file(&temp);
        return Err(io("write", &temp, e));
    }
    if let Ok(meta) = std::fs::metadata(file) {
        let _ = std::fs::set_permissions(&temp, meta.permissions());
    }
    std::fs::rename(&temp, file).map_err(|e| {
        let _ = std::fs::remove_file(&temp);
        io("replace", file, e)
    })
}
