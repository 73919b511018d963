//! `mcp-harness run --prompt TEXT`: the same agent loop, headless. `confirm`
//! calls are decided by `--approve` (default `never`), so a headless run never
//! waits for a human. `--json` prints one event per line.

use std::io::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use clap::{Args, ValueEnum};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::out::Out;
use super::{exit, interrupted, json as out_json, load_config, render};
use crate::agent::events::{AgentEvent, TurnEnd};
use crate::mcp::{FlagApprover, McpEvent};
use crate::sanitize::{inert, inert_line};
use crate::session::{self, SessionEvent, SessionOptions};

#[derive(Debug, Args)]
pub struct RunArgs {
    /// What to ask the Lead agent
    #[arg(long, value_name = "TEXT")]
    pub prompt: String,
    /// How to decide tools whose local policy is "confirm"
    #[arg(long, value_enum, default_value_t = Approve::Never)]
    pub approve: Approve,
    /// Print one JSON event per line (a versioned contract: docs/src/json.md)
    #[arg(long)]
    pub json: bool,
    /// Continue an earlier session (the newest one, or ID); its MCP connections are not restored
    #[arg(long, value_name = "ID", num_args = 0..=1, default_missing_value = "")]
    pub resume: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Approve {
    /// Deny every "confirm" call (the model is told)
    Never,
    /// Approve every "confirm" call
    Always,
}

pub async fn run(config: Option<PathBuf>, args: RunArgs) -> ExitCode {
    let config = match load_config(config) {
        Ok(c) => c,
        Err(code) => return code,
    };
    if !session::has_model(&config) {
        return no_model(args.json);
    }
    let options = SessionOptions {
        resume: args
            .resume
            .as_ref()
            .map(|id| (!id.is_empty()).then(|| id.clone())),
        persist: true,
        workspace: None,
        data_dir: None,
    };
    let approver = Arc::new(FlagApprover {
        approve: args.approve == Approve::Always,
    });
    let mut session = match session::start(&config, approver, options) {
        Ok(s) => s,
        Err(e) => {
            let _ = writeln!(std::io::stderr(), "mcp-harness: {e}");
            return ExitCode::from(exit::USAGE);
        }
    };
    let store = session.store.clone();
    let mut events = session.events;
    let json_mode = args.json;
    // Events are still drained and audited after stdout is gone.
    let printer = tokio::spawn(async move {
        let mut out = Out::default();
        while let Some(event) = events.recv().await {
            if let Some(store) = &store {
                event.audit(store);
            }
            match event {
                SessionEvent::Agent(event) => print_agent(&mut out, &event, json_mode),
                SessionEvent::Mcp(event) => print_mcp(&mut out, &event, json_mode),
                SessionEvent::Approval { .. } => {}
            }
        }
        out
    });
    // Ctrl-C / SIGTERM interrupt the turn: in-flight calls are cancelled and the
    // transcript says so, then everything is closed.
    let cancel = CancellationToken::new();
    // Which signal it was decides the exit status (130 for Ctrl-C, 143 for SIGTERM).
    let signal = Arc::new(std::sync::atomic::AtomicU8::new(0));
    let watcher = tokio::spawn({
        let (cancel, signal) = (cancel.clone(), Arc::clone(&signal));
        async move {
            signal.store(interrupted().await, std::sync::atomic::Ordering::SeqCst);
            cancel.cancel();
        }
    });
    let end = session.lead.send(&args.prompt, &cancel).await;
    watcher.abort();
    session.hub.shutdown().await;
    drop(session.lead);
    drop(session.hub);
    let mut out = printer.await.unwrap_or_default();
    let id = session.store.as_ref().map(|s| s.id().to_string());
    if json_mode {
        out.line(&out_json::to_line(
            &json!({"event": "done", "end": end, "session": id}),
        ));
    } else if let Some(id) = &id {
        let _ = writeln!(std::io::stderr(), "\n[session {id}: {}]", end_label(&end));
    }
    match end {
        TurnEnd::Completed => ExitCode::SUCCESS,
        TurnEnd::Interrupted => match signal.load(std::sync::atomic::Ordering::SeqCst) {
            0 => ExitCode::from(130),
            signal => ExitCode::from(128 + signal),
        },
        _ => ExitCode::from(exit::FAILURE),
    }
}

/// A config of the operator's own without a model: nothing to run (the
/// scripted demo is the embedded default's alone). Exit status 2, as for a
/// config that cannot be used; `--json` still ends with its `done` line.
fn no_model(json_mode: bool) -> ExitCode {
    let message = crate::agent::model::unconfigured::NO_MODEL;
    if json_mode {
        let mut out = Out::default();
        out.line(&out_json::to_line(&json!({
            "event": "error", "agent": "lead", "code": "no_model", "message": message,
        })));
        let end = TurnEnd::Failed {
            message: message.to_string(),
        };
        out.line(&out_json::to_line(
            &json!({"event": "done", "end": end, "session": null}),
        ));
    }
    let _ = writeln!(std::io::stderr(), "mcp-harness: {message}");
    ExitCode::from(exit::USAGE)
}

fn end_label(end: &TurnEnd) -> String {
    match end {
        TurnEnd::Completed => "completed".into(),
        TurnEnd::Interrupted => "interrupted".into(),
        TurnEnd::StepLimit { steps } => format!("stopped at the step limit ({steps})"),
        TurnEnd::Failed { message } => format!("failed: {message}"),
    }
}

fn print_agent(out: &mut Out, event: &AgentEvent, json_mode: bool) {
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
                ..
            } => {
                let mut line = json!({"event": "tool_result", "agent": agent, "id": id, "name": name,
                    "elapsed_ms": elapsed.as_millis() as u64});
                if !dropped_nulls.is_empty() {
                    line["dropped_nulls"] = json!(dropped_nulls);
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

fn print_mcp(out: &mut Out, event: &McpEvent, json_mode: bool) {
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
