//! Pins in the connection manager: every listing that passed the local rules
//! is reviewed against the alias's pins before its tools are exposed — on
//! connect and on every re-list — and trust on first use writes the missing
//! ones.

use std::sync::Arc;

use super::lock::Lock;
use super::review::{PinReview, PinSummary};
use super::{PinBook, PinError, PinHash, PinMode, PinRecord};
use crate::mcp::error::{ConnectError, ConnectErrorCode};
use crate::mcp::events::{McpEvent, PinChange};
use crate::mcp::hub::Hub;
use crate::mcp::published::PublishedTool;
use crate::mcp::spec::ServerSpec;

/// The lock file read in the background while a connection opens.
pub(in crate::mcp) type PinsLoading = tokio::task::JoinHandle<Result<Arc<Lock>, PinError>>;

impl Hub {
    /// Where the pins live, for the operator's views.
    pub fn pins_location(&self) -> String {
        self.pin_book().location()
    }

    pub(in crate::mcp) fn pin_book(&self) -> Arc<PinBook> {
        Arc::clone(&self.inner.pins)
    }

    /// Starts reading the pins (cached unless the file changed), so the read
    /// overlaps with starting the server and listing its tools.
    pub(in crate::mcp) fn load_pins(&self, spec: &ServerSpec) -> Option<PinsLoading> {
        if spec.pin == PinMode::Off {
            return None;
        }
        let book = self.pin_book();
        Some(tokio::task::spawn_blocking(move || book.load()))
    }

    /// Reviews a listing against its pins. With `enforce` (the listing passed
    /// every other local rule): rejects a changed definition (or, under
    /// `required`, a missing pin), and under `tofu` pins what is new. Without
    /// it, only says where each tool stands. Returns what the operator's views
    /// show.
    pub(in crate::mcp) async fn check_pins(
        &self,
        spec: &ServerSpec,
        published: &[PublishedTool],
        hashes: Vec<Option<PinHash>>,
        loading: Option<PinsLoading>,
        enforce: bool,
    ) -> (PinSummary, Result<(), ConnectError>) {
        let book = self.pin_book();
        let mut summary = PinSummary {
            mode: spec.pin,
            states: vec![super::PinState::Off; published.len()],
            created: Vec::new(),
            location: book.location(),
        };
        let Some(loading) = loading else {
            return (summary, Ok(()));
        };
        let lock = match loading.await {
            Ok(Ok(lock)) => lock,
            Ok(Err(_)) if !enforce => return (summary, Ok(())),
            Ok(Err(e)) => return (summary, Err(lock_error(&e))),
            Err(e) => {
                let e = PinError::Read {
                    path: book.location(),
                    message: e.to_string(),
                };
                return (summary, Err(lock_error(&e)));
            }
        };
        let alias = spec.alias.as_str();
        let fresh = lock.alias(alias).is_none();
        let review = PinReview::new(
            spec.pin,
            published,
            &spec.policy,
            lock.alias(alias),
            hashes.clone(),
        );
        summary.states = review.states.clone();
        if !enforce {
            return (summary, Ok(()));
        }
        if let Err(error) = review.verdict(alias, published, &summary.location) {
            self.emit_pins(spec, PinChange::Violated, violations(&review, published));
            return (summary, Err(error));
        }
        let first_use = review.first_use(published);
        if first_use.is_empty() {
            return (summary, Ok(()));
        }
        if fresh {
            // An alias this lock has never seen, pinned in another lock the
            // harness knows: most likely a copied config. Its first use here
            // would trust a server that may have changed since, without a diff.
            let (book, key) = (Arc::clone(&book), alias.to_string());
            let elsewhere = tokio::task::spawn_blocking(move || book.pinned_elsewhere(&key))
                .await
                .ok()
                .flatten();
            if let Some((there, pins)) = elsewhere {
                let against =
                    PinReview::new(spec.pin, published, &spec.policy, Some(&pins), hashes);
                return (
                    summary.clone(),
                    Err(pinned_elsewhere(alias, &summary.location, &there, &against)),
                );
            }
        }
        let records: Vec<PinRecord> = first_use
            .iter()
            .map(|(tool, pin)| PinRecord {
                tool: tool.clone(),
                old_sha256: None,
                new_sha256: Some(pin.sha256.to_string()),
            })
            .collect();
        let names: Vec<String> = first_use.iter().map(|(t, _)| t.clone()).collect();
        let alias_key = alias.to_string();
        let written = tokio::task::spawn_blocking(move || {
            book.update(&alias_key, |pins| pins.extend(first_use))
        })
        .await;
        match written {
            Ok(Ok(_)) => {
                summary.created = names;
                self.emit_pins(spec, PinChange::Created, records);
                (summary, Ok(()))
            }
            Ok(Err(e)) => (summary, Err(lock_error(&e))),
            Err(e) => (
                summary,
                Err(lock_error(&PinError::Write {
                    path: self.pin_book().location(),
                    message: e.to_string(),
                })),
            ),
        }
    }

    pub(in crate::mcp) fn emit_pins(
        &self,
        spec: &ServerSpec,
        change: PinChange,
        tools: Vec<PinRecord>,
    ) {
        if !tools.is_empty() {
            self.inner.events.emit(McpEvent::Pins {
                alias: spec.alias.clone(),
                change,
                tools,
            });
        }
    }
}

/// What broke the pins: changed definitions and, under `required`, unpinned tools.
fn violations(review: &PinReview, published: &[PublishedTool]) -> Vec<PinRecord> {
    let changed = review.changed.iter().map(|c| PinRecord {
        tool: c.tool.clone(),
        old_sha256: Some(c.old_sha256.clone()),
        new_sha256: Some(c.new_sha256.clone()),
    });
    let unpinned = review
        .unpinned
        .iter()
        .filter(|_| review.mode == PinMode::Required && review.changed.is_empty())
        .map(|&i| PinRecord {
            tool: published[i].name.clone(),
            old_sha256: None,
            new_sha256: review.hashes[i].as_ref().map(ToString::to_string),
        });
    let suspicious = review
        .suspicious
        .iter()
        .filter(|_| review.mode == PinMode::Tofu && review.changed.is_empty())
        .map(|c| PinRecord {
            tool: c.tool.clone(),
            old_sha256: None,
            new_sha256: Some(c.new_sha256.clone()),
        });
    changed.chain(unpinned).chain(suspicious).collect()
}

/// The refusal of a first use for an alias pinned in another lock: names both
/// locks, says how the definitions compare with the pins there (the diff comes
/// along), and the two ways on.
fn pinned_elsewhere(
    alias: &str,
    here: &str,
    there: &std::path::Path,
    against: &PinReview,
) -> ConnectError {
    let comparison = if against.changed.is_empty() {
        "what the server publishes now matches those pins".to_string()
    } else {
        let names: Vec<String> = against
            .changed
            .iter()
            .map(|c| crate::mcp::names::quote(&c.tool))
            .collect();
        format!(
            "{} differ{} from those pins",
            names.join(", "),
            if names.len() == 1 { "s" } else { "" }
        )
    };
    ConnectError::new(
        ConnectErrorCode::DefinitionUnpinned,
        format!(
            "pin rule: `{alias}` has no pins in this config's lock file {here}, but is pinned \
             in {} ({comparison}); a new lock file is not trusted on first use without a word",
            there.display()
        ),
        format!(
            "to check the server against those pins, set `lock = \"{}\"` at the top of the config; \
             to start this lock afresh, run again with --accept-new-lock (or pin the tools with \
             `mcp-harness pin {alias}`)",
            there.display()
        ),
    )
    .with_tools(against.changed.iter().map(|c| c.tool.clone()).collect())
    .with_changes(against.changed.clone())
}

fn lock_error(e: &PinError) -> ConnectError {
    ConnectError::new(
        ConnectErrorCode::LockFileError,
        e.to_string(),
        "fix the file, or remove it to pin every tool anew on its next connect; \
         `pin = \"off\"` for an alias stops checking its tools",
    )
}
