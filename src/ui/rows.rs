//! The registry's rows, derived from the state; the reducer and the panes
//! share them (so a click selects the row that is drawn there).

use super::state::AppState;
use crate::protocol::ToolView;

/// One row of the registry pane.
#[derive(Debug, Clone, Copy)]
pub enum RegistryRow<'a> {
    /// A published tool of a server.
    Tool { alias: &'a str, tool: &'a ToolView },
    /// An exposed tool that was just revoked (drawn struck out for a moment).
    Revoked {
        alias: &'a str,
        name: &'a str,
        cause: &'a str,
    },
}

impl RegistryRow<'_> {
    pub fn alias(&self) -> &str {
        match self {
            RegistryRow::Tool { alias, .. } | RegistryRow::Revoked { alias, .. } => alias,
        }
    }
}

/// The registry's rows: the selected server's published tools (or every
/// server's), then the tools being revoked.
pub fn registry_rows(state: &AppState) -> Vec<RegistryRow<'_>> {
    let selected = state.selected_server().map(|s| s.alias.as_str());
    let shown = |alias: &str| state.registry_all || Some(alias) == selected;
    let mut rows: Vec<RegistryRow<'_>> = state
        .servers
        .iter()
        .filter(|s| shown(&s.alias))
        .flat_map(|s| {
            s.published.iter().map(move |tool| RegistryRow::Tool {
                alias: &s.alias,
                tool,
            })
        })
        .collect();
    rows.extend(
        state
            .revoked
            .iter()
            .filter(|r| shown(&r.alias))
            .map(|r| RegistryRow::Revoked {
                alias: &r.alias,
                name: &r.tool,
                cause: &r.cause.text,
            }),
    );
    rows
}
