//! `mcp-harness conformance-client URL` (hidden): the client side of the official
//! MCP conformance suite. The suite runs this command with the URL of its test
//! server and the scenario in `MCP_CONFORMANCE_SCENARIO`; we perform the scenario
//! with the product's own connection code (a hub with one in-memory server spec,
//! the same connect → list → expose → call pipeline as every other command).
//!
//! Which calls it makes and at which revision is `calls`' business
//! (the scenario's context, else every tool with schema-made arguments).
//! Elicitation requests — and a server's input requests on 2026-07-28 — are
//! accepted with the requested schema's defaults: the stand-in for an operator
//! who submits a pre-filled form.

mod auth;
mod calls;
mod server;

use std::collections::BTreeMap;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use clap::Args;
use serde_json::Value;

use mcp_harness::interrupt::interruptible;
use mcp_harness::mcp::auth::{AuthSpec, Store};
use mcp_harness::mcp::names::exposed_name;
use mcp_harness::mcp::{
    DefaultsElicitor, Effect, EventSink, FlagApprover, Hub, Limits, ProtocolChoice, ServerAlias,
    ServerSpec, ToolPolicy, TransportSpec, Vars,
};
use mcp_harness::sanitize::inert_line;

/// The variable the conformance suite sets to the scenario's name.
pub const SCENARIO_VAR: &str = "MCP_CONFORMANCE_SCENARIO";

const ALIAS: &str = "conformance";
const TIMEOUT: Duration = Duration::from_secs(20);

#[derive(Debug, Args)]
pub struct ConformanceArgs {
    /// The URL of the conformance suite's test server
    pub url: String,
}

/// What the suite asked for.
struct Scenario {
    name: String,
    context: Value,
    protocol: ProtocolChoice,
}

impl Scenario {
    fn from_env() -> Self {
        let var = |name| std::env::var(name).ok();
        Self {
            name: var(SCENARIO_VAR).unwrap_or_default(),
            context: auth::context(),
            protocol: calls::protocol(var(calls::PROTOCOL_VAR).as_deref()),
        }
    }
}

/// `demo-server conformance [--http ADDR]`: the upstream of the suite's server
/// side, over Streamable HTTP or stdio.
pub async fn serve_upstream(
    http: Option<std::net::SocketAddr>,
    protocol: crate::DemoProtocol,
) -> anyhow::Result<()> {
    use rmcp::ServiceExt as _;
    crate::init_log("demo-conformance", false);
    let handler = server::ConformanceServer::new(protocol);
    match http {
        Some(addr) => crate::http::serve(handler, addr, false, None).await,
        None => {
            let service = handler.serve(rmcp::transport::stdio_pipes()).await?;
            service.waiting().await?;
            Ok(())
        }
    }
}

pub async fn run(args: ConformanceArgs) -> ExitCode {
    let scenario = Scenario::from_env();
    println!(
        "conformance scenario `{}` against {} (protocol {})",
        scenario.name,
        args.url,
        scenario.protocol.as_str()
    );
    // The server's tools are probed first and every published tool is put in
    // the policy as `confirm` (what `policy ALIAS` prints), then approved —
    // the operator's explicit step, automated. Tokens live in memory, shared
    // by the probe and the real connection.
    let setup = Setup {
        url: args.url,
        auth: auth::auth_spec(&scenario.name, &scenario.context),
        store: Arc::new(Store::memory()),
        protocol: scenario.protocol,
    };
    let policy = match probe(&setup).await {
        Ok(tools) => tools.into_iter().map(|t| (t, Effect::Confirm)).collect(),
        Err(code) => return code,
    };
    let hub = hub(&setup, ToolPolicy::new(policy));
    interruptible(&hub, perform(&hub, &scenario)).await
}

/// The scenario's server as the operator would configure it: its URL, the
/// sign-in settings, where tokens go, and the revision to speak.
struct Setup {
    url: String,
    auth: AuthSpec,
    store: Arc<Store>,
    protocol: ProtocolChoice,
}

fn hub(setup: &Setup, policy: ToolPolicy) -> Hub {
    let spec = ServerSpec {
        alias: ServerAlias::new(ALIAS),
        transport: TransportSpec::Http {
            url: setup.url.clone(),
            headers: Vec::new(),
            auth: Box::new(setup.auth.clone()),
            allow_insecure_http: false,
        },
        connect_timeout: TIMEOUT,
        call_timeout: TIMEOUT,
        reset_timeout_on_progress: true,
        max_call: Duration::from_secs(600),
        max_message_bytes: mcp_harness::mcp::spec::DEFAULT_MAX_MESSAGE_BYTES,
        idle_timeout: Limits::default().idle_timeout,
        policy,
        protocol: setup.protocol,
        tasks: Default::default(),
        task_timeout: TIMEOUT,
        pin: Default::default(),
        resource_read: mcp_harness::mcp::Effect::Confirm,
        max_concurrent_calls: mcp_harness::mcp::spec::MAX_CONCURRENT_CALLS,
        labels: Default::default(),
        extra_arguments: Default::default(),
    };
    let limits = Limits {
        connect_timeout: TIMEOUT,
        call_timeout: TIMEOUT,
        close_grace: Duration::from_millis(500),
        ..Limits::default()
    };
    let hub = Hub::builder(
        vec![spec],
        limits,
        Vars::from_process(),
        EventSink::discard(),
    )
    .elicitor(Arc::new(DefaultsElicitor));
    auth::prepare(hub, &setup.store).build()
}

async fn probe(setup: &Setup) -> Result<Vec<String>, ExitCode> {
    let hub = hub(setup, ToolPolicy::new(BTreeMap::new()));
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
            Err(ExitCode::FAILURE)
        }
    }
}

async fn perform(hub: &Hub, scenario: &Scenario) -> ExitCode {
    let report = match hub.connect(ALIAS).await {
        Ok(report) => report,
        Err(e) => {
            println!("connect failed: {e}");
            return ExitCode::FAILURE;
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
        return ExitCode::FAILURE;
    }
    let mut ok = true;
    for (tool, arguments) in calls::plan(&scenario.context, &report.published) {
        let Some(arguments) = arguments else {
            println!(
                "{}: skipped: no arguments fit its schema",
                inert_line(&tool, 60)
            );
            continue;
        };
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
        ExitCode::FAILURE
    }
}
