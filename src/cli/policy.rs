//! `mcp-harness policy ALIAS`: the operator's one explicit step to satisfy the
//! exact-equality rule — a policy block for exactly what the server publishes.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;

use super::{exit, hub_for, load_config, render};
use crate::mcp::{ServerAlias, ToolPolicy};

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
    let probed = hub.probe(&args.alias).await;
    hub.shutdown().await;
    match probed {
        Ok((_server, published)) => {
            let alias = ServerAlias::new(args.alias.as_str());
            println!("# Policy for `{alias}`: every tool it publishes now, each set to \"confirm\".");
            println!("# Review it: change an entry to \"allow\" or \"deny\" as you see fit, then put the");
            println!("# block in {} (replacing any [servers.{alias}.tools] there).", config.source);
            print!("{}", ToolPolicy::block_for(&alias, published.iter().map(|t| t.name.as_str())));
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprint!("{}", render::connect_error(&args.alias, &e));
            ExitCode::from(exit::FAILURE)
        }
    }
}
