//! `mcp-harness conformance-client URL` (hidden): the client side of the official
//! MCP conformance suite. The suite runs this command with the URL of its test
//! server and the scenario in `MCP_CONFORMANCE_SCENARIO`; we perform the scenario
//! with the product's own connection code (a hub with one in-memory server spec,
//! the same connect → list → expose → call pipeline as every other command).
//!
//! Elicitation requests are accepted with the requested schema's defaults — the
//! stand-in for an operator who submits a pre-filled form.

use std::collections::BTreeMap;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use clap::Args;
use serde_json::{Value, json};

use super::{exit, interruptible};
use crate::mcp::names::exposed_name;
use crate::mcp::{
    DefaultsElicitor, Effect, EventSink, FlagApprover, Hub, Limits, ServerAlias, ServerSpec,
    ToolPolicy, TransportSpec, Vars,
};
use crate::sanitize::inert_line;

/// The variable the conformance suite sets to the scenario's name.
pub const SCENARIO_VAR: &str = "MCP_CONFORMANCE_SCENARIO";

const ALIAS: &str = "conformance";
const TIMEOUT: Duration = Duration::from_secs(20);

#[derive(Debug, Args)]
pub struct ConformanceArgs {
    /// The URL of the conformance suite's test server
    pub url: String,
}

/// The tool a scenario's server publishes and the arguments to call it with.
fn scenario_call(scenario: &str) -> Option<(&'static str, Value)> {
    match scenario {
        "tools_call" => Some(("add_numbers", json!({"a": 5, "b": 3}))),
        "elicitation-sep1034-client-defaults" => {
            Some(("test_client_elicitation_defaults", json!({})))
        }
        "sse-retry" => Some(("test_reconnection", json!({}))),
        _ => None,
    }
}

pub async fn run(args: ConformanceArgs) -> ExitCode {
    let scenario = std::env::var(SCENARIO_VAR).unwrap_or_default();
    println!("conformance scenario `{}` against {}", scenario, args.url);
    // Known scenarios carry their server's tool in the local policy, as an
    // operator's config would; others (auth/…) are probed first and every
    // published tool is put in the policy as `confirm` (what `policy ALIAS`
    // prints), then approved — the operator's explicit step, automated.
    let policy = match scenario_call(&scenario) {
        Some((tool, _)) => BTreeMap::from([(tool.to_string(), Effect::Allow)]),
        None if scenario == "initialize" => BTreeMap::new(),
        None => match probe(&args.url).await {
            Ok(tools) => tools.into_iter().map(|t| (t, Effect::Confirm)).collect(),
            Err(code) => return code,
        },
    };
    let hub = hub(&args.url, ToolPolicy::new(policy.clone()));
    interruptible(&hub, perform(&hub, &scenario, policy)).await
}

fn hub(url: &str, policy: ToolPolicy) -> Hub {
    let spec = ServerSpec {
        alias: ServerAlias::new(ALIAS),
        transport: TransportSpec::Http {
            url: url.to_string(),
            headers: Vec::new(),
        },
        connect_timeout: TIMEOUT,
        call_timeout: TIMEOUT,
        reset_timeout_on_progress: true,
        max_call: Duration::from_secs(600),
        max_message_bytes: crate::mcp::spec::DEFAULT_MAX_MESSAGE_BYTES,
        policy,
    };
    let limits = Limits {
        connect_timeout: TIMEOUT,
        call_timeout: TIMEOUT,
        close_grace: Duration::from_millis(500),
        ..Limits::default()
    };
    let hub = Hub::new(
        vec![spec],
        limits,
        Vars::from_process(),
        Vec::new(),
        EventSink::discard(),
    );
    hub.set_elicitor(Arc::new(DefaultsElicitor));
    hub
}

async fn probe(url: &str) -> Result<Vec<String>, ExitCode> {
    let hub = hub(url, ToolPolicy::new(BTreeMap::new()));
    let result = hub.probe(ALIAS).await;
    hub.shutdown().await;
    match result {
        Ok((_, tools)) => Ok(tools.into_iter().map(|t| t.name).collect()),
        Err(e) => {
            println!(
                "connect failed: {}: {}",
                e.code,
                inert_line(&e.message, 500)
            );
            Err(ExitCode::from(exit::FAILURE))
        }
    }
}

async fn perform(hub: &Hub, scenario: &str, policy: BTreeMap<String, Effect>) -> ExitCode {
    let report = match hub.connect(ALIAS).await {
        Ok(report) => report,
        Err(e) => {
            println!("connect failed: {e}");
            return ExitCode::from(exit::FAILURE);
        }
    };
    if let Some(server) = &report.server {
        println!(
            "connected: {} {} (protocol {})",
            inert_line(&server.name, 60),
            inert_line(&server.version, 30),
            inert_line(&server.protocol_version, 20)
        );
    }
    if let Err(e) = &report.outcome {
        println!(
            "connect failed: {}: {}",
            e.code,
            inert_line(&e.message, 500)
        );
        hub.shutdown().await;
        return ExitCode::from(exit::FAILURE);
    }
    let calls: Vec<(String, Value)> = match scenario_call(scenario) {
        Some((tool, args)) => vec![(tool.to_string(), args)],
        None => policy.into_keys().map(|t| (t, json!({}))).collect(),
    };
    let mut ok = true;
    for (tool, arguments) in calls {
        let name = exposed_name(&ServerAlias::new(ALIAS), &tool);
        let outcome = hub
            .call(
                &hub.snapshot(),
                &name,
                arguments,
                &FlagApprover { approve: true },
            )
            .await;
        match &outcome.result {
            Ok(output) => {
                let text: Vec<&str> = output
                    .content
                    .iter()
                    .filter_map(|b| b.get("text").and_then(Value::as_str))
                    .collect();
                println!("{tool}: ok: {}", inert_line(&text.join(" "), 500));
            }
            Err(error) => {
                ok = false;
                println!(
                    "{tool}: {}: {}",
                    error.code,
                    inert_line(&error.message, 500)
                );
            }
        }
    }
    hub.shutdown().await;
    if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(exit::FAILURE)
    }
}
