//! Published tools against their pins: which are pinned, new or changed, what
//! each change is (as a diff), which pins are gone, and which new tool is only
//! a gone one renamed — and the verdict for the connection.

use std::collections::BTreeSet;

use serde::Serialize;
use serde_json::Value;

use super::canonical::{self, fingerprint};
use super::diff;
use super::lock::AliasPins;
use super::{Pin, PinHash, PinMode, PinState};
use crate::mcp::error::{ConnectError, ConnectErrorCode};
use crate::mcp::names::quote;
use crate::mcp::policy::{Effect, ToolPolicy};
use crate::mcp::published::PublishedTool;
use crate::mcp::screen::{self, Suspicion};

/// One tool whose definition differs from its pin (or, with `renamed_from`,
/// a new tool whose definition is a gone tool's, but for its name).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DefinitionChange {
    /// The published name.
    pub tool: String,
    pub old_sha256: String,
    pub new_sha256: String,
    /// Unified diff of the pretty-printed definitions, pinned → published,
    /// hidden characters as `<U+XXXX>`.
    pub diff: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub renamed_from: Option<String>,
    /// What the poisoning screen found in the published definition: why it
    /// is not trusted without the operator's word (empty: nothing).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub suspicious: Vec<Suspicion>,
}

/// What a connect found about pins, for the operator's views.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PinSummary {
    pub mode: PinMode,
    /// One per published tool, in listing order (empty if the listing failed).
    pub states: Vec<PinState>,
    /// Tools this connect pinned (trust on first use).
    pub created: Vec<String>,
    /// Where the pins live.
    pub location: String,
}

/// The review of one listing.
#[derive(Debug, Clone)]
pub struct PinReview {
    pub mode: PinMode,
    /// One per published tool, in listing order.
    pub states: Vec<PinState>,
    pub changed: Vec<DefinitionChange>,
    /// New tools that are gone tools renamed (same definition but the name).
    pub renamed: Vec<DefinitionChange>,
    /// Indices (into the listing) of tools without a pin.
    pub unpinned: Vec<usize>,
    /// Tools without a pin that the poisoning screen flags, each as a
    /// definition added (`old_sha256` empty) with why: never pinned on first use.
    pub suspicious: Vec<DefinitionChange>,
    /// Pinned tools that are no longer published (or are now `deny`).
    pub gone: Vec<String>,
    /// Each published tool's pin as published now (`None`: not checked).
    pub hashes: Vec<Option<PinHash>>,
}

impl PinReview {
    /// Reviews `published` against `pins`. `hashes` may hold fingerprints
    /// computed while the listing arrived (in listing order); missing ones are
    /// computed here. Under `off` nothing is computed.
    pub fn new(
        mode: PinMode,
        published: &[PublishedTool],
        policy: &ToolPolicy,
        pins: Option<&AliasPins>,
        mut hashes: Vec<Option<PinHash>>,
    ) -> Self {
        let mut review = Self {
            mode,
            states: vec![PinState::Off; published.len()],
            changed: Vec::new(),
            renamed: Vec::new(),
            unpinned: Vec::new(),
            suspicious: Vec::new(),
            gone: Vec::new(),
            hashes: vec![None; published.len()],
        };
        if mode == PinMode::Off {
            return review;
        }
        hashes.resize(published.len(), None);
        let empty = AliasPins::new();
        let pins = pins.unwrap_or(&empty);
        let mut scratch = Vec::new();
        let mut pinnable = BTreeSet::new();
        for (i, (tool, hash)) in published.iter().zip(hashes).enumerate() {
            if policy.effect(&tool.name) == Some(Effect::Deny) {
                continue;
            }
            pinnable.insert(tool.name.as_str());
            let hash = hash.unwrap_or_else(|| fingerprint(tool, &mut scratch));
            review.states[i] = match pins.get(&tool.name) {
                None => {
                    review.unpinned.push(i);
                    PinState::New
                }
                Some(pin) if pin.sha256 == hash => PinState::Pinned,
                Some(pin) => {
                    review
                        .changed
                        .push(change(pin, tool, &hash, None, published));
                    PinState::Changed
                }
            };
            review.hashes[i] = Some(hash);
        }
        review.gone = pins
            .keys()
            .filter(|name| !pinnable.contains(name.as_str()))
            .cloned()
            .collect();
        review.find_renames(published, pins);
        review.suspicious = review
            .unpinned
            .iter()
            .filter_map(|&i| {
                let found = screen::tool(&published[i], published);
                let hash = review.hashes[i].clone()?;
                (!found.is_empty()).then(|| added(&published[i], &hash, found))
            })
            .collect();
        review
    }

    /// A new tool whose definition, but for its name, is a gone tool's.
    fn find_renames(&mut self, published: &[PublishedTool], pins: &AliasPins) {
        if self.unpinned.is_empty() || self.gone.is_empty() {
            return;
        }
        let mut gone: Vec<(&String, &Pin, Value)> = self
            .gone
            .iter()
            .filter_map(|name| {
                let pin = pins.get(name)?;
                let definition = serde_json::from_str(&pin.definition).ok()?;
                Some((name, pin, without_name(definition)))
            })
            .collect();
        for &i in &self.unpinned {
            let tool = &published[i];
            let now = without_name(canonical::definition(tool));
            if let Some(at) = gone.iter().position(|(_, _, was)| *was == now) {
                let (name, pin, _) = gone.remove(at);
                let hash = self.hashes[i]
                    .clone()
                    .unwrap_or_else(|| Pin::of(tool).sha256);
                self.renamed
                    .push(change(pin, tool, &hash, Some(name.clone()), published));
            }
        }
    }

    /// Whether the connection may go ahead: a changed definition rejects it
    /// (`definition_changed`); under `required` so does a tool without a pin
    /// (`definition_unpinned`).
    pub fn verdict(
        &self,
        alias: &str,
        published: &[PublishedTool],
        location: &str,
    ) -> Result<(), ConnectError> {
        if !self.changed.is_empty() {
            let list: Vec<String> = self
                .changed
                .iter()
                .map(|c| {
                    format!(
                        "{} (sha256 {} → {})",
                        quote(&c.tool),
                        short(&c.old_sha256),
                        short(&c.new_sha256)
                    )
                })
                .collect();
            let error = ConnectError::new(
                ConnectErrorCode::DefinitionChanged,
                format!(
                    "pin rule: the server now publishes {} differently from what was pinned in {location}; \
                     what was approved is not what would run",
                    list.join(", ")
                ),
                format!(
                    "review the diff (`mcp-harness check` prints it); if you trust the new definitions, \
                     accept them with `mcp-harness pin {alias}` or from the TUI's diff view"
                ),
            )
            .with_tools(self.changed.iter().map(|c| c.tool.clone()).collect())
            .with_changes(self.changed.iter().chain(&self.renamed).cloned().collect());
            return Err(error);
        }
        if self.mode == PinMode::Tofu && !self.suspicious.is_empty() {
            let list: Vec<String> = self
                .suspicious
                .iter()
                .map(|c| {
                    let mut rules: Vec<&str> = c.suspicious.iter().map(|s| s.rule).collect();
                    rules.dedup();
                    format!("{} ({})", quote(&c.tool), rules.join(", "))
                })
                .collect();
            return Err(ConnectError::new(
                ConnectErrorCode::DefinitionSuspicious,
                format!(
                    "screen rule: {} {} no pin in {location} and {} addressed to the model; a \
                     suspicious definition is never trusted on first use",
                    list.join(", "),
                    if list.len() == 1 { "has" } else { "have" },
                    if list.len() == 1 {
                        "reads as"
                    } else {
                        "read as"
                    },
                ),
                format!(
                    "review why (`mcp-harness check` prints each rule and the phrase it matched); \
                     if you trust it, accept it with `mcp-harness pin {alias}` or from the TUI's \
                     diff view, or set it to \"deny\" in the policy"
                ),
            )
            .with_tools(self.suspicious.iter().map(|c| c.tool.clone()).collect())
            .with_changes(self.suspicious.clone()));
        }
        if self.mode == PinMode::Required && !self.unpinned.is_empty() {
            let names: Vec<String> = self
                .unpinned
                .iter()
                .map(|&i| {
                    let name = &published[i].name;
                    match self.renamed.iter().find(|r| &r.tool == name) {
                        Some(r) => format!(
                            "{} (`{}` renamed, same definition)",
                            quote(name),
                            r.renamed_from.as_deref().unwrap_or_default()
                        ),
                        None => quote(name),
                    }
                })
                .collect();
            let error = ConnectError::new(
                ConnectErrorCode::DefinitionUnpinned,
                format!(
                    "pin rule: `{alias}` has pin = \"required\", and {} {} no pin in {location}",
                    names.join(", "),
                    if names.len() == 1 { "has" } else { "have" }
                ),
                format!(
                    "review the tools (`mcp-harness check` lists them), then pin them with `mcp-harness pin {alias}`"
                ),
            )
            .with_tools(self.unpinned.iter().map(|&i| published[i].name.clone()).collect())
            .with_changes(self.renamed.iter().chain(&self.suspicious).cloned().collect());
            return Err(error);
        }
        Ok(())
    }

    /// The pins trust on first use writes: every tool without one, but the
    /// suspicious ones (only the operator's explicit acceptance pins those).
    pub fn first_use(&self, published: &[PublishedTool]) -> Vec<(String, Pin)> {
        if self.mode != PinMode::Tofu {
            return Vec::new();
        }
        self.unpinned
            .iter()
            .filter(|&&i| !self.suspicious.iter().any(|s| s.tool == published[i].name))
            .map(|&i| (published[i].name.clone(), Pin::of(&published[i])))
            .collect()
    }
}

fn change(
    pin: &Pin,
    tool: &PublishedTool,
    hash: &PinHash,
    renamed_from: Option<String>,
    listing: &[PublishedTool],
) -> DefinitionChange {
    let now = canonical::canonical_value(&canonical::definition(tool));
    DefinitionChange {
        tool: tool.name.clone(),
        old_sha256: pin.sha256.to_string(),
        new_sha256: hash.to_string(),
        diff: diff::unified(&pin.definition, &now),
        renamed_from,
        suspicious: screen::tool(tool, listing),
    }
}

/// A tool without a pin, shown whole, with what the screen found in it.
fn added(tool: &PublishedTool, hash: &PinHash, suspicious: Vec<Suspicion>) -> DefinitionChange {
    let now = canonical::canonical_value(&canonical::definition(tool));
    DefinitionChange {
        tool: tool.name.clone(),
        old_sha256: String::new(),
        new_sha256: hash.to_string(),
        diff: diff::added(&now),
        renamed_from: None,
        suspicious,
    }
}

fn without_name(mut definition: Value) -> Value {
    if let Value::Object(map) = &mut definition {
        map.remove("name");
    }
    definition
}

fn short(sha: &str) -> &str {
    sha.get(..12).unwrap_or(sha)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mcp::published::Position;
    use serde_json::json;

    fn tool(name: &str, description: &str) -> PublishedTool {
        PublishedTool::from_json(
            &json!({"name": name, "description": description, "inputSchema": {"type": "object"}}),
            Position { page: 1, index: 0 },
        )
        .unwrap()
    }

    fn pins(tools: &[PublishedTool]) -> AliasPins {
        tools.iter().map(|t| (t.name.clone(), Pin::of(t))).collect()
    }

    fn policy(entries: &[(&str, Effect)]) -> ToolPolicy {
        ToolPolicy::new(entries.iter().map(|(n, e)| (n.to_string(), *e)).collect())
    }

    #[test]
    fn states_changes_and_renames() {
        let before = [
            tool("a", "A"),
            tool("b", "B"),
            tool("old", "O"),
            tool("d", "D"),
        ];
        let pinned = pins(&before);
        let now = [
            tool("a", "A"),
            tool("b", "B, and more"),
            tool("new", "O"),
            tool("d", "D"),
            tool("e", "E"),
        ];
        let p = policy(&[("d", Effect::Deny)]);
        let review = PinReview::new(PinMode::Tofu, &now, &p, Some(&pinned), Vec::new());
        use PinState::*;
        assert_eq!(review.states, [Pinned, Changed, New, Off, New]);
        assert_eq!(review.changed.len(), 1);
        let c = &review.changed[0];
        assert_eq!(c.tool, "b");
        assert_eq!(c.old_sha256, pinned["b"].sha256.as_str());
        assert!(c.diff.contains("-  \"description\": \"B\","), "{}", c.diff);
        assert!(
            c.diff.contains("+  \"description\": \"B, and more\","),
            "{}",
            c.diff
        );
        // `d` is denied now: its pin no longer applies.
        assert_eq!(review.gone, ["d", "old"]);
        assert_eq!(review.renamed.len(), 1);
        assert_eq!(review.renamed[0].tool, "new");
        assert_eq!(review.renamed[0].renamed_from.as_deref(), Some("old"));
        assert!(review.renamed[0].diff.contains("+  \"name\": \"new\""));
        let e = review.verdict("s", &now, "L").unwrap_err();
        assert_eq!(e.code, ConnectErrorCode::DefinitionChanged);
        assert_eq!(e.tools, ["b"]);
        assert_eq!(e.changes().len(), 2, "the change and the rename");
        assert!(e.message.contains("`b` (sha256 "), "{}", e.message);
        assert!(
            !e.message.contains("and more"),
            "no server text in the message"
        );
    }

    #[test]
    fn tofu_pins_new_tools_required_refuses_them_off_checks_nothing() {
        let now = [tool("a", "A"), tool("b", "B")];
        let pinned = pins(&now[..1]);
        let p = ToolPolicy::default();
        let tofu = PinReview::new(PinMode::Tofu, &now, &p, Some(&pinned), Vec::new());
        assert!(tofu.verdict("s", &now, "L").is_ok());
        let first = tofu.first_use(&now);
        assert_eq!(first.len(), 1);
        assert_eq!(first[0].0, "b");
        assert_eq!(first[0].1, Pin::of(&now[1]));
        let required = PinReview::new(PinMode::Required, &now, &p, Some(&pinned), Vec::new());
        let e = required.verdict("s", &now, "L").unwrap_err();
        assert_eq!(e.code, ConnectErrorCode::DefinitionUnpinned);
        assert_eq!(e.tools, ["b"]);
        assert!(required.first_use(&now).is_empty());
        let off = PinReview::new(PinMode::Off, &now, &p, None, Vec::new());
        assert_eq!(off.states, [PinState::Off, PinState::Off]);
        assert!(off.verdict("s", &now, "L").is_ok() && off.first_use(&now).is_empty());
    }
}
