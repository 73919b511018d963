//! `mcp-harness login ALIAS [--no-browser]` and `mcp-harness logout ALIAS`:
//! signing in to an HTTP server with OAuth from a terminal (the URL is always
//! printed; the redirect comes back to a loopback listener, or is pasted on
//! stdin from a browser elsewhere), and signing out again.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use clap::Args;
use futures::future::BoxFuture;
use tokio::io::AsyncBufReadExt as _;

use super::{exit, hub_builder, interruptible, load_config, out, render};
use crate::mcp::auth::crypto::now_secs;
use crate::mcp::auth::{
    AgentKind, Callback, OAuthError, Prompt, TokenView, UserAgent, browser, parse_pasted,
};
use crate::mcp::{EventSink, Hub, TransportSpec};

#[derive(Debug, Args)]
pub struct LoginArgs {
    /// The server alias, as configured (an HTTP server)
    pub alias: String,
    /// Do not try to open a browser; only print the URL
    #[arg(long)]
    pub no_browser: bool,
}

#[derive(Debug, Args)]
pub struct LogoutArgs {
    /// The server alias, as configured (an HTTP server)
    pub alias: String,
}

/// The alias's hub (with `sign_in` taking sign-ins to the operator), or the
/// exit status for a bad alias (2).
fn setup(
    config: Option<PathBuf>,
    alias: &str,
    sign_in: Option<Arc<dyn UserAgent>>,
) -> Result<(Hub, String), ExitCode> {
    let config = load_config(config)?;
    let mut hub = hub_builder(&config, EventSink::discard());
    if let Some(agent) = sign_in {
        hub = hub.sign_in_agent(agent);
    }
    let hub = hub.build();
    let spec = hub.spec(alias).map_err(|e| {
        eprintln!("mcp-harness: {e}");
        ExitCode::from(exit::USAGE)
    })?;
    let TransportSpec::Http { url, .. } = &spec.transport else {
        eprintln!("mcp-harness: `{alias}` is a stdio server; sign-in applies to `url` servers");
        return Err(ExitCode::from(exit::USAGE));
    };
    let url = crate::mcp::Vars::from_process().expand(url).map_err(|e| {
        eprintln!("mcp-harness: servers.{alias}.url: {e}");
        ExitCode::from(exit::USAGE)
    })?;
    Ok((hub, url))
}

pub async fn login(config: Option<PathBuf>, args: LoginArgs) -> ExitCode {
    let terminal = Arc::new(Terminal {
        open_browser: !args.no_browser,
    });
    let (hub, url) = match setup(config, &args.alias, Some(terminal)) {
        Ok(x) => x,
        Err(code) => return code,
    };
    interruptible(&hub, sign_in(&hub, &args.alias, &url)).await
}

async fn sign_in(hub: &Hub, alias: &str, url: &str) -> ExitCode {
    let started = now_secs();
    let result = hub.sign_in_probe(alias).await;
    let stored = url::Url::parse(url)
        .ok()
        .and_then(|u| hub.token_store().tokens_for(&u).ok())
        .and_then(|t| t.into_iter().next());
    let fresh = stored.as_ref().is_some_and(|t| t.obtained_at >= started);
    let view = stored.map(|t| TokenView {
        token_type: if t.token_type.eq_ignore_ascii_case("dpop") {
            "DPoP"
        } else {
            "Bearer"
        },
        issuer: t.issuer,
        scopes: t.scopes,
        expires_at: t.expires_at,
    });
    match (result, view) {
        (Ok(_), Some(v)) if fresh => {
            out::print(&format!("signed in to {alias}: {}\n", describe(&v)));
            ExitCode::SUCCESS
        }
        (Ok(_), Some(v)) => {
            out::print(&format!(
                "already signed in to {alias}: {}\n(to sign in afresh: `mcp-harness logout {alias}`, then login again)\n",
                describe(&v)
            ));
            ExitCode::SUCCESS
        }
        (Ok(_), None) => {
            out::print(&format!(
                "{alias} did not ask for a sign-in; nothing was stored\n"
            ));
            ExitCode::SUCCESS
        }
        (Err(e), Some(v)) if fresh => {
            out::print(&format!("signed in to {alias}: {}\n", describe(&v)));
            eprint!(
                "but connecting afterwards failed:\n{}",
                render::connect_error(alias, &e)
            );
            ExitCode::SUCCESS
        }
        (Err(e), _) => {
            eprint!("{}", render::connect_error(alias, &e));
            ExitCode::from(exit::FAILURE)
        }
    }
}

/// "issuer https://as.example; scopes a b; expires in 59 min" (never the token).
pub fn describe(v: &TokenView) -> String {
    let scopes = if v.scopes.is_empty() {
        "(none named)".to_string()
    } else {
        v.scopes.join(" ")
    };
    let expiry = match v.expires_at {
        None => "no expiry given".to_string(),
        Some(at) => {
            let left = at.saturating_sub(now_secs());
            if left == 0 {
                "expired".into()
            } else if left < 120 {
                format!("expires in {left} s")
            } else {
                format!("expires in {} min", left / 60)
            }
        }
    };
    format!(
        "issuer {}; scopes {scopes}; {} token, {expiry}",
        crate::sanitize::inert_line(&v.issuer, 200),
        v.token_type
    )
}

pub async fn logout(config: Option<PathBuf>, args: LogoutArgs) -> ExitCode {
    let (hub, _url) = match setup(config, &args.alias, None) {
        Ok(x) => x,
        Err(code) => return code,
    };
    let alias = args.alias.as_str();
    let result = hub.sign_out(alias).await;
    hub.shutdown().await;
    match result {
        Ok(report) if report.removed == 0 => {
            out::print(&format!("nothing was stored for {alias}\n"));
            ExitCode::SUCCESS
        }
        Ok(report) => {
            out::print(&format!(
                "signed out of {alias}: {} token(s) deleted, {} revoked at the authorization server\n",
                report.removed, report.revoked
            ));
            for problem in &report.problems {
                eprintln!("  note: {}", crate::sanitize::inert_line(problem, 500));
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("mcp-harness: {e}");
            ExitCode::from(exit::FAILURE)
        }
    }
}

/// The terminal as the sign-in agent: the URL printed (and opened, when there
/// is a browser), the redirect from the listener or pasted on stdin.
struct Terminal {
    open_browser: bool,
}

impl UserAgent for Terminal {
    fn kind(&self) -> AgentKind {
        AgentKind::Human
    }

    fn authorize<'a>(&'a self, p: Prompt<'a>) -> BoxFuture<'a, Result<Callback, OAuthError>> {
        Box::pin(async move {
            let redirect = p.listener.redirect_uri().clone();
            out::print(&format!(
                "Sign in to {}: open this URL in a browser:\n\n  {}\n\n",
                p.alias, p.url
            ));
            if self.open_browser {
                match browser::open(p.url.as_str()) {
                    Ok(()) => out::print("(opened in your browser)\n"),
                    Err(why) => out::print(&format!("({why})\n")),
                }
            }
            out::print(&format!(
                "Waiting for the browser to come back to {redirect} … \
                 if it runs on another machine, paste the address it was sent to here and press Enter.\n"
            ));
            let mut lines = tokio::io::BufReader::new(tokio::io::stdin()).lines();
            let mut stdin_open = true;
            loop {
                tokio::select! {
                    cb = p.listener.next() => {
                        return cb.ok_or(OAuthError::Listener { problem: "it stopped".into() });
                    }
                    line = lines.next_line(), if stdin_open => match line {
                        Ok(Some(line)) if line.trim().is_empty() => {}
                        Ok(Some(line)) => match parse_pasted(&line, &redirect) {
                            Ok(cb) => return Ok(cb),
                            Err(e) => out::print(&format!("{e}; paste the whole address, or wait for the browser\n")),
                        },
                        // No more input (stdin closed): the listener alone.
                        _ => stdin_open = false,
                    },
                }
            }
        })
    }
}
