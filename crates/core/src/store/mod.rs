//! The session on disk: a transcript (every message of every agent, notices) and
//! an audit log (connects, disconnects, revocations with cause, every tool call,
//! approvals and denials), as JSON lines in the data dir, one folder per session,
//! handed to one writer thread as things happen ([`writer`]), so a crash loses
//! nothing already shown and no caller waits on the disk.

mod writer;

use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::{Value, json};

use crate::agent::conversation::{Message, Role};
use crate::agent::events::{AgentEvent, AgentId};
use crate::agent::runner::Journal;
use crate::mcp::{CallId, McpEvent, Requester};
use writer::{Log, Writer};

/// One session's files.
pub struct Store {
    id: String,
    dir: PathBuf,
    writer: Writer,
}

/// A session read back for `--resume`.
pub struct Resumed {
    pub store: Store,
    /// The Lead's conversation, consecutive turns of one role merged.
    pub conversation: Vec<Message>,
    /// Aliases that were connected when the session ended (not reconnected).
    pub connected: Vec<String>,
    /// What the Lead's session held when it ended (flow control): kept.
    pub taint: crate::mcp::flows::Taint,
}

impl Store {
    /// A new session under `data_dir/sessions/`.
    pub fn create(data_dir: &Path) -> std::io::Result<Self> {
        let id = format!(
            "{}-{:04x}",
            chrono::Utc::now().format("%Y%m%d-%H%M%S"),
            std::process::id() & 0xffff
        );
        Self::open_dir(id, data_dir)
    }

    /// Reopens session `id` (or the newest one) and reads its conversation back.
    pub fn resume(data_dir: &Path, id: Option<&str>) -> std::io::Result<Resumed> {
        let sessions = data_dir.join("sessions");
        let id = match id {
            Some(id) => id.to_string(),
            None => newest(&sessions)?
                .ok_or_else(|| std::io::Error::other("there is no earlier session to resume"))?,
        };
        if id.contains(['/', '\\']) || !sessions.join(&id).is_dir() {
            return Err(std::io::Error::other(format!(
                "no session `{id}` in {}",
                sessions.display()
            )));
        }
        let store = Self::open_dir(id, data_dir)?;
        let conversation = read_conversation(&store.dir.join("transcript.jsonl"))?;
        let connected = read_connected(&store.dir.join("audit.jsonl"))?;
        let taint = read_taint(&store.dir.join("audit.jsonl"))?;
        Ok(Resumed {
            store,
            conversation,
            connected,
            taint,
        })
    }

    fn open_dir(id: String, data_dir: &Path) -> std::io::Result<Self> {
        let dir = data_dir.join("sessions").join(&id);
        // Owner-only: the logs quote results (`results/` is owner-only too).
        crate::private_dir::create_dir(&dir)?;
        let append = |name: &str| crate::private_dir::append(&dir.join(name));
        Ok(Self {
            writer: Writer::start(append("transcript.jsonl")?, append("audit.jsonl")?)?,
            id,
            dir,
        })
    }

    pub fn id(&self) -> &str {
        &self.id
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Returns once every record handed over so far is written: a command
    /// calls it before it exits (on Ctrl-C and SIGTERM too), since the store
    /// may outlive the command in a task the runtime abandons.
    pub fn flush(&self) {
        self.writer.flush();
    }

    /// Records an approval decision about call `call`.
    pub(crate) fn audit_approval(
        &self,
        call: &CallId,
        tool: &str,
        requester: &Requester,
        (approved, by): (bool, &str),
        (definition, arguments_sha256): (Option<&str>, &str),
    ) {
        self.audit(&json!({
            "event": "approval", "call": call, "tool": tool,
            "requested_by": requester.record_label(),
            "decision": if approved { "approved" } else { "denied" }, "by": by,
            "definition_sha256": definition, "arguments_sha256": arguments_sha256,
        }));
    }

    /// Records how call `call` was decided, in the words of the call's row
    /// (`approved_once`, `session_grant`, …), so a resumed session shows them.
    pub(crate) fn audit_decided(&self, call: &CallId, decided: &str, grant: Option<u64>) {
        self.audit(&json!({
            "event": "decided", "call": call, "decided": decided, "grant": grant,
        }));
    }

    /// Records what belongs in the audit log among the MCP layer's events: every
    /// state change, registration, revocation (with its cause: a rejection after
    /// `tools/list_changed` says what changed) and tool-set replacement.
    pub(crate) fn audit_mcp(&self, event: &McpEvent) {
        match event {
            McpEvent::AliasState { .. }
            | McpEvent::Registered { .. }
            | McpEvent::Revoked { .. }
            | McpEvent::ToolsChanged { .. }
            | McpEvent::Task { .. }
            | McpEvent::Redacted { .. }
            | McpEvent::Suspicious { .. }
            | McpEvent::FlowEscalated { .. }
            | McpEvent::FlowDenied { .. }
            | McpEvent::Tainted { .. }
            | McpEvent::TaintCleared { .. } => {
                self.audit(event);
            }
            // One record per tool: alias, tool, old and new sha256.
            McpEvent::Pins {
                alias,
                change,
                tools,
            } => {
                for record in tools {
                    self.audit(&json!({
                        "event": change.audit_event(), "alias": alias, "tool": record.tool,
                        "old_sha256": record.old_sha256, "new_sha256": record.new_sha256,
                    }));
                }
            }
            McpEvent::ToolListChanged { .. }
            | McpEvent::OfferingsChanged { .. }
            | McpEvent::ResourceUpdated { .. }
            | McpEvent::Progress { .. } => {}
        }
    }

    /// Records every tool call and its outcome.
    pub(crate) fn audit_agent(&self, event: &AgentEvent) {
        match event {
            // Credentials withheld from the model are the operator's to see,
            // never the log's: the `redacted` record names their kinds.
            AgentEvent::ToolResult { redacted, .. } if !redacted.is_empty() => {
                let mut record = to_value(event);
                if let Some(output) = record.get_mut("server_output") {
                    *output = json!("(credentials withheld from the model; not logged)");
                }
                self.writer.line(Log::Audit, record);
            }
            AgentEvent::ToolCall { .. } | AgentEvent::ToolResult { .. } => self.audit(event),
            _ => {}
        }
    }

    /// Records a call of an outside client of the gateway (`serve`): the
    /// client by its configured name, the call, the tool, the decision and
    /// the envelope it got when refused or failed.
    pub fn audit_client_call(&self, record: &crate::mcp::gateway::ClientCallRecord<'_>) {
        let mut line = serde_json::to_value(record).unwrap_or(Value::Null);
        if let Value::Object(map) = &mut line {
            map.insert("event".into(), json!("client_call"));
            map.insert(
                "requested_by".into(),
                json!(Requester::Client(record.client.to_string()).record_label()),
            );
        }
        self.writer.line(Log::Audit, line);
    }

    /// Records server content the operator brought in (an attached resource, a
    /// prompt) and how it went (`ok`, or the error).
    pub fn audit_server_content(&self, alias: &str, what: &str, outcome: &str) {
        self.audit(&json!({"event": "server_content", "alias": alias, "what": what, "by": "operator", "outcome": outcome}));
    }

    fn audit(&self, record: &impl Serialize) {
        self.writer.line(Log::Audit, to_value(record));
    }
}

impl Journal for Store {
    fn message(&self, agent: &AgentId, message: &Message) {
        self.writer.line(
            Log::Transcript,
            json!({"kind": "message", "agent": agent, "message": message}),
        );
    }

    fn notice(&self, agent: &AgentId, text: &str) {
        self.writer.line(
            Log::Transcript,
            json!({"kind": "notice", "agent": agent, "text": text}),
        );
    }
}

fn to_value(record: &impl Serialize) -> Value {
    serde_json::to_value(record).unwrap_or(Value::Null)
}

fn newest(sessions: &Path) -> std::io::Result<Option<String>> {
    if !sessions.is_dir() {
        return Ok(None);
    }
    let mut ids: Vec<String> = std::fs::read_dir(sessions)?
        .flatten()
        .filter(|e| e.path().is_dir())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    ids.sort();
    Ok(ids.pop())
}

fn lines(path: &Path) -> std::io::Result<impl Iterator<Item = Value>> {
    let file = File::open(path)?;
    // A line cut short by a crash is skipped, not fatal.
    Ok(BufReader::new(file)
        .lines()
        .map_while(Result::ok)
        .filter_map(|l| serde_json::from_str(&l).ok()))
}

fn read_conversation(path: &Path) -> std::io::Result<Vec<Message>> {
    let mut conversation: Vec<Message> = Vec::new();
    for record in lines(path)? {
        if record["kind"] != "message" || record["agent"] != json!("lead") {
            continue;
        }
        let Ok(message) = serde_json::from_value::<Message>(record["message"].clone()) else {
            continue;
        };
        match conversation.last_mut() {
            Some(last) if last.role == message.role => last.content.extend(message.content),
            _ => conversation.push(message),
        }
    }
    // A turn cut off mid-way (tool calls without results) cannot be sent again.
    if conversation
        .last()
        .is_some_and(|m| m.role == Role::Assistant && m.tool_calls().next().is_some())
    {
        conversation.pop();
    }
    Ok(conversation)
}

/// What the Lead's session held when it ended (flow control): the last
/// `tainted` record of its scope, unless the operator cleared it after.
/// Outside clients' sessions end with their connections and are not resumed.
fn read_taint(path: &Path) -> std::io::Result<crate::mcp::flows::Taint> {
    use crate::mcp::flows::{Taint, Tainter};
    let tainters = |list: &Value| -> Vec<Tainter> {
        list.as_array()
            .into_iter()
            .flatten()
            .filter_map(|t| {
                Some(Tainter {
                    call: t["call"].as_str()?.into(),
                    tool: t["tool"].as_str()?.to_string(),
                })
            })
            .collect()
    };
    let mut taint = Taint::default();
    for record in lines(path)? {
        if record["scope"]["kind"] != "lead" {
            continue;
        }
        match record["event"].as_str() {
            Some("tainted") => {
                taint = Taint {
                    untrusted: tainters(&record["taint"]["untrusted"]),
                    private: tainters(&record["taint"]["private"]),
                };
            }
            Some("taint_cleared") => taint = Taint::default(),
            _ => {}
        }
    }
    Ok(taint)
}

/// Aliases that were connected when the session ended: registered and never
/// revoked (a crash), or revoked only because the harness shut down.
fn read_connected(path: &Path) -> std::io::Result<Vec<String>> {
    let mut connected = std::collections::BTreeMap::new();
    for record in lines(path)? {
        let Some(alias) = record["alias"].as_str() else {
            continue;
        };
        match record["event"].as_str() {
            Some("registered") => connected.insert(alias.to_string(), true),
            Some("revoked") => {
                connected.insert(alias.to_string(), record["cause"]["kind"] == "shutdown")
            }
            _ => None,
        };
    }
    Ok(connected
        .into_iter()
        .filter(|(_, c)| *c)
        .map(|(alias, _)| alias)
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::conversation::{Block, ToolCall};
    use crate::mcp::{ConnectionId, RevokeCause, ServerAlias};

    #[test]
    fn a_session_reads_back_with_merged_turns_and_connected_aliases() {
        let data = tempfile::tempdir().unwrap();
        let store = Store::create(data.path()).unwrap();
        store.message(&AgentId::Lead, &Message::user_text("hello"));
        store.message(&AgentId::Lead, &Message::user_text(" again"));
        store.message(&AgentId::Subagent(1), &Message::user_text("not the lead"));
        store.message(
            &AgentId::Lead,
            &Message::assistant(vec![Block::Text { text: "hi".into() }]),
        );
        store.message(&AgentId::Lead, &Message::user_text("next"));
        store.message(
            &AgentId::Lead,
            &Message::assistant(vec![Block::ToolUse(ToolCall {
                id: "1".into(),
                name: "x".into(),
                input: json!({}),
            })]),
        );
        let registered = |alias: &str, id| McpEvent::Registered {
            alias: ServerAlias::new(alias),
            connection: ConnectionId(id),
            protocol_version: "2026-07-28".into(),
            tools: vec!["t".into()],
            flags: Default::default(),
            version: id,
        };
        let revoked = |alias: &str, id, cause| McpEvent::Revoked {
            alias: ServerAlias::new(alias),
            connection: ConnectionId(id),
            tools: vec!["t".into()],
            cause,
            version: id + 10,
        };
        store.audit_mcp(&registered("a", 1));
        store.audit_mcp(&registered("b", 2));
        store.audit_mcp(&revoked("b", 2, RevokeCause::Disconnected));
        store.audit_mcp(&revoked("a", 1, RevokeCause::Shutdown));
        let id = store.id().to_string();
        drop(store);
        let resumed = Store::resume(data.path(), Some(&id)).unwrap();
        // The trailing tool call never got its result (a crash): it is left out.
        assert_eq!(resumed.conversation.len(), 3, "{:?}", resumed.conversation);
        assert_eq!(resumed.conversation[0].text(), "hello again");
        assert_eq!(resumed.connected, ["a"]);
        assert_eq!(Store::resume(data.path(), None).unwrap().store.id(), id);
        assert!(Store::resume(data.path(), Some("../etc")).is_err());
    }

    #[test]
    fn tool_set_changes_and_rejections_after_list_changed_are_audited() {
        let data = tempfile::tempdir().unwrap();
        let store = Store::create(data.path()).unwrap();
        store.audit_mcp(&McpEvent::ToolsChanged {
            alias: ServerAlias::new("a"),
            connection: ConnectionId(1),
            added: vec![],
            removed: vec![],
            changed: vec!["mcp__a__lookup".into()],
            tools: vec!["mcp__a__lookup".into()],
            flags: Default::default(),
            version: 3,
        });
        store.audit_mcp(&McpEvent::Revoked {
            alias: ServerAlias::new("a"),
            connection: ConnectionId(1),
            tools: vec!["mcp__a__lookup".into()],
            cause: RevokeCause::PolicyViolation {
                code: crate::mcp::ConnectErrorCode::PolicyMismatch,
                message: "policy rule: …".into(),
                changes: crate::mcp::ToolChanges {
                    added: vec!["extra".into()],
                    ..Default::default()
                },
                definition_changes: Vec::new(),
            },
            version: 4,
        });
        store.flush();
        let lines: Vec<Value> = lines(&store.dir().join("audit.jsonl")).unwrap().collect();
        assert_eq!(lines[0]["event"], "tools_changed");
        assert_eq!(lines[0]["changed"], json!(["mcp__a__lookup"]));
        assert_eq!(lines[1]["cause"]["kind"], "policy_violation");
        assert_eq!(lines[1]["cause"]["code"], "policy_mismatch");
        assert_eq!(lines[1]["cause"]["changes"]["added"], json!(["extra"]));
    }
}
