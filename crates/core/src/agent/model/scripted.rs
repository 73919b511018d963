//! The scripted provider: plays a scenario file of assistant turns, clearly a
//! replay. It needs no key and no network, so a new user sees connect, approval
//! and revocation in the first minute.
//!
//! Act N answers the operator's Nth message; inside an act, turn M is the Mth
//! model request after that message. Both are derived from the conversation, so
//! a retry or a resumed session replays from the right place.

use std::path::Path;
use std::time::Duration;

use serde::Deserialize;
use serde_json::Value;

use super::pacing::Pacing;
use super::{
    BoxFuture, ModelError, ModelProvider, ModelReply, ModelRequest, StopReason, StreamEvent,
};
use crate::agent::conversation::{Block, Role, ToolCall};

/// The demo scenario shipped in the binary.
pub const DEMO_SCENARIO: &str = include_str!("../../../../../assets/demo-scenario.toml");

/// A scenario file.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    /// Pause between streamed words, for the feel of a live model.
    #[serde(default)]
    pub delay_ms: u64,
    /// How long a `pause` turn waits for the operator at most (seconds).
    #[serde(default = "default_pause")]
    pub pause_s: u64,
    /// What to say when the scenario has no more acts.
    #[serde(default = "default_epilogue")]
    pub epilogue: String,
    #[serde(rename = "act", default)]
    pub acts: Vec<Act>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Act {
    #[serde(rename = "turn", default)]
    pub turns: Vec<Turn>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Turn {
    /// Wait for the operator (or `pause_s`) before this turn: a new act of the story.
    #[serde(default)]
    pub pause: bool,
    #[serde(default)]
    pub text: String,
    #[serde(default)]
    pub tool_calls: Vec<ScriptedCall>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScriptedCall {
    pub name: String,
    #[serde(default = "empty_object")]
    pub arguments: Value,
}

fn default_pause() -> u64 {
    8
}

fn default_epilogue() -> String {
    "(replay) The scripted scenario has no more replies. To talk to a real model, set ANTHROPIC_API_KEY or \
     OPENAI_API_KEY, or configure [model] in the config file, and start again."
        .into()
}

fn empty_object() -> Value {
    Value::Object(Default::default())
}

impl Scenario {
    pub fn parse(text: &str, origin: &str) -> Result<Self, ModelError> {
        toml::from_str(text)
            .map_err(|e| ModelError::Script(format!("scenario {origin}: {}", e.message())))
    }

    pub fn load(path: &Path) -> Result<Self, ModelError> {
        let text = std::fs::read_to_string(path).map_err(|e| {
            ModelError::Script(format!("cannot read scenario {}: {e}", path.display()))
        })?;
        Self::parse(&text, &path.display().to_string())
    }
}

/// Replays a [`Scenario`].
pub struct ScriptedProvider {
    scenario: Scenario,
    label: String,
    pacing: Pacing,
}

impl ScriptedProvider {
    pub fn new(scenario: Scenario, label: impl Into<String>) -> Self {
        Self {
            scenario,
            label: label.into(),
            pacing: Pacing::default(),
        }
    }

    /// The turn for this point of the conversation, or the epilogue.
    fn turn_for(&self, request: &ModelRequest<'_>) -> (Turn, String) {
        let operator_turns: Vec<usize> = request
            .messages
            .iter()
            .enumerate()
            .filter(|(_, m)| {
                m.role == Role::User && m.content.iter().any(|b| matches!(b, Block::Text { .. }))
            })
            .map(|(i, _)| i)
            .collect();
        let act = operator_turns.len().saturating_sub(1);
        let since = operator_turns.last().map_or(0, |&i| i + 1);
        let step = request.messages[since.min(request.messages.len())..]
            .iter()
            .filter(|m| m.role == Role::Assistant)
            .count();
        let turn = self
            .scenario
            .acts
            .get(act)
            .and_then(|a| a.turns.get(step))
            .cloned();
        let turn = turn.unwrap_or_else(|| Turn {
            pause: false,
            text: self.scenario.epilogue.clone(),
            tool_calls: Vec::new(),
        });
        (turn, format!("{act}_{step}"))
    }
}

impl ModelProvider for ScriptedProvider {
    fn name(&self) -> &'static str {
        "scripted"
    }

    fn model(&self) -> &str {
        &self.label
    }

    fn is_replay(&self) -> bool {
        true
    }

    fn pacing(&self) -> Option<&Pacing> {
        Some(&self.pacing)
    }

    fn complete<'a>(
        &'a self,
        request: ModelRequest<'a>,
        on_event: &'a mut (dyn FnMut(StreamEvent) + Send),
    ) -> BoxFuture<'a, Result<ModelReply, ModelError>> {
        let (turn, id) = self.turn_for(&request);
        Box::pin(async move {
            if turn.pause {
                self.pacing
                    .pause(Duration::from_secs(self.scenario.pause_s))
                    .await;
            }
            let delay = Duration::from_millis(self.scenario.delay_ms);
            for word in turn.text.split_inclusive(' ') {
                on_event(StreamEvent::TextDelta(word.to_string()));
                if !delay.is_zero() {
                    tokio::time::sleep(delay).await;
                }
            }
            let mut content = Vec::new();
            if !turn.text.is_empty() {
                content.push(Block::Text {
                    text: turn.text.clone(),
                });
            }
            for (i, call) in turn.tool_calls.iter().enumerate() {
                let call = ToolCall {
                    id: format!("scripted_{id}_{i}"),
                    name: call.name.clone(),
                    input: call.arguments.clone(),
                };
                on_event(StreamEvent::ToolCallStarted {
                    id: call.id.clone(),
                    name: call.name.clone(),
                });
                content.push(Block::ToolUse(call));
            }
            let stop_reason = if turn.tool_calls.is_empty() {
                StopReason::EndTurn
            } else {
                StopReason::ToolUse
            };
            Ok(ModelReply {
                content,
                stop_reason,
                usage: None,
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_demo_scenario_parses_and_tells_the_revocation_story() {
        let scenario = Scenario::parse(DEMO_SCENARIO, "demo").unwrap();
        let calls: Vec<&str> = scenario.acts[0]
            .turns
            .iter()
            .flat_map(|t| t.tool_calls.iter().map(|c| c.name.as_str()))
            .collect();
        for needed in [
            "list_mcp_servers",
            "connect_mcp",
            "mcp__demo_alpha__lookup",
            "mcp__demo_beta__lookup",
            "mcp__demo_alpha__set",
            // The one to deny, and the one to grant "always" (called twice).
            "mcp__demo_alpha__reset",
            "mcp__demo_beta__set",
            "disconnect_mcp",
        ] {
            assert!(calls.contains(&needed), "{needed} missing from {calls:?}");
        }
        assert_eq!(
            calls
                .iter()
                .filter(|c| **c == "mcp__demo_beta__set")
                .count(),
            2,
            "the second call runs on the grant"
        );
        let pauses = scenario.acts[0].turns.iter().filter(|t| t.pause).count();
        assert!(pauses >= 6, "it waits between its parts: {pauses}");
        assert!(
            scenario.acts[0].turns.last().unwrap().tool_calls.is_empty(),
            "an act ends with a text-only turn"
        );
    }

    #[test]
    fn the_demo_narration_reads_the_same_at_every_width() {
        // The TUI wraps it to the pane, and at 80 columns the panes are tabs:
        // no line breaks of its own, no column counts, no "on the right".
        let scenario = Scenario::parse(DEMO_SCENARIO, "demo").unwrap();
        for turn in scenario.acts.iter().flat_map(|a| &a.turns) {
            let text = turn.text.to_lowercase();
            for said in [
                "\n",
                "column",
                "on the right",
                "on the left",
                "at the top",
                "at the bottom",
            ] {
                assert!(!text.contains(said), "{said:?} in {:?}", turn.text);
            }
        }
    }
}
