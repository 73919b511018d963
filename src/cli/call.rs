//! `mcp-harness call ALIAS TOOL --args JSON`: one call through the full pipeline
//! (schema check, policy, timeout, error envelope), for scripting and debugging.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use serde_json::{Value, json};

use super::{call_progress, exit, interruptible, json as out_json, load_config, out, render};
use crate::mcp::names::{EXPOSED_PREFIX, exposed_name};
use crate::mcp::{
    CallOutcome, ConnectError, ConnectReport, FlagApprover, Hub, ServerAlias, ToolError,
    ToolErrorCode,
};
use crate::sanitize::inert_line;

#[derive(Debug, Args)]
pub struct CallArgs {
    /// The server alias, as configured
    pub alias: String,
    /// The tool: its name as the server publishes it, or its exposed mcp__ name
    pub tool: String,
    /// The arguments, a JSON object
    #[arg(long, value_name = "JSON", default_value = "{}")]
    pub args: String,
    /// Approve the call if the local policy says "confirm" (otherwise it is refused)
    #[arg(long)]
    pub yes: bool,
    /// Print one JSON object (a versioned contract: docs/src/json.md)
    #[arg(long)]
    pub json: bool,
}

pub async fn run(config: Option<PathBuf>, args: CallArgs) -> ExitCode {
    let arguments = match super::arguments_json(&args.args) {
        Ok(v) => v,
        Err(code) => return code,
    };
    let config = match load_config(config) {
        Ok(c) => c,
        Err(code) => return code,
    };
    let mut hub = super::hub_builder(
        &config,
        crate::mcp::EventSink::forward(call_progress::printer()),
    );
    // A session directory of its own: a result over max_result_bytes is kept
    // whole in its results/, as in the TUI.
    match crate::logging::data_dir().map(|d| crate::store::Store::create(&d)) {
        Some(Ok(store)) => hub = hub.results_dir(store.dir().join("results")),
        Some(Err(e)) => {
            eprintln!("mcp-harness: no session directory ({e}); a large result will be cut")
        }
        None => {}
    }
    let hub = hub.build();
    interruptible(&hub, call(&hub, args, arguments)).await
}

async fn call(hub: &Hub, args: CallArgs, arguments: Value) -> ExitCode {
    let report = match hub.connect(&args.alias).await {
        Ok(report) => report,
        Err(e) => {
            eprintln!("mcp-harness: {e}");
            return ExitCode::from(exit::USAGE);
        }
    };
    eprint!("{}", render::pinned_note(&args.alias, &report.pins));
    if let Err(e) = &report.outcome {
        hub.shutdown().await;
        print_connect_error(&report, e, args.json);
        return ExitCode::from(exit::FAILURE);
    }
    let name = if args.tool.starts_with(EXPOSED_PREFIX) {
        args.tool.clone()
    } else {
        exposed_name(&ServerAlias::new(args.alias.as_str()), &args.tool)
    };
    let outcome = hub
        .call(
            &hub.snapshot(),
            &name,
            arguments,
            &FlagApprover { approve: args.yes },
        )
        .await;
    hub.shutdown().await;
    let ok = outcome.result.is_ok();
    if args.json {
        let mut line = match &outcome.result {
            Ok(output) => json!({
                "ok": true,
                "content": output.content,
                "structured_content": output.structured_content,
                "truncated": output.truncated,
            }),
            Err(error) => json!({ "ok": false, "error": error }),
        };
        if let Some(server) = &outcome.server_output {
            line["server_output"] = json!(server);
        }
        if !outcome.dropped_nulls.is_empty() {
            line["dropped_nulls"] = json!(outcome.dropped_nulls);
        }
        out::println(&out_json::to_line(&line));
    } else {
        if !outcome.dropped_nulls.is_empty() {
            eprintln!(
                "note: left out before validation (null where the schema admits none): {}",
                inert_line(&outcome.dropped_nulls.join(", "), 300)
            );
        }
        match &outcome.result {
            Ok(output) => {
                out::print(&render::content(&output.content));
                if output.truncated
                    && let Some(dir) = hub.results_dir()
                {
                    eprintln!("mcp-harness: whole results are kept in {}", dir.display());
                }
                if let Some(structured) = &output.structured_content {
                    out::println(&format!(
                        "structured content: {}",
                        inert_line(&structured.to_string(), 2000)
                    ));
                }
            }
            Err(error) => print_tool_error(&report, &args.tool, error, &outcome, args.yes),
        }
    }
    if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(exit::FAILURE)
    }
}

/// A connection that was rejected or failed, as `call` (and `bench`) report it.
pub(super) fn print_connect_error(report: &ConnectReport, e: &ConnectError, json: bool) {
    if json {
        let mut error = json!({
            "code": e.code, "message": e.message, "hint": e.hint,
            "alias": report.alias.as_str(), "tools": e.tools,
        });
        if let Some(diff) = &e.policy_diff {
            error["policy_diff"] = json!(diff);
        }
        if !e.changes().is_empty() {
            error["changes"] = json!(e.changes());
        }
        let mut line = json!({ "ok": false, "error": error });
        // One shape for server output in `call`: a string, present only when
        // the server said something.
        if !e.server_output.is_empty() {
            line["server_output"] = json!(e.server_output.join("\n"));
        }
        out::println(&out_json::to_line(&line));
    } else {
        eprint!("{}", render::connect_error(report.alias.as_str(), e));
    }
}

/// A call's error envelope on stderr, with what the operator can do about it.
pub(super) fn print_tool_error(
    report: &ConnectReport,
    requested: &str,
    error: &ToolError,
    outcome: &CallOutcome,
    yes: bool,
) {
    eprintln!("error: {}: {}", error.code, error.message);
    for e in &error.errors {
        eprintln!(
            "  at `{}`: {}",
            e.instance_path,
            inert_line(&e.message, 300)
        );
    }
    if error.code == ToolErrorCode::McpPermissionDenied && !yes {
        eprintln!("  (pass --yes to approve tools whose policy is \"confirm\")");
    }
    if error.code == ToolErrorCode::McpUnknownTool {
        // The name as typed: a remote name, or an exposed `mcp__alias__tool`.
        let typed = requested
            .strip_prefix(EXPOSED_PREFIX)
            .and_then(|rest| rest.split_once("__"))
            .map_or(requested, |(_, tool)| tool);
        if let Some(near) =
            crate::config::closest(typed, report.published.iter().map(|t| t.name.as_str()))
        {
            eprintln!("  did you mean `{}`?", inert_line(near, 80));
        }
        let names: Vec<String> = report
            .published
            .iter()
            .map(|t| inert_line(&t.name, 80))
            .collect();
        eprintln!(
            "  `{}` publishes: {}",
            report.alias.as_str(),
            names.join(", ")
        );
    }
    eprint!(
        "{}",
        render::server_output(outcome.server_output.as_deref().unwrap_or_default())
    );
}
