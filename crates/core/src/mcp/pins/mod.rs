//! Pinned definitions (SPEC rule 14): what the operator approved is what runs.
//!
//! Each exposed tool's published definition is pinned by the SHA-256 of its
//! RFC 8785 canonical JSON (`canonical`), kept with the definition itself in
//! `mcp-harness.lock` beside the config file (`lock`, `book`). On connect and on
//! every re-list the published tools are reviewed against their pins
//! (`review`): a changed definition rejects the whole connection with a diff
//! (`diff`) until the operator accepts it (`accept`). `deny` tools are never
//! pinned.

mod accept;
pub mod book;
pub mod canonical;
pub mod diff;
pub mod fingerprints;
mod hub;
pub mod lock;
pub mod review;

use serde::{Deserialize, Serialize};

pub use accept::{AcceptError, Acceptance, PinRecord};
pub use book::{PinBook, PinError};
pub use review::{DefinitionChange, PinReview, PinSummary};

/// How an alias's tools are pinned (`[servers.ALIAS] pin = …`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PinMode {
    /// Trust on first use: the first successful connect pins what it saw.
    #[default]
    Tofu,
    /// A tool without a pin rejects the connection (`definition_unpinned`).
    Required,
    /// Definitions are not checked.
    Off,
}

impl std::fmt::Display for PinMode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            PinMode::Tofu => "tofu",
            PinMode::Required => "required",
            PinMode::Off => "off",
        })
    }
}

/// Where one published tool stands against its pin.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum PinState {
    /// Published exactly as pinned.
    Pinned,
    /// No pin yet (under `tofu`, the connect that found it pins it).
    New,
    /// Published differently from its pin.
    Changed,
    /// Not checked: the alias has `pin = "off"`, or the tool is `deny`.
    Off,
}

impl PinState {
    pub fn label(self) -> &'static str {
        match self {
            PinState::Pinned => "pinned",
            PinState::New => "new",
            PinState::Changed => "changed",
            PinState::Off => "off",
        }
    }
}

/// A pin: the SHA-256 of a definition's canonical JSON, lowercase hex.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct PinHash(String);

impl PinHash {
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The first 12 hex digits, for messages.
    pub fn short(&self) -> &str {
        self.0.get(..12).unwrap_or(&self.0)
    }

    /// Accepts only 64 lowercase hex digits (what the lock file must hold).
    pub fn parse(text: &str) -> Option<Self> {
        (text.len() == 64 && text.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')))
            .then(|| Self(text.to_string()))
    }
}

impl std::fmt::Display for PinHash {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// One tool's entry in the lock file: its pin and the canonical definition it
/// was computed from (kept so a change can be shown as a diff).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pin {
    pub sha256: PinHash,
    /// RFC 8785 canonical JSON; `sha256` is its hash.
    pub definition: String,
}

impl Pin {
    /// The pin of a tool as published now.
    pub fn of(tool: &crate::mcp::PublishedTool) -> Self {
        let mut text = Vec::new();
        canonical::canonical(tool, &mut text);
        Self {
            sha256: canonical::hash(&text),
            definition: String::from_utf8(text).unwrap_or_default(),
        }
    }
}
