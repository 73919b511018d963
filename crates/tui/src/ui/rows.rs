//! The registry's rows, derived from the servers' views: the selected server's
//! published tools (or every server's), with a revoked listing kept in place,
//! struck out, and the filter applied. Built once per change (O(n) in the
//! tools), then read by index: drawing a frame or moving the selection costs
//! only the rows on screen, however many tools there are.

use std::sync::Arc;
use std::time::Instant;

use crate::protocol::{AliasStatus, EndCause, PinStatus, PolicyEffect, ServerView, ToolView};

/// The effect column's width (`confirm`, `revoked`).
pub const EFFECT_WIDTH: usize = 7;

/// The columns between a row's name and what follows it (` → `, ` ✗ `).
pub const ARROW: usize = 3;

/// The registry's filter: what was typed after `/`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Filter {
    pub query: String,
    /// Keys go into the query (until Enter or Esc).
    pub editing: bool,
}

/// A listing whose tools were revoked: kept, struck out, where it stood, until
/// the operator's next key (or until the alias has live tools again).
#[derive(Debug, Clone, PartialEq)]
pub struct Struck {
    pub alias: String,
    pub tools: Arc<[ToolView]>,
    pub cause: EndCause,
    pub at: Instant,
}

/// Where a row's data lives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RowRef {
    /// `servers[server].published[tool]`.
    Tool { server: usize, tool: usize },
    /// `struck[struck].tools[tool]`.
    Struck { struck: usize, tool: usize },
}

/// One row, resolved.
#[derive(Debug, Clone, Copy)]
pub enum RegistryRow<'a> {
    Tool {
        alias: &'a str,
        tool: &'a ToolView,
        state: AliasStatus,
    },
    /// A tool of a revoked listing.
    Struck {
        alias: &'a str,
        tool: &'a ToolView,
        cause: &'a EndCause,
    },
}

impl<'a> RegistryRow<'a> {
    pub fn alias(&self) -> &'a str {
        match self {
            RegistryRow::Tool { alias, .. } | RegistryRow::Struck { alias, .. } => alias,
        }
    }

    pub fn tool(&self) -> &'a ToolView {
        match self {
            RegistryRow::Tool { tool, .. } | RegistryRow::Struck { tool, .. } => tool,
        }
    }

    /// The word of the effect column: the local effect, or what became of it.
    pub fn effect_word(&self) -> &'static str {
        match self {
            RegistryRow::Struck { tool, .. } if tool.exposed_as.is_some() => "revoked",
            _ => match self.tool().effect {
                Some(effect) => effect.label(),
                None => "none",
            },
        }
    }

    /// What became of it, in a word the filter matches.
    fn state_word(&self) -> &'static str {
        match self {
            RegistryRow::Struck { .. } => "revoked",
            RegistryRow::Tool { tool, state, .. } => match (&tool.exposed_as, state) {
                (Some(_), _) => "exposed",
                (None, AliasStatus::Rejected) => "rejected",
                (None, _) if tool.effect == Some(PolicyEffect::Deny) => "denied",
                (None, _) => "not exposed",
            },
        }
    }
}

/// The rows as built for the current servers, filter and scope.
#[derive(Debug, Default)]
pub struct Rows {
    pub refs: Vec<RowRef>,
    /// Rows before the filter.
    pub total: usize,
    /// The widest name column (with `alias/` where shown), in characters.
    pub name_width: usize,
    /// The widest exposed name.
    pub exposed_width: usize,
    /// In the compact layout, the widest text between name and effect (a
    /// reason it is not exposed, a revocation's cause, an exposed name's end
    /// where normalizing changed it); 0 when no row has one.
    pub middle_width: usize,
}

impl Rows {
    /// The name column's width in a pane `width` wide: every name whole when
    /// the full exposed names fit; else the names take the room left of the
    /// effect column, keeping up to a third of it for the text between name
    /// and effect when some row has such text.
    pub fn name_column(&self, width: usize, compact: bool) -> usize {
        let left = width.saturating_sub(EFFECT_WIDTH + 1);
        // Every row has its three columns between name and the rest (` → `,
        // ` ✗ ` or blanks), so the name yields them too: the effect is never cut.
        let middle = match self.middle_width {
            0 => 0,
            w if compact => (w + ARROW).min(left / 3),
            _ => 0,
        };
        self.name_width.min(left.saturating_sub(middle.max(ARROW)))
    }
}

/// What the rows depend on; when it is unchanged, so are they. Each server's
/// listing is held (not just its address), so a freed listing's address can
/// never pass for a new one; a view that only brings new health figures keeps
/// the rows.
#[derive(Debug, Clone)]
pub struct RowsKey {
    pub listings: Vec<(Arc<[ToolView]>, AliasStatus)>,
    pub struck: u64,
    pub query: Option<String>,
    pub all: bool,
    pub selected_server: usize,
}

impl PartialEq for RowsKey {
    fn eq(&self, other: &Self) -> bool {
        self.struck == other.struck
            && self.query == other.query
            && self.all == other.all
            && self.selected_server == other.selected_server
            && self.listings.len() == other.listings.len()
            && self
                .listings
                .iter()
                .zip(&other.listings)
                .all(|((a, sa), (b, sb))| Arc::ptr_eq(a, b) && sa == sb)
    }
}

/// What the rows are built from.
pub struct Source<'a> {
    pub servers: &'a [ServerView],
    pub struck: &'a [Struck],
    pub filter: Option<&'a Filter>,
    pub all: bool,
    pub selected_server: usize,
}

impl<'a> Source<'a> {
    pub fn resolve(&self, at: RowRef) -> Option<RegistryRow<'a>> {
        match at {
            RowRef::Tool { server, tool } => {
                let s = self.servers.get(server)?;
                Some(RegistryRow::Tool {
                    alias: &s.alias,
                    tool: s.published.get(tool)?,
                    state: s.state,
                })
            }
            RowRef::Struck { struck, tool } => {
                let s = self.struck.get(struck)?;
                Some(RegistryRow::Struck {
                    alias: &s.alias,
                    tool: s.tools.get(tool)?,
                    cause: &s.cause,
                })
            }
        }
    }

    /// Every row in order: each shown server's live tools, or its struck
    /// listing where the live one is gone.
    pub fn build(&self) -> Rows {
        let selected = self.servers.get(self.selected_server).map(|s| &s.alias);
        let terms: Vec<&str> = self
            .filter
            .map(|f| f.query.split_whitespace().collect())
            .unwrap_or_default();
        let mut rows = Rows::default();
        for (si, server) in self.servers.iter().enumerate() {
            if !self.all && Some(&server.alias) != selected {
                continue;
            }
            let struck = self
                .struck
                .iter()
                .rposition(|s| s.alias == server.alias)
                .filter(|_| server.published.is_empty() || server.state != AliasStatus::Ready);
            let refs: Box<dyn Iterator<Item = RowRef>> = match struck {
                Some(struck) => Box::new(
                    (0..self.struck[struck].tools.len())
                        .map(move |tool| RowRef::Struck { struck, tool }),
                ),
                None => Box::new(
                    (0..server.published.len()).map(move |tool| RowRef::Tool { server: si, tool }),
                ),
            };
            for at in refs {
                rows.total += 1;
                let Some(row) = self.resolve(at) else {
                    continue;
                };
                if !terms.iter().all(|t| matches(&row, t)) {
                    continue;
                }
                let tool = row.tool();
                let prefix = match row {
                    RegistryRow::Struck { alias, .. } => alias.chars().count() + 1,
                    RegistryRow::Tool { alias, .. } if self.all => alias.chars().count() + 1,
                    RegistryRow::Tool { .. } => 0,
                };
                // The " [hidden text]" / " [suspicious]" mark is part of the name column.
                let mark = crate::ui::text::width(flag_mark(tool));
                // So is a pin mark ("+ " no pin yet, "≠ " changed).
                let mark = mark
                    + match tool.pin {
                        PinStatus::New | PinStatus::Changed => 2,
                        PinStatus::Pinned | PinStatus::Off => 0,
                    };
                rows.name_width = rows
                    .name_width
                    .max(prefix + tool.name.chars().count() + mark);
                rows.exposed_width = rows
                    .exposed_width
                    .max(tool.exposed_as.as_ref().map_or(0, |e| e.chars().count()));
                rows.middle_width = rows.middle_width.max(middle(&row));
                rows.refs.push(at);
            }
        }
        rows
    }
}

/// The width of what a compact row shows between its name and its effect.
fn middle(row: &RegistryRow<'_>) -> usize {
    let tool = row.tool();
    match row {
        RegistryRow::Struck { cause, .. } => cause.text.chars().count(),
        RegistryRow::Tool { alias, .. } => match &tool.exposed_as {
            None => tool
                .why_not
                .as_ref()
                .map_or("not exposed".len(), |w| w.chars().count()),
            // The end of the exposed name shows only where normalizing changed it.
            Some(exposed) => {
                let prefix = "mcp__".len() + alias.chars().count() + "__".len();
                let end = exposed.chars().count().saturating_sub(prefix);
                if exposed.starts_with("mcp__")
                    && exposed.ends_with(tool.name.as_str())
                    && end == tool.name.chars().count()
                {
                    0
                } else {
                    end
                }
            }
        },
    }
}

/// Whether one filter term matches the row: its alias, published name,
/// exposed name, effect or state (case-insensitive, anywhere in the text).
fn matches(row: &RegistryRow<'_>, term: &str) -> bool {
    let tool = row.tool();
    [
        Some(row.alias()),
        Some(tool.name.as_str()),
        tool.exposed_as.as_deref(),
        Some(row.effect_word()),
        Some(row.state_word()),
    ]
    .into_iter()
    .flatten()
    .any(|field| contains_ignore_case(field, term))
}

/// `needle` in `haystack`, ignoring case, without allocating for ASCII.
pub fn contains_ignore_case(haystack: &str, needle: &str) -> bool {
    if needle.is_empty() {
        return true;
    }
    if haystack.is_ascii() && needle.is_ascii() {
        let (h, n) = (haystack.as_bytes(), needle.as_bytes());
        return h.windows(n.len()).any(|w| w.eq_ignore_ascii_case(n));
    }
    haystack.to_lowercase().contains(&needle.to_lowercase())
}

/// What the registry writes after a tool's name when the harness flagged its
/// definition: hidden text (rule 15), the poisoning screen (rule 20), or both.
pub fn flag_mark(tool: &crate::protocol::ToolView) -> &'static str {
    match (tool.hidden_text, !tool.suspicious.is_empty()) {
        (true, true) => " [hidden text] [suspicious]",
        (true, false) => " [hidden text]",
        (false, true) => " [suspicious]",
        (false, false) => "",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn case_is_ignored_and_any_position_matches() {
        assert!(contains_ignore_case("mcp__demo_alpha__LookUp", "lookup"));
        assert!(contains_ignore_case("Ärger", "ä"));
        assert!(!contains_ignore_case("set", "reset"));
        assert!(contains_ignore_case("anything", ""));
    }
}
