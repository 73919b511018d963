//! Writing a policy block into the operator's config file, keeping its comments
//! and layout (`toml_edit`). The one place the harness edits the config, and only
//! after the operator confirmed it.

use std::path::{Path, PathBuf};

use toml_edit::{DocumentMut, Item, Table, value};

use crate::mcp::{Effect, ServerAlias, ToolPolicy};

/// Why the config file was not edited: names the file and the table.
#[derive(Debug, thiserror::Error)]
pub enum EditError {
    #[error("cannot write a policy key for {name:?}: {error}")]
    KeyUnparsable {
        name: String,
        error: toml_edit::TomlError,
    },
    #[error("cannot write a policy key for {name:?}")]
    KeyMissing { name: String },
    #[error("cannot read {}: {error}", path.display())]
    Read {
        path: PathBuf,
        error: std::io::Error,
    },
    #[error("cannot parse {}: {error}", path.display())]
    Parse {
        path: PathBuf,
        error: toml_edit::TomlError,
    },
    #[error("{} has no [servers.{alias}] table to write into", path.display())]
    NoServerTable { path: PathBuf, alias: String },
    #[error("[servers.{alias}].tools in {} is not a table", path.display())]
    ToolsNotATable { path: PathBuf, alias: String },
    #[error("{} has no [servers.{alias}.tools] table to write into", path.display())]
    NoToolsTable { path: PathBuf, alias: String },
    #[error("builtin_tools in {} is not a table", path.display())]
    BuiltinsNotATable { path: PathBuf },
    #[error(
        "{} has no entry for `{tool}` under [servers.{alias}.tools]; write the policy (p) first",
        path.display()
    )]
    NoEntry {
        path: PathBuf,
        alias: String,
        tool: String,
    },
    #[error("cannot write {}: {error}", path.display())]
    Write {
        path: PathBuf,
        error: std::io::Error,
    },
    #[error("cannot replace {}: {error}", path.display())]
    Replace {
        path: PathBuf,
        error: std::io::Error,
    },
}

/// The file's text as a document.
fn open(path: &Path) -> Result<DocumentMut, EditError> {
    let text = std::fs::read_to_string(path).map_err(|error| EditError::Read {
        path: path.to_path_buf(),
        error,
    })?;
    text.parse().map_err(|error| EditError::Parse {
        path: path.to_path_buf(),
        error,
    })
}

/// The TOML key for a server-controlled tool name, written exactly as
/// `mcp-harness policy` prints it: bare when it can be, otherwise quoted with
/// every control character and bidi override as a `\uXXXX` escape — so the
/// file never holds a raw U+009B or U+202E that would act on a terminal
/// showing it. (Parsing that printed line keeps its spelling for the file.)
fn key_for(name: &str) -> Result<toml_edit::Key, EditError> {
    let line = ToolPolicy::block_for(&ServerAlias::new("x"), [name]);
    let doc: DocumentMut = line.parse().map_err(|error| EditError::KeyUnparsable {
        name: name.to_string(),
        error,
    })?;
    doc.get("servers")
        .and_then(|s| s.get("x"))
        .and_then(|s| s.get("tools"))
        .and_then(Item::as_table_like)
        .and_then(|t| t.get_key_value(name))
        .map(|(key, _)| key.clone())
        .ok_or_else(|| EditError::KeyMissing {
            name: name.to_string(),
        })
}

/// Makes `[servers.ALIAS.tools]` list exactly `published`: entries for tools
/// still published keep their effect, new ones get `confirm`, the rest go.
/// Returns the policy now in the file.
pub fn write_policy(
    path: &Path,
    alias: &str,
    published: &[String],
    current: &ToolPolicy,
) -> Result<ToolPolicy, EditError> {
    let mut doc = open(path)?;
    let server = doc
        .get_mut("servers")
        .and_then(Item::as_table_like_mut)
        .and_then(|servers| servers.get_mut(alias))
        .and_then(Item::as_table_like_mut)
        .ok_or_else(|| EditError::NoServerTable {
            path: path.to_path_buf(),
            alias: alias.to_string(),
        })?;
    if server.get("tools").is_none() {
        server.insert("tools", Item::Table(Table::new()));
    }
    let tools = server
        .get_mut("tools")
        .and_then(Item::as_table_like_mut)
        .ok_or_else(|| EditError::ToolsNotATable {
            path: path.to_path_buf(),
            alias: alias.to_string(),
        })?;
    let stale: Vec<String> = tools
        .iter()
        .map(|(k, _)| k.to_string())
        .filter(|k| !published.contains(k))
        .collect();
    for key in stale {
        tools.remove(&key);
    }
    let mut effects = std::collections::BTreeMap::new();
    for name in published {
        let effect = current.effect(name).unwrap_or(Effect::Confirm);
        if tools.get(name).is_none() {
            tools
                .entry_format(&key_for(name)?)
                .or_insert(value(effect.to_string()));
        }
        effects.insert(name.clone(), effect);
    }
    replace(path, &doc.to_string())?;
    Ok(ToolPolicy::new(effects))
}

/// Writes `TOOL = "EFFECT"` for one tool — `[servers.ALIAS.tools]` when
/// `alias` is given, `[builtin_tools]` otherwise — keeping comments, layout and
/// the entry's own trailing comment. An MCP tool's entry must already exist:
/// the policy lists exactly what the server publishes.
pub fn set_effect(
    path: &Path,
    alias: Option<&str>,
    tool: &str,
    effect: Effect,
) -> Result<(), EditError> {
    let mut doc = open(path)?;
    let table = match alias {
        Some(alias) => doc
            .get_mut("servers")
            .and_then(|s| s.get_mut(alias))
            .and_then(|s| s.get_mut("tools"))
            .and_then(Item::as_table_like_mut)
            .ok_or_else(|| EditError::NoToolsTable {
                path: path.to_path_buf(),
                alias: alias.to_string(),
            })?,
        None => {
            if doc.get("builtin_tools").is_none() {
                doc.insert("builtin_tools", Item::Table(Table::new()));
            }
            doc.get_mut("builtin_tools")
                .and_then(Item::as_table_like_mut)
                .ok_or_else(|| EditError::BuiltinsNotATable {
                    path: path.to_path_buf(),
                })?
        }
    };
    match table.get_mut(tool).and_then(Item::as_value_mut) {
        Some(existing) => {
            let decor = existing.decor().clone();
            *existing = toml_edit::Value::from(effect.to_string());
            *existing.decor_mut() = decor;
        }
        None if alias.is_some() => {
            return Err(EditError::NoEntry {
                path: path.to_path_buf(),
                alias: alias.unwrap_or_default().to_string(),
                tool: tool.to_string(),
            });
        }
        None => {
            table
                .entry_format(&key_for(tool)?)
                .or_insert(value(effect.to_string()));
        }
    }
    replace(path, &doc.to_string())
}

/// Writes next to the file, then renames: a crash never leaves half a config.
fn replace(path: &Path, text: &str) -> Result<(), EditError> {
    let temp = path.with_extension("toml.mcp-harness-tmp");
    std::fs::write(&temp, text).map_err(|error| EditError::Write {
        path: temp.clone(),
        error,
    })?;
    std::fs::rename(&temp, path).map_err(|error| EditError::Replace {
        path: path.to_path_buf(),
        error,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_comments_and_effects_adds_confirm_and_drops_the_rest() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.toml");
        let before = "# my servers\n[servers.s]\ncommand = \"x\" # the binary\n\n[servers.s.tools]\nlookup = \"allow\" # fine\ngone = \"deny\"\n";
        std::fs::write(&path, before).unwrap();
        let current = ToolPolicy::new(
            [
                ("lookup".to_string(), Effect::Allow),
                ("gone".to_string(), Effect::Deny),
            ]
            .into(),
        );
        let published = vec!["lookup".to_string(), "files/read".to_string()];
        let policy = write_policy(&path, "s", &published, &current).unwrap();
        let after = std::fs::read_to_string(&path).unwrap();
        assert!(after.starts_with("# my servers\n"), "{after}");
        assert!(after.contains("command = \"x\" # the binary"), "{after}");
        assert!(after.contains("lookup = \"allow\" # fine"), "{after}");
        assert!(after.contains("\"files/read\" = \"confirm\""), "{after}");
        assert!(!after.contains("gone"), "{after}");
        assert_eq!(policy.effect("files/read"), Some(Effect::Confirm));
        let config = super::super::parse(&after, super::super::ConfigSource::Embedded).unwrap();
        assert_eq!(config.servers[0].policy, policy);
    }

    #[test]
    fn hostile_names_are_written_as_escapes_and_read_back_exactly() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.toml");
        std::fs::write(&path, "[servers.s]\ncommand = \"x\"\n").unwrap();
        let hostile = "csi\u{9b}31m-\u{202e}evil\"q".to_string();
        let published = vec![hostile.clone(), "plain".to_string()];
        let policy = write_policy(&path, "s", &published, &ToolPolicy::default()).unwrap();
        let after = std::fs::read_to_string(&path).unwrap();
        assert!(
            !after.contains('\u{9b}') && !after.contains('\u{202e}'),
            "{after:?}"
        );
        assert!(
            after.contains("\"csi\\u009B31m-\\u202Eevil\\\"q\" = \"confirm\""),
            "{after}"
        );
        let config = super::super::parse(&after, super::super::ConfigSource::Embedded).unwrap();
        assert_eq!(config.servers[0].policy, policy);
        assert_eq!(policy.effect(&hostile), Some(Effect::Confirm));
    }

    #[test]
    fn a_server_without_a_tools_table_gets_one() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.toml");
        std::fs::write(&path, "[servers.s]\ncommand = \"x\"\n").unwrap();
        write_policy(&path, "s", &["a".to_string()], &ToolPolicy::default()).unwrap();
        let after = std::fs::read_to_string(&path).unwrap();
        assert!(
            after.contains("[servers.s.tools]\na = \"confirm\""),
            "{after}"
        );
    }

    #[test]
    fn one_effect_is_set_in_place_keeping_its_comment() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.toml");
        let before = "[servers.s]\ncommand = \"x\"\n\n[servers.s.tools]\nlookup = \"confirm\" # ask me\nset = \"confirm\"\n";
        std::fs::write(&path, before).unwrap();
        set_effect(&path, Some("s"), "lookup", Effect::Allow).unwrap();
        let after = std::fs::read_to_string(&path).unwrap();
        assert!(after.contains("lookup = \"allow\" # ask me\n"), "{after}");
        assert!(after.contains("set = \"confirm\""), "{after}");
        assert!(set_effect(&path, Some("s"), "missing", Effect::Allow).is_err());
        set_effect(&path, None, "read_file", Effect::Allow).unwrap();
        let after = std::fs::read_to_string(&path).unwrap();
        assert!(
            after.contains("[builtin_tools]\nread_file = \"allow\""),
            "{after}"
        );
        super::super::parse(&after, super::super::ConfigSource::Embedded).unwrap();
    }
}
