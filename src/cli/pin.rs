//! `mcp-harness pin ALIAS`: the operator's explicit act of accepting what a
//! server publishes now. Pins every tool the policy does not deny, drops pins
//! of tools that are gone, prints the diff it accepts. Never prompts.

use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;

use super::{exit, hub_for, interruptible, load_config, out, render};
use crate::mcp::pins::Acceptance;
use crate::mcp::{Hub, PinMode, ServerAlias};
use crate::sanitize::inert_line;

#[derive(Debug, Args)]
pub struct PinArgs {
    /// The server alias, as configured
    pub alias: String,
}

pub async fn run(config: Option<PathBuf>, args: PinArgs) -> ExitCode {
    let config = match load_config(config) {
        Ok(c) => c,
        Err(code) => return code,
    };
    let hub = hub_for(&config);
    if let Err(e) = hub.spec(&args.alias) {
        eprintln!("mcp-harness: {e}");
        return ExitCode::from(exit::USAGE);
    }
    interruptible(&hub, accept(&hub, args)).await
}

async fn accept(hub: &Hub, args: PinArgs) -> ExitCode {
    let (server, published) = match hub.probe(&args.alias).await {
        Ok(listed) => listed,
        Err(e) => {
            eprint!("{}", render::connect_error(&args.alias, &e));
            eprintln!("nothing was pinned");
            return ExitCode::from(exit::FAILURE);
        }
    };
    let acceptance = match hub.accept_pins(&args.alias, &published).await {
        Ok(a) => a,
        Err(e) => {
            eprintln!("mcp-harness: {e}; nothing was pinned");
            return ExitCode::from(exit::FAILURE);
        }
    };
    let Ok(spec) = hub.spec(&args.alias) else {
        return ExitCode::from(exit::USAGE);
    };
    let alias = ServerAlias::new(args.alias.as_str());
    let mut text = format!(
        "{alias} — {} {}: {} published tools\n",
        inert_line(&server.name, 60),
        inert_line(&server.version, 30),
        published.len()
    );
    text.push_str(&report(&alias, &acceptance));
    if spec.pin == PinMode::Off {
        let _ = writeln!(
            text,
            "note: `{alias}` has pin = \"off\": these pins are not checked until it is \"tofu\" or \"required\""
        );
    }
    if let Err(mismatch) = spec
        .policy
        .check_exact(published.iter().map(|t| t.name.as_str()))
    {
        let _ = writeln!(
            text,
            "note: the policy of `{alias}` does not list exactly what it publishes ({} missing, {} extra); \
             connecting will still be refused: `mcp-harness policy {alias}` prints the block it needs",
            mismatch.missing.len(),
            mismatch.extra.len()
        );
    }
    out::print(&text);
    ExitCode::SUCCESS
}

/// What was accepted: each change as a diff, then new and dropped pins.
fn report(alias: &ServerAlias, a: &Acceptance) -> String {
    let pins = a.unchanged + a.added.len() + a.changed.len() + a.renamed.len();
    if a.is_empty() {
        return format!(
            "all {pins} pins of `{alias}` match what it publishes; {} is unchanged\n",
            a.location
        );
    }
    let mut text = render::definition_changes(&a.changed);
    text.push_str(&render::definition_changes(&a.renamed));
    for name in &a.added {
        let _ = writeln!(text, "  new pin: `{}`", inert_line(name, 80));
    }
    if !a.suspicious.is_empty() {
        let _ = writeln!(
            text,
            "  accepted although the poisoning screen flags them (what it found):"
        );
        text.push_str(&render::definition_changes(&a.suspicious));
    }
    for name in &a.dropped {
        let _ = writeln!(
            text,
            "  dropped pin: `{}` (no longer published, or denied by the policy)",
            inert_line(name, 80)
        );
    }
    let _ = writeln!(
        text,
        "wrote {pins} pins of `{alias}` to {} ({} changed, {} renamed, {} new, {} dropped, {} unchanged)",
        a.location,
        a.changed.len(),
        a.renamed.len(),
        a.added.len(),
        a.dropped.len(),
        a.unchanged
    );
    text
}
