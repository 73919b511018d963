//! `mcp-harness serve --http ADDR | --stdio`: the headless gateway. Connects
//! the configured aliases (or `[serve] connect`), then offers their exposed
//! tools to outside hosts over Streamable HTTP at `/mcp` on loopback, or to the
//! one host that spawned it over stdio, every call through the hub's call path
//! as the client's (`mcp::gateway`). `confirm` is decided by `--approve`. Runs
//! until Ctrl-C or SIGTERM (or, over stdio, until the host closes stdin).

use std::net::SocketAddr;
use std::process::ExitCode;
use std::sync::Arc;

use clap::Args;
use futures::FutureExt as _;
use tokio_util::sync::CancellationToken;

use super::run::Approve;
use super::{exit, interrupted, load_config, render};
use crate::mcp::gateway::{
    self, ApproveMode, Changes, ClientCallRecord, Gateway, GatewayApprover, PATH, Watcher, relay,
};
use crate::mcp::{EventSink, Hub};
use crate::session::SessionEvent;

#[derive(Debug, Args)]
pub struct ServeArgs {
    /// Serve MCP over Streamable HTTP at http://ADDR/mcp (a loopback address) [default: [serve] listen]
    #[arg(long, value_name = "ADDR", conflicts_with = "stdio")]
    pub http: Option<SocketAddr>,
    /// Serve one client on stdin/stdout, for hosts that spawn their servers (stdout carries MCP only)
    #[arg(long)]
    pub stdio: bool,
    /// With --stdio: the [serve.clients.NAME] profile of the host [default: `stdio`, which sees every alias]
    #[arg(long, value_name = "NAME", requires = "stdio")]
    pub client: Option<String>,
    /// With --stdio: serve headless even when a control room (`mcp-harness --serve`) of this config is running
    #[arg(long, requires = "stdio")]
    pub no_relay: bool,
    /// How to decide outside calls of tools whose local policy is "confirm"
    #[arg(long, value_enum, default_value_t = Approve::Never)]
    pub approve: Approve,
}

/// Where outside clients come in.
enum Door {
    Http(SocketAddr),
    Stdio(Option<String>),
}

pub async fn run(config: Option<std::path::PathBuf>, args: ServeArgs) -> ExitCode {
    let config = match load_config(config) {
        Ok(c) => c,
        Err(code) => return code,
    };
    let settings = config.serve.clone();
    if args.stdio && !args.no_relay {
        let client = match settings.clone().stdio_client(args.client.as_deref()) {
            Ok(client) => client,
            Err(e) => {
                eprintln!("mcp-harness: {e}");
                return ExitCode::from(exit::USAGE);
            }
        };
        if let Some(code) = relay(&config, &client).await {
            return code;
        }
    }
    let door = if args.stdio {
        Door::Stdio(args.client.clone())
    } else {
        let Some(addr) = args.http.or(settings.listen) else {
            eprintln!(
                "mcp-harness: serve needs --http ADDR (or [serve] listen = \"127.0.0.1:PORT\"), or --stdio"
            );
            return ExitCode::from(exit::USAGE);
        };
        if !addr.ip().is_loopback() {
            eprintln!("mcp-harness: {}", gateway::GatewayError::NotLoopback(addr));
            return ExitCode::from(exit::USAGE);
        }
        Door::Http(addr)
    };
    // The session's audit log: connects, revocations and every outside call.
    let store = match crate::logging::data_dir().map(|d| crate::store::Store::create(&d)) {
        Some(Ok(store)) => Some(Arc::new(store)),
        Some(Err(e)) => {
            eprintln!("mcp-harness: no session directory ({e}); nothing is audited");
            None
        }
        None => None,
    };
    let changes = Changes::default();
    let events = {
        let (changes, store) = (changes.clone(), store.clone());
        EventSink::forward(move |event| {
            changes.event(&event);
            if let Some(store) = &store {
                SessionEvent::Mcp(event).audit(store);
            }
        })
    };
    // The same hub as every headless command's (the config's lock file,
    // telemetry), with the session's results/ when there is a session.
    // An upstream's question is the operator's, and headless there is none.
    let mut hub = super::hub_builder(&config, events).elicitor(Arc::new(NoOperator));
    if let Some(store) = &store {
        hub = hub.results_dir(store.dir().join("results"));
    }
    let hub = hub.build();
    let watcher: Arc<dyn Watcher> = Arc::new(Audit(store.clone()));
    let approver = Arc::new(GatewayApprover {
        mode: match args.approve {
            Approve::Never => ApproveMode::Never,
            Approve::Always => ApproveMode::Always,
        },
    });
    let served = match door {
        Door::Http(addr) => {
            let tokens = |var: &str| std::env::var(var).ok();
            match Gateway::new(hub.clone(), settings.clone(), approver, watcher, tokens) {
                Ok(gateway) => http(&hub, &config, &settings, gateway, addr, changes).boxed(),
                Err(e) => {
                    eprintln!("mcp-harness: {e}");
                    return ExitCode::from(exit::USAGE);
                }
            }
        }
        Door::Stdio(client) => {
            match Gateway::for_stdio(
                hub.clone(),
                settings.clone(),
                approver,
                watcher,
                client.as_deref(),
            ) {
                Ok((gateway, client)) => {
                    stdio(&hub, &config, &settings, gateway, client, changes).boxed()
                }
                Err(e) => {
                    eprintln!("mcp-harness: {e}");
                    return ExitCode::from(exit::USAGE);
                }
            }
        }
    };
    let code = tokio::select! {
        code = served => code,
        signal = interrupted() => ExitCode::from(128 + signal),
    };
    hub.shutdown().await;
    // Every call answered is in the audit log before the process ends.
    if let Some(store) = &store {
        store.flush();
    }
    code
}

async fn http(
    hub: &Hub,
    config: &crate::config::Config,
    settings: &gateway::GatewaySettings,
    gateway: Gateway,
    addr: SocketAddr,
    changes: Changes,
) -> ExitCode {
    let listener = match tokio::net::TcpListener::bind(addr).await {
        Ok(l) => l,
        Err(e) => {
            eprintln!("mcp-harness: cannot listen on {addr}: {e}");
            return ExitCode::from(exit::FAILURE);
        }
    };
    connect_all(hub, config, settings, &gateway).await;
    let local = match listener.local_addr() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("mcp-harness: {e}");
            return ExitCode::from(exit::FAILURE);
        }
    };
    // Tests and scripts read this one line to learn the port.
    super::out::println(&format!("listening on http://{local}{PATH}"));
    match gateway
        .serve(listener, changes, CancellationToken::new())
        .await
    {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("mcp-harness: {e}");
            ExitCode::from(exit::FAILURE)
        }
    }
}

/// Over stdio every word for a person goes to stderr: stdout is the host's
/// MCP stream.
async fn stdio(
    hub: &Hub,
    config: &crate::config::Config,
    settings: &gateway::GatewaySettings,
    gateway: Gateway,
    client: String,
    changes: Changes,
) -> ExitCode {
    connect_all(hub, config, settings, &gateway).await;
    eprintln!("serve: client `{client}` on stdio");
    match gateway
        .serve_stdio(client, changes, CancellationToken::new())
        .await
    {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("mcp-harness: {e}");
            ExitCode::from(exit::FAILURE)
        }
    }
}

/// When a control room of this config is running, the host is served there
/// (its `confirm` calls wait for the operator) and this process only passes
/// bytes; `None` when none is, and the gateway runs here, headless.
async fn relay(config: &crate::config::Config, client: &str) -> Option<ExitCode> {
    let path = config.relay_socket()?;
    let stream = match relay::connect(&path, client).await {
        Ok(Some(stream)) => stream,
        Ok(None) => return None,
        Err(e) => {
            eprintln!("mcp-harness: {e}");
            return Some(ExitCode::from(exit::USAGE));
        }
    };
    eprintln!(
        "serve: client `{client}` relayed to the control room ({})",
        path.display()
    );
    Some(match relay::pipe(stream).await {
        Ok(relay::Ended::HostLeft) => ExitCode::SUCCESS,
        Ok(relay::Ended::ControlRoomLeft) => {
            eprintln!("serve: the control room closed client `{client}`'s session (it quit)");
            ExitCode::from(exit::FAILURE)
        }
        Err(e) => {
            eprintln!("mcp-harness: the relay to the control room broke: {e}");
            ExitCode::from(exit::FAILURE)
        }
    })
}

/// Connects the aliases `[serve] connect` names (or every configured one)
/// and says on stderr how each went and what is not offered to whom.
async fn connect_all(
    hub: &Hub,
    config: &crate::config::Config,
    settings: &gateway::GatewaySettings,
    gateway: &Gateway,
) {
    let aliases: Vec<String> = match &settings.connect {
        Some(list) => list.iter().map(|a| a.as_str().to_string()).collect(),
        None => config
            .servers
            .iter()
            .map(|s| s.alias.as_str().to_string())
            .collect(),
    };
    let reports = futures::future::join_all(aliases.iter().map(|a| hub.connect(a))).await;
    for (alias, report) in aliases.iter().zip(reports) {
        match report {
            Ok(report) => {
                eprint!("{}", render::pinned_note(alias, &report.pins));
                match &report.outcome {
                    Ok(_) => eprintln!("serve: `{alias}` connected"),
                    Err(e) => eprint!("{}", render::connect_error(alias, e)),
                }
            }
            Err(e) => eprintln!("serve: `{alias}`: {e}"),
        }
    }
    for (client, alias, why) in gateway.rejections() {
        eprintln!("serve: `{alias}` is not offered to client `{client}`: {why}");
    }
}

/// Headless, an outside call is heard of only by the audit log.
struct Audit(Option<Arc<crate::store::Store>>);

impl Watcher for Audit {
    fn finished(&self, record: &ClientCallRecord<'_>, _: &crate::mcp::CallOutcome) {
        if let Some(store) = &self.0 {
            store.audit_client_call(record);
        }
    }
}

/// Headless, an upstream's question (elicitation, an `input_required`
/// round) has nobody to answer it: never the gateway on the user's behalf,
/// never the outside client. It is declined, and the operator is told on
/// stderr whose call it came during and how to answer such questions.
struct NoOperator;

impl crate::mcp::Elicitor for NoOperator {
    fn elicit(
        &self,
        request: crate::mcp::ElicitationRequest,
    ) -> futures::future::BoxFuture<'_, crate::mcp::ElicitationResponse> {
        let during = match &request.call {
            Some(call) => format!("during {}'s call {}", call.requester, call.id),
            None if !request.may_be.is_empty() => format!(
                "during one of {} calls in flight (the server did not say which): {}",
                request.may_be.len(),
                request
                    .may_be
                    .iter()
                    .map(|c| format!("{}'s call {}", c.requester, c.id))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            None => "outside any call".to_string(),
        };
        eprintln!(
            "serve: `{}` asked a question {during}: \"{}\" (the server's words); declined: a \
             headless gateway has no operator to answer it, and an outside client is never \
             asked. To answer such questions, run the control room instead: \
             `mcp-harness --serve 127.0.0.1:PORT` (its `serve --stdio` clients relay to it)",
            request.alias,
            crate::sanitize::inert_line(&request.message, 200),
        );
        Box::pin(std::future::ready(crate::mcp::ElicitationResponse::Decline))
    }
}
