//! The operator's one explicit act: accept what a server publishes now. Every
//! non-`deny` tool of the listing the operator saw is pinned, pins of tools
//! that are gone are dropped, and what changed is reported as a diff.

use serde::Serialize;

use super::review::{DefinitionChange, PinReview};
use super::{Pin, PinError, PinMode};
use crate::mcp::error::HubError;
use crate::mcp::events::PinChange;
use crate::mcp::hub::Hub;
use crate::mcp::policy::Effect;
use crate::mcp::published::PublishedTool;

/// One pin written, changed or dropped (the audit log's record).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PinRecord {
    /// The published (remote) name.
    pub tool: String,
    pub old_sha256: Option<String>,
    pub new_sha256: Option<String>,
}

/// What accepting changed in the lock file.
#[derive(Debug, Clone, Default)]
pub struct Acceptance {
    /// Where the pins were written.
    pub location: String,
    /// Tools pinned for the first time (renamed ones are in `renamed`).
    pub added: Vec<String>,
    pub changed: Vec<DefinitionChange>,
    pub renamed: Vec<DefinitionChange>,
    /// Pins dropped: their tools are gone or now `deny` (renamed ones excluded).
    pub dropped: Vec<String>,
    /// Pins that already matched.
    pub unchanged: usize,
    /// New pins the poisoning screen flags: accepted by this very act.
    pub suspicious: Vec<DefinitionChange>,
}

impl Acceptance {
    pub fn is_empty(&self) -> bool {
        self.added.is_empty()
            && self.changed.is_empty()
            && self.renamed.is_empty()
            && self.dropped.is_empty()
    }
}

/// Why accepting failed.
#[derive(Debug, Clone, thiserror::Error)]
pub enum AcceptError {
    #[error(transparent)]
    Hub(#[from] HubError),
    #[error(transparent)]
    Pins(#[from] PinError),
}

impl Hub {
    /// Pins exactly `published` (what the operator was shown) for `alias`:
    /// every tool the policy does not deny; every other pin of the alias goes.
    /// Blocks on file I/O in a blocking task.
    pub async fn accept_pins(
        &self,
        alias: &str,
        published: &[PublishedTool],
    ) -> Result<Acceptance, AcceptError> {
        let spec = self.spec(alias)?;
        let book = self.pin_book();
        let location = book.location();
        let current = {
            let book = std::sync::Arc::clone(&book);
            tokio::task::spawn_blocking(move || book.load())
                .await
                .map_err(|e| PinError::Read {
                    path: location.clone(),
                    message: e.to_string(),
                })??
        };
        let before = current.alias(spec.alias.as_str());
        let review = PinReview::new(PinMode::Tofu, published, &spec.policy, before, Vec::new());
        let renamed_to: Vec<&str> = review.renamed.iter().map(|r| r.tool.as_str()).collect();
        let renamed_from: Vec<&str> = review
            .renamed
            .iter()
            .filter_map(|r| r.renamed_from.as_deref())
            .collect();
        let acceptance = Acceptance {
            location: location.clone(),
            added: review
                .unpinned
                .iter()
                .map(|&i| published[i].name.clone())
                .filter(|n| !renamed_to.contains(&n.as_str()))
                .collect(),
            changed: review.changed.clone(),
            renamed: review.renamed.clone(),
            dropped: review
                .gone
                .iter()
                .filter(|n| !renamed_from.contains(&n.as_str()))
                .cloned()
                .collect(),
            unchanged: review
                .states
                .iter()
                .filter(|s| **s == super::PinState::Pinned)
                .count(),
            suspicious: review.suspicious.clone(),
        };
        let pins: Vec<(String, Pin)> = published
            .iter()
            .filter(|t| spec.policy.effect(&t.name) != Some(Effect::Deny))
            .map(|t| (t.name.clone(), Pin::of(t)))
            .collect();
        let alias_key = spec.alias.as_str().to_string();
        tokio::task::spawn_blocking(move || {
            book.update(&alias_key, |current| *current = pins.into_iter().collect())
        })
        .await
        .map_err(|e| PinError::Write {
            path: location,
            message: e.to_string(),
        })??;
        let records = records(&acceptance, &review, published, before);
        self.emit_pins(&spec, PinChange::Accepted, records);
        Ok(acceptance)
    }
}

impl Hub {
    /// Pins the tools of `published` that have no pin yet (the policy the
    /// operator just wrote lists them), keeping every existing pin: a changed
    /// definition still needs its own review. Returns the tools pinned.
    pub async fn pin_unpinned(
        &self,
        alias: &str,
        published: &[PublishedTool],
    ) -> Result<Vec<String>, AcceptError> {
        let spec = self.spec(alias)?;
        let book = self.pin_book();
        let location = book.location();
        let current = {
            let book = std::sync::Arc::clone(&book);
            tokio::task::spawn_blocking(move || book.load())
                .await
                .map_err(|e| PinError::Read {
                    path: location.clone(),
                    message: e.to_string(),
                })??
        };
        let review = PinReview::new(
            PinMode::Tofu,
            published,
            &spec.policy,
            current.alias(spec.alias.as_str()),
            Vec::new(),
        );
        let new = review.first_use(published);
        if new.is_empty() {
            return Ok(Vec::new());
        }
        let records: Vec<PinRecord> = new
            .iter()
            .map(|(tool, pin)| PinRecord {
                tool: tool.clone(),
                old_sha256: None,
                new_sha256: Some(pin.sha256.to_string()),
            })
            .collect();
        let names: Vec<String> = new.iter().map(|(t, _)| t.clone()).collect();
        let alias_key = spec.alias.as_str().to_string();
        tokio::task::spawn_blocking(move || book.update(&alias_key, |pins| pins.extend(new)))
            .await
            .map_err(|e| PinError::Write {
                path: location,
                message: e.to_string(),
            })??;
        self.emit_pins(&spec, PinChange::Accepted, records);
        Ok(names)
    }
}

fn records(
    acceptance: &Acceptance,
    review: &PinReview,
    published: &[PublishedTool],
    before: Option<&super::lock::AliasPins>,
) -> Vec<PinRecord> {
    let new_hash = |name: &str| {
        published
            .iter()
            .position(|t| t.name == name)
            .and_then(|i| review.hashes[i].as_ref())
            .map(ToString::to_string)
    };
    let changes = acceptance.changed.iter().chain(&acceptance.renamed);
    let mut records: Vec<PinRecord> = changes
        .map(|c| PinRecord {
            tool: c.tool.clone(),
            old_sha256: Some(c.old_sha256.clone()),
            new_sha256: Some(c.new_sha256.clone()),
        })
        .collect();
    records.extend(acceptance.added.iter().map(|t| PinRecord {
        tool: t.clone(),
        old_sha256: None,
        new_sha256: new_hash(t),
    }));
    records.extend(acceptance.dropped.iter().map(|t| {
        PinRecord {
            tool: t.clone(),
            old_sha256: before
                .and_then(|pins| pins.get(t))
                .map(|p| p.sha256.to_string()),
            new_sha256: None,
        }
    }));
    records
}
