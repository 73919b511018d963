//! `mcp-harness policy ALIAS`: the operator's one explicit step to satisfy the
//! exact-equality rule — a policy block for exactly what the server publishes.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;

use super::{exit, hub_for, interruptible, load_config, out, render};
use crate::config::{self, ConfigSource};
use crate::mcp::{Hub, ServerAlias, ToolPolicy};

#[derive(Debug, Args)]
pub struct PolicyArgs {
    /// The server alias, as configured
    pub alias: String,
}

pub async fn run(config: Option<PathBuf>, args: PolicyArgs) -> ExitCode {
    let config = match load_config(config) {
        Ok(c) => c,
        Err(code) => return code,
    };
    let hub = hub_for(&config);
    if let Err(e) = hub.spec(&args.alias) {
        eprintln!("mcp-harness: {e}");
        return ExitCode::from(exit::USAGE);
    }
    let source = match &config.source {
        ConfigSource::File(path) => path.display().to_string(),
        ConfigSource::Embedded => {
            let path = config::default_path().map(|p| p.display().to_string());
            format!(
                "a config file ({}; start from config.example.toml)",
                path.as_deref().unwrap_or("pass it with --config")
            )
        }
    };
    interruptible(&hub, print_block(&hub, args, source)).await
}

async fn print_block(hub: &Hub, args: PolicyArgs, source: String) -> ExitCode {
    match hub.probe(&args.alias).await {
        Ok((_server, published)) => {
            let alias = ServerAlias::new(args.alias.as_str());
            let block = ToolPolicy::block_for(&alias, published.iter().map(|t| t.name.as_str()));
            let labels = crate::mcp::policy::label_suggestions(&alias, &published);
            out::print(&format!(
                "# Policy for `{alias}`: every tool it publishes now, each set to \"confirm\".\n\
                 # Review it: change an entry to \"allow\" or \"deny\" as you see fit, then put the\n\
                 # block in {source} (replacing any [servers.{alias}.tools] there).\n{block}{labels}"
            ));
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprint!("{}", render::connect_error(&args.alias, &e));
            ExitCode::from(exit::FAILURE)
        }
    }
}
