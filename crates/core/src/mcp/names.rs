//! Names (SPEC rule 3): the local alias, normalization and the exposed name
//! `mcp__{alias}__{tool}`.

use std::fmt;
use std::sync::Arc;

/// Longest exposed name the model APIs accept.
pub const MAX_EXPOSED_NAME_LEN: usize = 64;

/// Every exposed MCP tool name starts with this, so it can never shadow a built-in.
pub const EXPOSED_PREFIX: &str = "mcp__";

/// The stable local name that stands for a server in the local allowlist (config).
///
/// Trusted: it comes from the operator's config, never from a server.
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ServerAlias(Arc<str>);

impl ServerAlias {
    pub fn new(alias: impl Into<Arc<str>>) -> Self {
        Self(alias.into())
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The alias as it appears inside exposed names.
    pub fn normalized(&self) -> String {
        normalize(&self.0)
    }
}

impl fmt::Display for ServerAlias {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl fmt::Debug for ServerAlias {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}", &*self.0)
    }
}

/// Every character outside `[A-Za-z0-9_]` becomes `_` (one `_` per character, so
/// `déjà` becomes `d_j_`). This follows seed 002, stricter than seed 000's example.
pub fn normalize(raw: &str) -> String {
    raw.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// The name the model sees for `tool` of the server behind `alias`.
pub fn exposed_name(alias: &ServerAlias, remote_tool: &str) -> String {
    format!(
        "{EXPOSED_PREFIX}{}__{}",
        alias.normalized(),
        normalize(remote_tool)
    )
}

/// Quotes a server-controlled name for a locally built message: inert, one line,
/// bounded, in backticks. Used wherever a remote name appears inside our own text.
pub fn quote(remote: &str) -> String {
    format!("`{}`", crate::sanitize::inert_line(remote, 80))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalizes_every_non_word_character() {
        assert_eq!(normalize("lookup-one"), "lookup_one");
        assert_eq!(normalize("files/read.all"), "files_read_all");
        assert_eq!(normalize("get value"), "get_value");
        assert_eq!(normalize("déjà-vu"), "d_j__vu");
        assert_eq!(normalize("already_fine_09"), "already_fine_09");
    }

    #[test]
    fn exposed_name_uses_normalized_alias_and_tool() {
        let alias = ServerAlias::new("file-system");
        assert_eq!(
            exposed_name(&alias, "read.file"),
            "mcp__file_system__read_file"
        );
    }

    #[test]
    fn quote_neutralizes_hostile_names() {
        assert_eq!(quote("a\x1b[2Jb"), "`a^[[2Jb`");
    }
}
