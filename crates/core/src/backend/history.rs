//! The earlier conversation of a resumed session, for the screen: read from its
//! transcript (every agent's messages and notices, in order) and its audit log
//! (each call's target, effect and timing). Sessions written by the headless
//! `run` read back the same way. A line cut short by a crash is skipped.

use std::collections::HashMap;
use std::io::{BufRead, BufReader};
use std::path::Path;

use serde_json::Value;

use crate::agent::conversation::{Block, Message, ResultPart, Role};
use crate::protocol::{
    Decided, HistoryItem, PolicyEffect, Requester, Target, ToolCallView, ToolOutcomeView,
};

/// Entries shown at most (the newest); a longer session starts with a notice.
const SHOWN: usize = 2_000;

/// The conversation of the session stored in `dir`.
pub fn read(dir: &Path) -> Vec<HistoryItem> {
    let audit = Audit::read(&dir.join("audit.jsonl"));
    let mut items: Vec<HistoryItem> = Vec::new();
    let mut calls: HashMap<String, usize> = HashMap::new();
    for record in lines(&dir.join("transcript.jsonl")) {
        let agent = origin(&record["agent"]);
        match record["kind"].as_str() {
            Some("notice") => {
                let text = record["text"].as_str().unwrap_or_default();
                items.push(HistoryItem::Notice(match &agent {
                    Requester::Lead => text.to_string(),
                    other => format!("{other}: {text}"),
                }));
            }
            Some("message") => {
                let Ok(message) = serde_json::from_value::<Message>(record["message"].clone())
                else {
                    continue;
                };
                message_items(&message, agent, &audit, &mut items, &mut calls);
            }
            _ => {}
        }
    }
    if items.len() > SHOWN {
        let dropped = items.len() - SHOWN;
        items.drain(..dropped);
        items.insert(
            0,
            HistoryItem::Notice(format!(
                "… {dropped} earlier entries are in the transcript file"
            )),
        );
    }
    items
}

fn message_items(
    message: &Message,
    agent: Requester,
    audit: &Audit,
    items: &mut Vec<HistoryItem>,
    calls: &mut HashMap<String, usize>,
) {
    match message.role {
        Role::User => {
            let text = message.text();
            // A subagent's task and the harness's notes to the model are not
            // the operator's words.
            if agent == Requester::Lead && !text.is_empty() && !text.starts_with("[mcp-harness]") {
                items.push(HistoryItem::User(text));
            }
            for block in &message.content {
                if let Block::ToolResult(result) = block
                    && let Some(&at) = calls.get(&result.tool_use_id)
                    && let Some(HistoryItem::Call(call)) = items.get_mut(at)
                {
                    call.1 =
                        Some(audit.outcome(&result.tool_use_id, &result.content, result.is_error));
                }
            }
        }
        Role::Assistant => {
            let text = message.text();
            if !text.is_empty() {
                items.push(HistoryItem::Assistant {
                    agent: agent.clone(),
                    text,
                });
            }
            for call in message.tool_calls() {
                let (target, effect) = audit
                    .calls
                    .get(&call.id)
                    .cloned()
                    .unwrap_or((Target::Unknown, None));
                calls.insert(call.id.clone(), items.len());
                items.push(HistoryItem::Call(Box::new((
                    ToolCallView {
                        id: call.id.as_str().into(),
                        by: agent.clone(),
                        name: call.name.clone(),
                        target,
                        effect,
                        arguments: call.input.clone(),
                    },
                    None,
                ))));
            }
        }
    }
}

/// What the audit log adds to the transcript's calls.
#[derive(Default)]
struct Audit {
    calls: HashMap<String, (Target, Option<PolicyEffect>)>,
    /// Elapsed ms and the server's words, by call id.
    results: HashMap<String, (u64, Option<String>)>,
    /// How each call was decided (the row's word), by call id.
    decided: HashMap<String, Decided>,
}

impl Audit {
    fn read(path: &Path) -> Self {
        let mut audit = Audit::default();
        for record in lines(path) {
            if record["event"] == "decided"
                && let Some(call) = record["call"].as_str()
                && let Some(decided) = record["decided"].as_str().and_then(|key| {
                    Decided::from_key(key, record["grant"].as_u64().unwrap_or_default())
                })
            {
                audit.decided.insert(call.to_string(), decided);
                continue;
            }
            let Some(id) = record["id"].as_str() else {
                continue;
            };
            match record["event"].as_str() {
                Some("tool_call") => {
                    let target = match record["origin"]["kind"].as_str() {
                        Some("builtin") => Target::Builtin,
                        Some("mcp") => Target::Mcp {
                            alias: text(&record["origin"]["alias"]),
                            remote_name: text(&record["origin"]["remote_name"]),
                        },
                        _ => Target::Unknown,
                    };
                    let effect = match record["effect"].as_str() {
                        Some("allow") => Some(PolicyEffect::Allow),
                        Some("confirm") => Some(PolicyEffect::Confirm),
                        Some("deny") => Some(PolicyEffect::Deny),
                        _ => None,
                    };
                    audit.calls.insert(id.to_string(), (target, effect));
                }
                Some("tool_result") => {
                    let elapsed = record["elapsed"].as_u64().unwrap_or(0);
                    let output = record["server_output"].as_str().map(str::to_string);
                    audit.results.insert(id.to_string(), (elapsed, output));
                    // A headless run writes no `decided` record: the call's
                    // own decision says it in the same words (a TUI
                    // session's `decided`, read later or earlier, wins).
                    if let Some(decided) = record["decision"].as_str().and_then(from_decision) {
                        audit.decided.entry(id.to_string()).or_insert(decided);
                    }
                }
                _ => {}
            }
        }
        audit
    }

    /// A call's outcome from its result block (the model's view: an error is
    /// the envelope as JSON text).
    fn outcome(&self, id: &str, content: &[ResultPart], is_error: bool) -> ToolOutcomeView {
        let text: String = content
            .iter()
            .map(|p| match p {
                ResultPart::Text { text } => text.clone(),
                ResultPart::Image { media_type, data } => {
                    format!("[image: {media_type}, {} bytes of base64]", data.len())
                }
            })
            .collect::<Vec<_>>()
            .join("\n");
        let envelope = is_error
            .then(|| serde_json::from_str::<Value>(&text).ok())
            .flatten();
        let (elapsed_ms, server_output) = self.results.get(id).cloned().unwrap_or_default();
        ToolOutcomeView {
            id: id.into(),
            ok: !is_error,
            text: envelope
                .as_ref()
                .and_then(|e| e["error"]["message"].as_str())
                .map_or(text.clone(), str::to_string),
            code: is_error.then(|| {
                envelope
                    .as_ref()
                    .and_then(|e| e["error"]["code"].as_str())
                    .unwrap_or("error")
                    .to_string()
            }),
            server_output,
            elapsed_ms,
            decided: self.decided.get(id).copied(),
            // Not in the transcript: a resumed call shows its result only.
            flow: None,
            dropped_nulls: Vec::new(),
        }
    }
}

/// A `tool_result`'s decision as the row's words (as the backend says them
/// for a call without a prompt).
fn from_decision(decision: &str) -> Option<Decided> {
    Some(match decision {
        "allow" => Decided::AllowedByPolicy,
        "approved" => Decided::ApprovedOnce,
        "denied" => Decided::NotApproved,
        "denied_by_policy" => Decided::DeniedByPolicy,
        "denied_by_flow" => Decided::DeniedByFlow,
        "refused_by_schema" => Decided::RefusedBySchema,
        "not_run" => Decided::NotRun,
        _ => return None,
    })
}

fn text(v: &Value) -> String {
    v.as_str().unwrap_or_default().to_string()
}

/// An agent as the store writes it: `"lead"`, `{"subagent": 1}`, `{"teammate": "x"}`.
fn origin(v: &Value) -> Requester {
    if let Some(n) = v["subagent"].as_u64() {
        return Requester::Subagent(u32::try_from(n).unwrap_or(u32::MAX));
    }
    if let Some(name) = v["teammate"].as_str() {
        return Requester::Teammate(name.to_string());
    }
    Requester::Lead
}

fn lines(path: &Path) -> impl Iterator<Item = Value> {
    std::fs::File::open(path)
        .ok()
        .into_iter()
        .flat_map(|f| BufReader::new(f).lines().map_while(Result::ok))
        .filter_map(|l| serde_json::from_str(&l).ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(path: &Path, lines: &[Value]) {
        let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
        std::fs::write(path, text).expect("write");
    }

    #[test]
    fn a_resumed_call_keeps_the_word_its_row_had() {
        let dir = tempfile::tempdir().expect("tempdir");
        let call = |id: &str| {
            serde_json::json!({"kind": "message", "agent": "lead", "message": {
                "role": "assistant",
                "content": [{"type": "tool_use", "id": id, "name": "mcp__demo_alpha__set",
                             "input": {"key": "k"}}]}})
        };
        let result = |id: &str| {
            serde_json::json!({"kind": "message", "agent": "lead", "message": {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": id,
                             "content": [{"type": "text", "text": "ok"}], "is_error": false}]}})
        };
        write(
            &dir.path().join("transcript.jsonl"),
            &[call("c1"), result("c1"), call("c2"), result("c2")],
        );
        // The TUI's `decided` record says more than the result's own
        // `approved` (a grant, not a prompt); without one, that word is used.
        write(
            &dir.path().join("audit.jsonl"),
            &[
                serde_json::json!({"event": "tool_result", "id": "c1", "decision": "approved", "elapsed": 3}),
                serde_json::json!({"event": "decided", "call": "c1", "decided": "session_grant", "grant": 2}),
                serde_json::json!({"event": "tool_result", "id": "c2", "decision": "approved", "elapsed": 3}),
            ],
        );
        let decided: Vec<Option<Decided>> = read(dir.path())
            .into_iter()
            .filter_map(|item| match item {
                HistoryItem::Call(call) => call.1.map(|o| o.decided),
                _ => None,
            })
            .collect();
        assert_eq!(
            decided,
            [Some(Decided::SessionGrant(2)), Some(Decided::ApprovedOnce)]
        );
    }
}
