//! `mcp-harness check`: connect every configured server and report, per alias,
//! status, published tools, exposed tools with effects, and any rejection reason.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use comfy_table::{LineStyle, Table, TableStyle};
use serde::Serialize;

use super::{exit, hub_for, interruptible, json, load_config, out, render};
use crate::config::Config;
use crate::mcp::Hub;
use crate::mcp::flows::Labels;
use crate::mcp::policy::PolicyMismatch;
use crate::mcp::published::ToolFlag;
use crate::mcp::screen::{self, Suspicion};
use crate::mcp::spec::TransportKind;
use crate::mcp::undeclared::Undeclared;
use crate::mcp::{
    ConnectReport, DefinitionChange, Effect, FailureKind, PinState, ServerIdentity, ServerSpec,
};
use crate::sanitize::inert_line;

#[derive(Debug, Args)]
pub struct CheckArgs {
    /// Print one JSON object (a versioned contract: docs/src/json.md)
    #[arg(long)]
    pub json: bool,
}

#[derive(Serialize)]
struct Report {
    servers: Vec<ServerReport>,
}

#[derive(Serialize)]
struct ServerReport {
    alias: String,
    status: &'static str,
    error: Option<ErrorReport>,
    server: Option<ServerInfo>,
    /// What the poisoning screen found in the server's `instructions` (which
    /// no model is given): for the operator.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    instructions_suspicious: Vec<Suspicion>,
    published: Vec<PublishedReport>,
    exposed: Vec<ExposedReport>,
    /// What the server said (stderr tail, its error text): untrusted, operator-only.
    server_output: Vec<String>,
    /// Tools this connect pinned (trust on first use), and where.
    #[serde(skip)]
    pinned: Vec<String>,
    #[serde(skip)]
    lock: String,
}

/// Who the server says it is, and how the harness reached it (a local fact).
#[derive(Serialize)]
struct ServerInfo {
    #[serde(flatten)]
    identity: ServerIdentity,
    transport: TransportKind,
}

#[derive(Serialize)]
struct ErrorReport {
    code: String,
    message: String,
    hint: String,
    tools: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    policy_diff: Option<PolicyMismatch>,
    /// For `definition_changed`: each changed tool with its diff.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    changes: Vec<DefinitionChange>,
}

#[derive(Serialize)]
struct PublishedReport {
    name: String,
    /// Empty when the server gave none (the contract promises a string).
    description: String,
    /// What the harness noticed about the definition (`hidden_text`, `suspicious`).
    flags: Vec<ToolFlag>,
    /// What the poisoning screen found: rule, reason, field, phrase.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    suspicious: Vec<Suspicion>,
    /// Against its pin: pinned, new, changed, or off (not checked).
    pin: PinState,
    /// Its local flow labels (the config's, never the server's claims).
    labels: Labels,
}

#[derive(Serialize)]
struct ExposedReport {
    name: String,
    remote_name: String,
    effect: Effect,
    /// Arguments outside the schema's properties: refused by the schema, by
    /// the harness (`extra_arguments = "refuse"`), or admitted.
    undeclared_arguments: Undeclared,
}

pub async fn run(config: Option<PathBuf>, args: CheckArgs) -> ExitCode {
    let config = match load_config(config) {
        Ok(c) => c,
        Err(code) => return code,
    };
    let hub = hub_for(&config);
    interruptible(&hub, report(&hub, &config, args)).await
}

async fn report(hub: &Hub, config: &Config, args: CheckArgs) -> ExitCode {
    let attempts = config.servers.iter().map(|s| hub.connect(s.alias.as_str()));
    let results = futures::future::join_all(attempts).await;
    hub.shutdown().await;
    let servers: Vec<ServerReport> = results
        .into_iter()
        .zip(&config.servers)
        .map(|(result, spec)| match result {
            Ok(report) => server_report(report, spec),
            Err(e) => ServerReport {
                alias: spec.alias.to_string(),
                status: "failed",
                error: Some(ErrorReport {
                    code: "spawn_failed".into(),
                    message: e.to_string(),
                    hint: String::new(),
                    tools: Vec::new(),
                    policy_diff: None,
                    changes: Vec::new(),
                }),
                server: None,
                instructions_suspicious: Vec::new(),
                published: Vec::new(),
                exposed: Vec::new(),
                server_output: Vec::new(),
                pinned: Vec::new(),
                lock: String::new(),
            },
        })
        .collect();
    let all_ready = servers.iter().all(|s| s.status == "ready");
    let report = Report { servers };
    if args.json {
        out::println(&json::to_line(&report));
    } else {
        out::print(&human(&report, &config.source.to_string()));
    }
    if all_ready {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(exit::FAILURE)
    }
}

fn server_report(report: ConnectReport, spec: &ServerSpec) -> ServerReport {
    let labels = &spec.labels;
    let published = report
        .published
        .iter()
        .enumerate()
        .map(|(i, t)| PublishedReport {
            name: t.name.clone(),
            description: t.description.clone().unwrap_or_default(),
            flags: t.flags(&report.published),
            suspicious: screen::tool(t, &report.published),
            pin: report.pins.states.get(i).copied().unwrap_or(PinState::Off),
            labels: labels.of(&t.name),
        })
        .collect();
    let (status, error, exposed, server_output) = match report.outcome {
        Ok(exposed) => (
            "ready",
            None,
            exposed
                .iter()
                .map(|t| ExposedReport {
                    name: t.name.clone(),
                    remote_name: t.remote_name.clone(),
                    effect: t.effect,
                    undeclared_arguments: t.undeclared,
                })
                .collect(),
            Vec::new(),
        ),
        Err(e) => (
            match e.kind() {
                FailureKind::Rejected => "rejected",
                FailureKind::Failed => "failed",
            },
            Some(ErrorReport {
                code: e.code.to_string(),
                message: e.message.clone(),
                hint: e.hint.clone(),
                tools: e.tools.clone(),
                policy_diff: e.policy_diff.as_deref().cloned(),
                changes: e.changes().to_vec(),
            }),
            Vec::new(),
            e.server_output.clone(),
        ),
    };
    let instructions_suspicious = report
        .server
        .as_ref()
        .and_then(|s| s.instructions.as_deref())
        .map(screen::instructions)
        .unwrap_or_default();
    ServerReport {
        alias: report.alias.to_string(),
        status,
        error,
        instructions_suspicious,
        server: report.server.map(|identity| ServerInfo {
            identity,
            transport: spec.transport.kind(),
        }),
        published,
        exposed,
        server_output,
        pinned: report.pins.created,
        lock: report.pins.location,
    }
}

fn human(report: &Report, source: &str) -> String {
    let mut out = format!("config: {source}\n\n");
    for s in &report.servers {
        let identity = s
            .server
            .as_ref()
            .map(|s| {
                let i = &s.identity;
                format!(
                    " — {} {} (protocol {}, over {})",
                    inert_line(&i.name, 60),
                    inert_line(&i.version, 30),
                    inert_line(&i.protocol_version, 20),
                    s.transport.as_str()
                )
            })
            .unwrap_or_default();
        out.push_str(&format!("{}: {}{identity}\n", s.alias, s.status));
        if let Some(e) = &s.error {
            out.push_str(&format!(
                "  {} — {}\n",
                e.code,
                inert_line(&e.message, 2000)
            ));
            if !e.hint.is_empty() {
                out.push_str(&format!("  what to do: {}\n", e.hint));
            }
            out.push_str(&render::definition_changes(&e.changes));
        }
        if !s.published.is_empty() {
            let mut table = Table::new();
            table.load_style(
                TableStyle::new().header_separator(LineStyle::none().fill('─').junction(' ')),
            );
            table.set_header(["published tool", "exposed as", "effect", "pin"]);
            for p in &s.published {
                let exposed = s.exposed.iter().find(|x| x.remote_name == p.name);
                let (name, effect) = match (exposed, s.status) {
                    (Some(x), _) => (x.name.clone(), x.effect.to_string()),
                    (None, "ready") => ("—".into(), "deny (not offered to the model)".into()),
                    (None, _) => ("—".into(), "—".into()),
                };
                let mut published = inert_line(&p.name, 60);
                if p.flags.contains(&ToolFlag::HiddenText) {
                    published.push_str(" [hidden text]");
                }
                if p.flags.contains(&ToolFlag::Suspicious) {
                    published.push_str(" [suspicious]");
                }
                // Pinned by this very run: say so, rather than "new".
                let pin = if s.pinned.contains(&p.name) {
                    "pinned now"
                } else {
                    p.pin.label()
                };
                table.add_row([published, name, effect, pin.to_string()]);
            }
            for line in table.to_string().lines() {
                out.push_str(&format!("  {}\n", line.trim_end()));
            }
            if s.published
                .iter()
                .any(|p| p.flags.contains(&ToolFlag::HiddenText))
            {
                out.push_str(
                    "  [hidden text]: the definition holds invisible characters, shown here as \
                     <U+XXXX>; the model gets them removed\n",
                );
                for p in s
                    .published
                    .iter()
                    .filter(|p| p.flags.contains(&ToolFlag::HiddenText))
                {
                    out.push_str(&format!(
                        "    {}: {}\n",
                        inert_line(&p.name, 60),
                        inert_line(&p.description, 300)
                    ));
                }
            }
        }
        for s in &s.instructions_suspicious {
            out.push_str(&format!(
                "  its instructions (given to no model) are suspicious: {} — {}: \"{}\"\n",
                s.rule,
                s.reason,
                inert_line(&s.phrase, 200)
            ));
        }
        out.push_str(&suspicious(&s.published));
        out.push_str(&open_schemas(&s.exposed));
        if !s.pinned.is_empty() {
            out.push_str(&format!(
                "  pinned {} new tool definition{} in {} (trust on first use)\n",
                s.pinned.len(),
                if s.pinned.len() == 1 { "" } else { "s" },
                s.lock
            ));
        }
        out.push_str(&render::server_output(&s.server_output.join("\n")));
        out.push('\n');
    }
    let ready = report
        .servers
        .iter()
        .filter(|s| s.status == "ready")
        .count();
    out.push_str(&format!(
        "{} of {} servers ready\n",
        ready,
        report.servers.len()
    ));
    out
}

/// The tools whose schemas would admit any argument, and what becomes of them.
fn open_schemas(exposed: &[ExposedReport]) -> String {
    let names = |which: Undeclared| {
        exposed
            .iter()
            .filter(|x| x.undeclared_arguments == which)
            .map(|x| format!("`{}`", x.remote_name))
            .collect::<Vec<_>>()
    };
    let mut out = String::new();
    let refused = names(Undeclared::RefusedByHarness);
    if !refused.is_empty() {
        out.push_str(&format!(
            "  open schemas (undeclared arguments refused by the harness): {}\n",
            inert_line(&refused.join(", "), 2000)
        ));
    }
    let admitted = names(Undeclared::Admitted);
    if !admitted.is_empty() {
        out.push_str(&format!(
            "  schemas that admit any argument (sent to the server): {}\n",
            inert_line(&admitted.join(", "), 2000)
        ));
    }
    out
}

/// Why each suspicious tool is: the rule, its reason, where, and the phrase
/// (the server's words, inert).
fn suspicious(published: &[PublishedReport]) -> String {
    let flagged: Vec<&PublishedReport> = published
        .iter()
        .filter(|p| !p.suspicious.is_empty())
        .collect();
    if flagged.is_empty() {
        return String::new();
    }
    let mut out = String::from(
        "  [suspicious]: the poisoning screen found text addressed to the model; such a \
         tool is never trusted on first use (accept it with `mcp-harness pin ALIAS`, or deny it)\n",
    );
    for p in flagged {
        for s in &p.suspicious {
            out.push_str(&format!(
                "    {}: {} — {} (in {}): \"{}\"\n",
                inert_line(&p.name, 60),
                s.rule,
                s.reason,
                inert_line(&s.field, 120),
                inert_line(&s.phrase, 200)
            ));
        }
    }
    out
}
