//! The properties the fuzz targets in `fuzz/` check, kept here so that the
//! normal test suite (stable toolchain) replays the seed inputs through the very
//! same checks: a target that stops compiling or a property that stops holding
//! shows up in `cargo test`, not only when someone runs nightly `cargo fuzz`.
//!
//! Each check returns the broken property instead of panicking; the fuzz targets
//! and the seed-replay test turn an `Err` into a panic.

use std::collections::BTreeSet;

use serde_json::Value;

use crate::config::{self, ConfigSource};
use crate::mcp::ServerAlias;
use crate::mcp::names::{EXPOSED_PREFIX, exposed_name, normalize, quote};
use crate::mcp::published::{Position, PublishedTool};
use crate::mcp::schema::{SchemaProblem, compile, screen, validate};
use crate::sanitize::hidden::{has_hidden, is_invisible};
use crate::sanitize::json::{to_line, to_log_line};
use crate::sanitize::{for_model, inert, inert_line, is_dangerous};

/// A property that did not hold for some input.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct Violation(String);

fn ensure(ok: bool, what: impl FnOnce() -> String) -> Result<(), Violation> {
    if ok { Ok(()) } else { Err(Violation(what())) }
}

/// Separates the two strings of a `names` input. 0xFF never occurs in UTF-8, so
/// it cannot be part of either name.
pub const NAMES_SEPARATOR: u8 = 0xFF;

/// Config parsing: any text gives a config or an error with a message, never a
/// panic; every alias is non-empty and distinct once normalized.
pub fn config_parse(data: &[u8]) -> Result<(), Violation> {
    let Ok(text) = std::str::from_utf8(data) else {
        return Ok(());
    };
    match config::parse(text, ConfigSource::File("fuzz.toml".into())) {
        Ok(config) => {
            let mut seen = BTreeSet::new();
            for server in &config.servers {
                let alias = server.alias.as_str();
                ensure(!alias.trim().is_empty(), || "an empty alias".into())?;
                ensure(seen.insert(normalize(alias)), || {
                    format!("alias {alias:?} collides with another after normalization")
                })?;
            }
        }
        Err(error) => {
            let _ = error.to_string();
        }
    }
    Ok(())
}

/// Name normalization on `alias 0xFF tool` (each decoded lossily, so every input
/// exercises the code): only `[A-Za-z0-9_]` comes out, one character per input
/// character, idempotent; exposed names carry the prefix; quoted names are inert
/// and bounded.
pub fn names(data: &[u8]) -> Result<(), Violation> {
    let (alias, tool) = match data.iter().position(|b| *b == NAMES_SEPARATOR) {
        Some(i) => (&data[..i], &data[i + 1..]),
        None => (&b"a"[..], data),
    };
    let (alias, tool) = (
        String::from_utf8_lossy(alias),
        String::from_utf8_lossy(tool),
    );
    let plain = |s: &str| s.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
    let normalized = normalize(&tool);
    ensure(plain(&normalized), || {
        format!("normalize({tool:?}) = {normalized:?}")
    })?;
    ensure(normalized.len() == tool.chars().count(), || {
        format!("normalize({tool:?}) changed the length: {normalized:?}")
    })?;
    ensure(normalize(&normalized) == normalized, || {
        format!("normalize is not idempotent on {normalized:?}")
    })?;
    let name = exposed_name(&ServerAlias::new(alias.as_ref()), &tool);
    ensure(name.starts_with(EXPOSED_PREFIX) && plain(&name), || {
        format!("exposed name {name:?} for ({alias:?}, {tool:?})")
    })?;
    let quoted = quote(&tool);
    ensure(
        !quoted.chars().any(|c| c.is_control() || is_dangerous(c)),
        || format!("quote({tool:?}) = {quoted:?} is not inert"),
    )?;
    let length = quoted.chars().count();
    ensure(length <= 82, || {
        format!("quote({tool:?}) is {length} characters")
    })
}

/// Schema screening and strict compilation of an untrusted `inputSchema` (first
/// line) with arguments (the rest): refused with a reason or compiled offline,
/// `compile` refuses whatever `screen` refuses, validation is total, and the
/// schema inside a published tool definition never panics.
pub fn schema_screen(data: &[u8]) -> Result<(), Violation> {
    let (schema_bytes, args_bytes) = match data.iter().position(|b| *b == b'\n') {
        Some(i) => (&data[..i], &data[i + 1..]),
        None => (data, &b"{}"[..]),
    };
    let Ok(schema) = serde_json::from_slice::<Value>(schema_bytes) else {
        return Ok(());
    };
    let screened = screen(&schema);
    let compiled = compile(&schema);
    if let Err(SchemaProblem::ExternalRef(_) | SchemaProblem::NotObject(_)) = &screened {
        ensure(compiled.is_err(), || {
            format!("compile accepted what screen refused ({screened:?}): {schema}")
        })?;
    }
    if let Ok(validator) = compiled {
        let args = serde_json::from_slice::<Value>(args_bytes).unwrap_or(Value::Null);
        for error in validate(&validator, &args) {
            let _ = (error.instance_path, error.message);
        }
    }
    let tool = serde_json::json!({"name": "t", "inputSchema": schema});
    let _ = PublishedTool::from_json(&tool, Position { page: 1, index: 0 });
    Ok(())
}

/// The sanitizer on any text (lossily decoded): nothing a terminal acts on and
/// nothing invisible survives `inert`, `inert_line` is one bounded line, model
/// text has no invisible code point at all, a `--json` line is terminal-safe
/// and shows invisible characters, and a log line reads back to the same text.
pub fn sanitize(data: &[u8]) -> Result<(), Violation> {
    let text = String::from_utf8_lossy(data);
    let text = text.as_ref();
    let kept = inert(text, true);
    ensure(
        !kept
            .chars()
            .any(|c| (c.is_control() && c != '\n' && c != '\t') || is_dangerous(c))
            && !has_hidden(&kept),
        || format!("inert({text:?}, true) = {kept:?}"),
    )?;
    let flat = inert(text, false);
    ensure(
        !flat.chars().any(|c| c.is_control() || is_dangerous(c)) && !has_hidden(&flat),
        || format!("inert({text:?}, false) = {flat:?}"),
    )?;
    let line = inert_line(text, 40);
    ensure(line.chars().count() <= 40 && !line.contains('\n'), || {
        format!("inert_line({text:?}, 40) = {line:?}")
    })?;
    let model = for_model(text);
    ensure(!model.chars().any(is_invisible), || {
        format!("for_model({text:?}) = {model:?}")
    })?;
    let json = to_line(&serde_json::json!({ "t": text }));
    ensure(
        !json.chars().any(|c| c.is_control() || is_dangerous(c)) && !has_hidden(&json),
        || format!("to_line leaves raw controls or invisible characters: {json:?}"),
    )?;
    serde_json::from_str::<Value>(&json)
        .map_err(|e| Violation(format!("to_line is not JSON ({e}): {json:?}")))?;
    let log = to_log_line(&serde_json::json!({ "t": text }));
    ensure(
        !log.chars().any(|c| c.is_control() || is_dangerous(c)) && !has_hidden(&log),
        || format!("to_log_line leaves raw controls or invisible characters: {log:?}"),
    )?;
    let back: Value = serde_json::from_str(&log)
        .map_err(|e| Violation(format!("to_log_line is not JSON ({e}): {log:?}")))?;
    ensure(back["t"].as_str() == Some(text), || {
        format!("to_log_line lost text: {log:?}")
    })
}
