//! `mcp-harness run --prompt TEXT`: the same agent loop, headless. `confirm`
//! calls are decided by `--approve` (default `never`), so a headless run never
//! waits for a human. `--json` prints one event per line.

use std::io::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use clap::{Args, ValueEnum};

mod events;
use events::{print_agent, print_mcp};
use serde_json::json;
use tokio_util::sync::CancellationToken;

use super::out::Out;
use super::{exit, interrupted, json as out_json, load_config};
use crate::agent::events::TurnEnd;
use crate::mcp::FlagApprover;
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
    if let Some(store) = &session.store {
        store.flush();
    }
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
