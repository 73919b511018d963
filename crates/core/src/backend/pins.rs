//! The operator accepting definitions (rule 14): from the diff view, after a
//! confirmation, the listing that was shown is pinned and the alias
//! reconnects; writing a policy with `p` pins the tools it lists.

use std::collections::BTreeSet;
use std::sync::Arc;

use super::Backend;
use super::operator::connect;
use crate::mcp::{ConnectErrorCode, PublishedTool};
use crate::protocol::BackendEvent;

impl Backend {
    /// Pins what `alias` published in the attempt the operator reviewed, if it
    /// is still the last one (`seen`: the published sha256 of each change the
    /// diff view showed), then reconnects.
    pub(super) fn accept_pins(&mut self, alias: String, seen: Vec<String>) {
        let report = match self.hub.last_report(&alias) {
            Some(report) => report,
            None => {
                return self.tell(format!(
                    "`{alias}` has no listing to accept yet: connect it"
                ));
            }
        };
        let Err(error) = &report.outcome else {
            return self.tell(format!(
                "the tools of `{alias}` match their pins: nothing to accept"
            ));
        };
        if !matches!(
            error.code,
            ConnectErrorCode::DefinitionChanged
                | ConnectErrorCode::DefinitionUnpinned
                | ConnectErrorCode::DefinitionSuspicious
        ) {
            return self.tell(format!(
                "`{alias}` was refused for {}, not for its definitions: fix that first",
                error.code
            ));
        }
        let now: BTreeSet<&str> = error
            .changes()
            .iter()
            .map(|c| c.new_sha256.as_str())
            .collect();
        let seen: BTreeSet<&str> = seen.iter().map(String::as_str).collect();
        if now != seen {
            return self.tell(format!(
                "`{alias}` published other definitions since you looked: review the new diff (v)"
            ));
        }
        let (hub, events) = (self.hub.clone(), self.events.clone());
        self.jobs.spawn(async move {
            let text = match hub.accept_pins(&alias, &report.published).await {
                Ok(accepted) => {
                    let names: Vec<String> = accepted
                        .changed
                        .iter()
                        .chain(&accepted.renamed)
                        .map(|c| c.tool.clone())
                        .chain(accepted.added.iter().cloned())
                        .map(|n| format!("`{}`", crate::sanitize::inert_line(&n, 60)))
                        .collect();
                    let count = names.len();
                    let connected = connect(&hub, &alias, true).await;
                    // The one notice of this act: what was pinned, where, and
                    // how the reconnect went.
                    format!(
                        "accepted {count} definition{} of `{alias}` ({}), pinned in {}; {connected}",
                        if count == 1 { "" } else { "s" },
                        names.join(", "),
                        accepted.location
                    )
                }
                Err(e) => format!("could not accept the definitions of `{alias}`: {e}"),
            };
            let _ = events.send(BackendEvent::CommandResult(text));
        });
    }

    /// After `p` wrote a policy (`wrote`: where, said first): pins the tools
    /// it lists that have no pin yet (a changed definition keeps its old pin
    /// and its own review), then reconnects; one notice says all of it.
    pub(super) fn pin_listed_and_reconnect(
        &mut self,
        alias: String,
        published: Arc<[PublishedTool]>,
        wrote: String,
    ) {
        let (hub, events) = (self.hub.clone(), self.events.clone());
        self.jobs.spawn(async move {
            let pinned = match hub.pin_unpinned(&alias, &published).await {
                // Nothing new to pin is not news: no "pinned 0".
                Ok(pinned) if pinned.is_empty() => String::new(),
                Ok(pinned) => format!(
                    "pinned {} new tool definition{} (first use); ",
                    pinned.len(),
                    if pinned.len() == 1 { "" } else { "s" }
                ),
                Err(e) => format!("pinned nothing ({e}); "),
            };
            let connected = connect(&hub, &alias, true).await;
            let text = format!("{wrote}; {pinned}{connected}");
            let _ = events.send(BackendEvent::CommandResult(text));
        });
    }
}
