//! How `run` prints what happens: the Lead's and the MCP layer's events, as
//! text for a person (through `sanitize`) or one JSON line each for `--json`.

use std::io::Write as _;

use serde_json::{Value, json};

use super::super::out::Out;
use super::super::{json as out_json, render};
use crate::agent::events::AgentEvent;
use crate::mcp::McpEvent;
use crate::sanitize::{inert, inert_line};

pub(super) fn print_agent(out: &mut Out, event: &AgentEvent, json_mode: bool) {
    if json_mode {
        let line = match event {
            AgentEvent::AssistantText { agent, text } => {
                json!({"event": "assistant_text", "agent": agent, "text": text})
            }
            AgentEvent::ToolCall {
                agent,
                id,
                name,
                arguments,
                origin,
                effect,
            } => json!({
                "event": "tool_call", "agent": agent, "id": id, "name": name,
                "arguments": arguments, "origin": origin, "effect": effect,
            }),
            AgentEvent::ToolResult {
                agent,
                id,
                name,
                outcome,
                server_output,
                elapsed,
                dropped_nulls,
                redacted,
                ..
            } => {
                let mut line = json!({"event": "tool_result", "agent": agent, "id": id, "name": name,
                    "elapsed_ms": elapsed.as_millis() as u64});
                if !dropped_nulls.is_empty() {
                    line["dropped_nulls"] = json!(dropped_nulls);
                }
                if !redacted.is_empty() {
                    line["redacted"] = json!(redacted);
                }
                match outcome {
                    Ok(text) => {
                        line["ok"] = json!(true);
                        line["content"] = json!(text);
                    }
                    Err(error) => {
                        line["ok"] = json!(false);
                        line["error"] = json!(error);
                    }
                }
                if let Some(server) = server_output {
                    line["server_output"] = json!(server);
                }
                line
            }
            AgentEvent::Notice { agent, text } => {
                json!({"event": "notice", "agent": agent, "text": text})
            }
            AgentEvent::Error { agent, message } => {
                json!({"event": "error", "agent": agent, "message": message})
            }
            // Which tools a request offered, when it did not offer them all.
            AgentEvent::Request {
                agent,
                snapshot_version,
                offered,
                searched_from: Some(exposed),
                ..
            } => json!({"event": "request", "agent": agent, "snapshot_version": snapshot_version,
                        "exposed": exposed, "offered": offered}),
            AgentEvent::Request { .. }
            | AgentEvent::TextDelta { .. }
            | AgentEvent::TurnDone { .. } => return,
        };
        out.line(&out_json::to_line(&line));
        return;
    }
    match event {
        AgentEvent::TextDelta { text, .. } => out.text(&inert(text, true)),
        AgentEvent::AssistantText { .. } => out.line(""),
        AgentEvent::ToolCall {
            agent,
            name,
            arguments,
            ..
        } => {
            out.line(&format!(
                "  → [{agent}] {name} {}",
                inert_line(&arguments.to_string(), 200)
            ));
        }
        AgentEvent::ToolResult {
            outcome,
            server_output,
            dropped_nulls,
            ..
        } => {
            if !dropped_nulls.is_empty() {
                out.line(&format!(
                    "  (left out: null for {})",
                    inert_line(&dropped_nulls.join(", "), 200)
                ));
            }
            match outcome {
                Ok(text) => out.line(&format!("  ← {}", inert_line(text, 200))),
                Err(e) => out.line(&format!("  ← {}: {}", e.code, inert_line(&e.message, 300))),
            }
            if let Some(server) = server_output {
                out.text(&render::server_output(server));
            }
        }
        AgentEvent::Notice { text, .. } => out.line(&format!("  [notice] {text}")),
        AgentEvent::Error { message, .. } => {
            let _ = writeln!(std::io::stderr(), "  [error] {message}");
        }
        AgentEvent::Request {
            offered,
            searched_from: Some(exposed),
            ..
        } => {
            let mcp = offered.iter().filter(|n| n.starts_with("mcp__")).count();
            out.line(&format!(
                "  [request] {mcp} of {exposed} MCP tools offered, search_tools for the rest"
            ));
        }
        AgentEvent::Request { .. } | AgentEvent::TurnDone { .. } => {}
    }
}

/// `flags` (exposed name → flags) on a registry event, when any tool has one.
fn with_flags(mut line: Value, flags: &crate::mcp::events::ToolFlags) -> Value {
    if !flags.is_empty() {
        line["flags"] = json!(flags);
    }
    line
}

pub(super) fn print_mcp(out: &mut Out, event: &McpEvent, json_mode: bool) {
    if let McpEvent::Pins {
        alias,
        change,
        tools,
    } = event
    {
        if json_mode {
            out.line(&out_json::to_line(
                &json!({"event": "pins", "change": change, "alias": alias, "tools": tools}),
            ));
        } else {
            let what = match change {
                crate::mcp::PinChange::Created => "pinned (first use)",
                crate::mcp::PinChange::Accepted => "accepted",
                crate::mcp::PinChange::Violated => "differ from their pins",
            };
            out.line(&format!(
                "  [pins] {} tool definitions of {alias}: {what}",
                tools.len()
            ));
        }
        return;
    }
    let line: Value = match event {
        // A call that runs as a task, and a call's progress: each names its call.
        McpEvent::Task {
            alias,
            call,
            tool,
            task,
            state,
            message,
            ..
        } => {
            if json_mode {
                out.line(&out_json::to_line(&json!({
                    "event": "task", "id": call, "name": tool, "alias": alias,
                    "task": task, "state": state, "message": message,
                })));
            }
            return;
        }
        McpEvent::Progress {
            call: Some(call),
            progress,
            total,
            message,
            ..
        } => {
            if json_mode {
                out.line(&out_json::to_line(&json!({
                    "event": "progress", "id": call, "progress": progress,
                    "total": total, "message": message,
                })));
            }
            return;
        }
        McpEvent::FlowEscalated {
            call,
            tool,
            alias,
            rule,
            tainted_by,
        }
        | McpEvent::FlowDenied {
            call,
            tool,
            alias,
            rule,
            tainted_by,
        } => {
            let escalated = matches!(event, McpEvent::FlowEscalated { .. });
            if json_mode {
                out.line(&out_json::to_line(&json!({
                    "event": if escalated { "flow_escalated" } else { "flow_denied" },
                    "id": call, "name": tool, "alias": alias, "rule": rule, "tainted_by": tainted_by,
                })));
            } else {
                let by: Vec<String> = tainted_by
                    .iter()
                    .map(|t| format!("{} ({})", t.call, t.tool))
                    .collect();
                out.line(&format!(
                    "  [flow] {tool}: {} (tainted by {})",
                    if escalated {
                        "escalated to approval"
                    } else {
                        "denied"
                    },
                    by.join(", ")
                ));
            }
            return;
        }
        McpEvent::Tainted { scope, taint } => {
            if json_mode {
                out.line(&out_json::to_line(&json!({
                    "event": "tainted", "scope": scope, "taint": taint,
                })));
            }
            return;
        }
        McpEvent::Redacted {
            alias,
            call,
            tool,
            kinds,
        } => {
            if json_mode {
                out.line(&out_json::to_line(&json!({
                    "event": "redacted", "id": call, "name": tool, "alias": alias, "kinds": kinds,
                })));
            } else {
                let kinds: Vec<&str> = kinds.iter().map(|k| k.as_str()).collect();
                out.line(&format!(
                    "  [redacted] {tool}: {} withheld from the model",
                    kinds.join(", ")
                ));
            }
            return;
        }
        McpEvent::Suspicious {
            alias,
            tool,
            outcome,
            hits,
        } => {
            if json_mode {
                out.line(&out_json::to_line(&json!({
                    "event": "suspicious", "alias": alias, "tool": tool, "outcome": outcome,
                    "hits": hits,
                })));
            } else {
                for hit in hits {
                    out.line(&format!(
                        "  [suspicious] {alias}: {} — rule {} ({}) in {}: {}",
                        inert_line(tool, 80),
                        hit.rule,
                        hit.reason,
                        hit.field,
                        inert_line(&hit.phrase, 160)
                    ));
                }
            }
            return;
        }
        McpEvent::Registered {
            alias,
            connection,
            protocol_version,
            tools,
            flags,
            version,
        } => with_flags(
            json!({
                "event": "registry", "change": "registered", "alias": alias, "connection": connection,
                "protocol_version": protocol_version, "tools": tools, "version": version,
            }),
            flags,
        ),
        McpEvent::Revoked {
            alias,
            connection,
            tools,
            cause,
            version,
        } => json!({
            "event": "registry", "change": "revoked", "alias": alias, "connection": connection,
            "tools": tools, "cause": cause, "version": version,
        }),
        McpEvent::ToolsChanged {
            alias,
            connection,
            added,
            removed,
            changed,
            tools,
            flags,
            version,
        } => with_flags(
            json!({
                "event": "registry", "change": "updated", "alias": alias, "connection": connection,
                "tools": tools, "added": added, "removed": removed, "changed": changed, "version": version,
            }),
            flags,
        ),
        _ => return,
    };
    if json_mode {
        out.line(&out_json::to_line(&line));
    } else {
        let sign = match line["change"].as_str() {
            Some("registered") => "+",
            Some("updated") => "~",
            _ => "−",
        };
        let count = line["tools"].as_array().map_or(0, Vec::len);
        let cause = line
            .get("cause")
            .map(|c| format!(" ({})", c["kind"].as_str().unwrap_or("")))
            .unwrap_or_default();
        out.line(&format!(
            "  [registry v{}] {sign}{count} tools of {}{cause}",
            line["version"],
            line["alias"].as_str().unwrap_or("")
        ));
    }
}
