//! The text of `mcp-harness.lock`: TOML, one table per pinned tool,
//! `[servers.ALIAS.tools."REMOTE_NAME"]` with `sha256` and `definition`.
//!
//! The file is the harness's to write (like `Cargo.lock`): it is always
//! rendered whole, sorted, from what was read plus the change, so entries of
//! other aliases and tools are kept. Nothing in it can act on a terminal that
//! shows it: control, bidi and invisible characters in names and definitions
//! are written as `\uXXXX` escapes, which TOML reads back exactly.

use std::collections::BTreeMap;

use serde::Deserialize;

use super::{Pin, PinHash};

/// The format version this harness reads and writes.
pub const VERSION: u32 = 1;

/// Every alias's pins: alias (as configured) → remote tool name → pin.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Lock {
    pub servers: BTreeMap<String, AliasPins>,
}

/// One alias's pins, by remote tool name (as published).
pub type AliasPins = BTreeMap<String, Pin>;

impl Lock {
    pub fn alias(&self, alias: &str) -> Option<&AliasPins> {
        self.servers.get(alias)
    }
}

const HEADER: &str = "\
# Pinned tool definitions (mcp-harness, rule 14: what the operator approved is what runs).
# Written by mcp-harness; keep it beside the config file. Each `definition` is a tool's
# definition as its server published it, in RFC 8785 canonical JSON; `sha256` is the
# SHA-256 of that text. A server whose tools differ from their pins is refused:
# review the change with `mcp-harness check`, accept it with `mcp-harness pin ALIAS`.
";

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawLock {
    version: Option<u32>,
    #[serde(default)]
    servers: BTreeMap<String, RawServer>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawServer {
    #[serde(default)]
    tools: BTreeMap<String, RawPin>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawPin {
    sha256: String,
    definition: String,
}

/// Why lock text is not a lock: names the key path and the line.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LockError {
    /// Not TOML (the message ends with the line).
    #[error("{0}")]
    Syntax(String),
    #[error("at `{path}`: {problem}")]
    At { path: String, problem: String },
    #[error(
        "format version {0} is not one this harness reads (it reads version {VERSION}); \
         was it written by a newer mcp-harness?"
    )]
    Version(u32),
    #[error("at `servers.{alias}.tools.{tool:?}.sha256`: not a SHA-256 (64 lowercase hex digits)")]
    NotASha256 { alias: String, tool: String },
}

/// Reads lock text. The error names the key path and the line.
pub fn parse(text: &str) -> Result<Lock, LockError> {
    let de = toml::Deserializer::parse(text).map_err(|e| LockError::Syntax(located(text, &e)))?;
    let raw: RawLock = serde_path_to_error::deserialize(de).map_err(|e| LockError::At {
        path: e.path().to_string(),
        problem: located(text, e.inner()),
    })?;
    match raw.version {
        Some(VERSION) | None => {}
        Some(other) => return Err(LockError::Version(other)),
    }
    let mut servers = BTreeMap::new();
    for (alias, server) in raw.servers {
        let mut pins = AliasPins::new();
        for (tool, pin) in server.tools {
            let sha256 = PinHash::parse(&pin.sha256).ok_or_else(|| LockError::NotASha256 {
                alias: alias.clone(),
                tool: tool.clone(),
            })?;
            pins.insert(
                tool,
                Pin {
                    sha256,
                    definition: pin.definition,
                },
            );
        }
        servers.insert(alias, pins);
    }
    Ok(Lock { servers })
}

/// The whole file for `lock`, sorted by alias and tool.
pub fn render(lock: &Lock) -> String {
    let mut out = String::with_capacity(
        256 + lock
            .servers
            .values()
            .flat_map(|p| p.values())
            .map(|p| p.definition.len() + 160)
            .sum::<usize>(),
    );
    out.push_str(HEADER);
    out.push_str(&format!("version = {VERSION}\n"));
    for (alias, pins) in &lock.servers {
        for (tool, pin) in pins {
            out.push_str(&format!(
                "\n[servers.{}.tools.{}]\nsha256 = \"{}\"\ndefinition = {}\n",
                key(alias),
                key(tool),
                pin.sha256,
                string(&pin.definition)
            ));
        }
    }
    out
}

/// A key: bare when it can be, else a basic string with escapes.
fn key(name: &str) -> String {
    let bare = !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if bare {
        name.to_string()
    } else {
        escaped(name)
    }
}

/// A string value: TOML's own most readable form (usually a literal string)
/// when nothing in it needs an escape, else a basic string with escapes.
fn string(text: &str) -> String {
    if text.chars().any(needs_escape) {
        escaped(text)
    } else {
        toml::Value::String(text.to_string()).to_string()
    }
}

fn needs_escape(c: char) -> bool {
    c.is_control() || crate::sanitize::is_dangerous(c) || crate::sanitize::hidden::is_invisible(c)
}

fn escaped(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if needs_escape(c) && (c as u32) <= 0xffff => {
                out.push_str(&format!("\\u{:04X}", c as u32));
            }
            c if needs_escape(c) => out.push_str(&format!("\\U{:08X}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// The TOML error's message plus the line it points at.
fn located(text: &str, error: &toml::de::Error) -> String {
    let message = error.message().trim().to_string();
    match error.span() {
        Some(span) => {
            let line = text[..span.start.min(text.len())].matches('\n').count() + 1;
            format!("{message} (line {line})")
        }
        None => message,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pin(definition: &str) -> Pin {
        Pin {
            sha256: super::super::canonical::hash(definition.as_bytes()),
            definition: definition.into(),
        }
    }

    fn lock(entries: &[(&str, &str, &str)]) -> Lock {
        let mut lock = Lock::default();
        for (alias, tool, definition) in entries {
            lock.servers
                .entry(alias.to_string())
                .or_default()
                .insert(tool.to_string(), pin(definition));
        }
        lock
    }

    #[test]
    fn renders_readable_toml_that_reads_back_exactly() {
        let lock = lock(&[
            (
                "demo_alpha",
                "lookup",
                r#"{"inputSchema":{"type":"object"},"name":"lookup"}"#,
            ),
            (
                "demo_alpha",
                "files/read",
                r#"{"description":"it's \"quoted\"","name":"files/read"}"#,
            ),
            ("my.server", "x", r#"{"name":"x"}"#),
        ]);
        let text = render(&lock);
        assert!(text.starts_with("# Pinned tool definitions"), "{text}");
        assert!(text.contains("version = 1\n"), "{text}");
        assert!(
            text.contains("[servers.demo_alpha.tools.lookup]\nsha256 = \"",),
            "{text}"
        );
        assert!(
            text.contains(r#"definition = '{"inputSchema":{"type":"object"},"name":"lookup"}'"#),
            "{text}"
        );
        assert!(text.contains("[servers.\"my.server\".tools.x]"), "{text}");
        assert_eq!(parse(&text).unwrap(), lock);
    }

    #[test]
    fn hostile_names_and_definitions_are_escaped_and_read_back_exactly() {
        let name = "evil\u{9b}31m\u{202e}\u{e0041}\"]\n[x";
        let definition =
            "{\"description\":\"a\u{200b}\u{e0049}\u{9b}\u{202e}\u{1b}\",\"name\":\"n\"}";
        let lock = lock(&[("s", name, definition)]);
        let text = render(&lock);
        assert!(
            !text.chars().any(|c| c != '\n' && needs_escape(c)),
            "{text:?}"
        );
        assert!(text.contains("\\U000E0049"), "{text}");
        assert_eq!(parse(&text).unwrap(), lock);
    }

    #[test]
    fn errors_name_the_key_and_line() {
        let e = parse("version = 1\n[servers.a.tools.b]\nsha256 = \"abc\"\ndefinition = \"{}\"\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("servers.a.tools.\"b\".sha256"), "{e}");
        let e = parse("version = 1\n[servers.a.tools.b]\nsha256 = 1\n")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("servers.a.tools.b.sha256") && e.contains("line 3"),
            "{e}"
        );
        let e = parse("version = 2\n").unwrap_err().to_string();
        assert!(e.contains("newer mcp-harness"), "{e}");
        let e = parse("[servers.a]\npin = \"x\"\n").unwrap_err().to_string();
        assert!(e.contains("servers.a.pin"), "{e}");
        assert_eq!(parse("").unwrap(), Lock::default());
    }
}
