//! `mcp-harness import [FILE] [--from HOST]`: bring servers configured in
//! another host into our config, never their secrets; `--with-policy` connects
//! each one and writes the policy block `policy` would print, after the
//! operator confirms.

use std::fmt::Write as _;
use std::io::IsTerminal as _;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use clap::builder::PossibleValuesParser;

use super::{exit, hub_for, interruptible, out, render};
use crate::config::import::write::{WriteError, write_servers};
use crate::config::import::{self, Format, Imported, ImportedServer, ImportedTransport};
use crate::config::{self, ConfigSource};
use crate::mcp::{Effect, Hub, ServerAlias, ToolPolicy};
use crate::sanitize::inert_line;

#[derive(Debug, Args)]
pub struct ImportArgs {
    /// The file to import [default: where the --from host keeps its config]
    pub file: Option<PathBuf>,
    /// Which host wrote the file [default: guessed from its name and content]
    #[arg(long, value_name = "HOST", value_parser = PossibleValuesParser::new(Format::ALL.map(Format::name)))]
    pub from: Option<String>,
    /// Replace servers whose alias the config already has (their policy goes with them)
    #[arg(long)]
    pub force: bool,
    /// Connect each imported server and add the policy block `policy` would print
    /// (every tool "confirm"; tools the source excluded "deny"), after a confirmation
    #[arg(long)]
    pub with_policy: bool,
    /// Confirm --with-policy without asking (for scripts)
    #[arg(long, requires = "with_policy")]
    pub yes: bool,
    /// Copy the literal value of this env key (a path, a log level: no secret) instead of
    /// turning it into a variable; repeatable. Names that look like secrets are never copied
    #[arg(long, value_name = "KEY")]
    pub copy_env: Vec<String>,
}

pub async fn run(config: Option<PathBuf>, args: ImportArgs) -> ExitCode {
    let target = match config.or_else(config::default_path) {
        Some(path) => path,
        None => {
            eprintln!("mcp-harness: no config directory on this platform; pass --config FILE");
            return ExitCode::from(exit::USAGE);
        }
    };
    let format = args.from.as_deref().and_then(Format::from_name);
    let source = match (&args.file, format) {
        (Some(file), _) => file.clone(),
        (None, Some(format)) => match import::locate(format) {
            Ok(path) => path,
            Err(e) => {
                eprintln!("mcp-harness: {e}");
                return ExitCode::from(exit::USAGE);
            }
        },
        (None, None) => {
            eprintln!(
                "mcp-harness: say what to import: a FILE, or --from {} for its usual place",
                Format::ALL.map(Format::name).join("|")
            );
            return ExitCode::from(exit::USAGE);
        }
    };
    let imported = match import::read_copying(&source, format, &args.copy_env) {
        Ok(imported) => imported,
        Err(e) => {
            eprintln!("mcp-harness: cannot import {e}");
            return ExitCode::from(exit::USAGE);
        }
    };
    if imported.servers.is_empty() {
        let mut text = format!(
            "{} ({}) has no server mcp-harness can import; nothing was written\n",
            imported.path.display(),
            imported.format
        );
        text.push_str(&skipped(&imported));
        out::print(&text);
        return ExitCode::SUCCESS;
    }
    let written = match write_servers(&target, &imported, args.force) {
        Ok(w) => w,
        Err(e @ WriteError::Conflicts { .. }) => {
            eprintln!("mcp-harness: nothing was imported: {e}");
            eprintln!(
                "  pass --force to replace them (their policy goes with them), or rename them first"
            );
            return ExitCode::from(exit::FAILURE);
        }
        Err(e) => {
            eprintln!("mcp-harness: nothing was imported: {e}");
            return ExitCode::from(exit::USAGE);
        }
    };
    out::print(&summary(&imported, &written));
    if !args.with_policy {
        out::print(
            "next: `mcp-harness policy ALIAS` prints the policy block each server needs \
             (or import again with --force --with-policy); `mcp-harness check` connects them all\n",
        );
        return ExitCode::SUCCESS;
    }
    let config = match config::load(ConfigSource::File(target.clone())) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("mcp-harness: {e}");
            return ExitCode::from(exit::USAGE);
        }
    };
    let hub = hub_for(&config);
    interruptible(&hub, with_policy(&hub, &imported, target, args.yes)).await
}

fn summary(imported: &Imported, written: &import::write::Written) -> String {
    let mut text = String::new();
    let _ = writeln!(
        text,
        "imported {} server{} from {} ({}) into {}{}:",
        imported.servers.len(),
        if imported.servers.len() == 1 { "" } else { "s" },
        imported.path.display(),
        imported.format,
        written.file.display(),
        if written.created { " (created)" } else { "" }
    );
    let width = imported
        .servers
        .iter()
        .map(|s| s.alias.len())
        .max()
        .unwrap_or(0);
    for s in &imported.servers {
        let mut line = format!("  {:width$}  {}", s.alias, transport(s));
        if written
            .replaced
            .iter()
            .any(|r| crate::mcp::names::normalize(r) == s.alias)
        {
            line.push_str("  (replaced the existing one)");
        }
        if s.disabled {
            line.push_str("  (disabled in the source)");
        }
        let _ = writeln!(text, "{line}");
    }
    text.push_str(&skipped(imported));
    if !imported.variables.is_empty() {
        text.push_str(
            "set these variables in the environment mcp-harness runs in (values were not copied):\n",
        );
        let width = imported
            .variables
            .iter()
            .map(|v| v.name.len())
            .max()
            .unwrap_or(0);
        for v in &imported.variables {
            let _ = writeln!(text, "  {:width$}  {}: {}", v.name, v.key, v.why);
        }
    }
    if !imported.copied.is_empty() {
        text.push_str("copied as asked (--copy-env), literal values written to the config:\n");
        for key in &imported.copied {
            let _ = writeln!(text, "  {}", inert_line(key, 200));
        }
    }
    for key in &imported.copy_env {
        let found = imported
            .copied
            .iter()
            .chain(imported.variables.iter().map(|v| &v.key))
            .any(|k| k.rsplit('.').next() == Some(key.as_str()));
        if !found {
            let _ = writeln!(
                text,
                "note: --copy-env {}: no literal env value by that name was found (values built from variables are kept as they are)",
                inert_line(key, 100)
            );
        }
    }
    for note in &imported.notes {
        let _ = writeln!(text, "note: {}", inert_line(note, 300));
    }
    text
}

fn skipped(imported: &Imported) -> String {
    let mut text = String::new();
    if imported.skipped.is_empty() {
        return text;
    }
    text.push_str("not imported:\n");
    for s in &imported.skipped {
        let _ = writeln!(text, "  {}: {}", inert_line(&s.name, 60), s.reason);
    }
    text
}

fn transport(server: &ImportedServer) -> String {
    match &server.transport {
        ImportedTransport::Stdio { command, args, .. } => {
            let line = std::iter::once(command.as_str())
                .chain(args.iter().map(String::as_str))
                .collect::<Vec<_>>()
                .join(" ");
            format!("stdio: {}", inert_line(&line, 100))
        }
        ImportedTransport::Http { url, .. } => format!("http: {}", inert_line(url, 100)),
    }
}

/// The effect an imported server's tool gets: `deny` if the source kept it
/// from its model, else `confirm`.
fn effect_for(server: &ImportedServer, tool: &str) -> Effect {
    let excluded = server.denied_tools.iter().any(|t| t == tool)
        || server
            .only_tools
            .as_ref()
            .is_some_and(|only| !only.iter().any(|t| t == tool));
    if excluded {
        Effect::Deny
    } else {
        Effect::Confirm
    }
}

async fn with_policy(hub: &Hub, imported: &Imported, file: PathBuf, yes: bool) -> ExitCode {
    let probes = futures::future::join_all(
        imported
            .servers
            .iter()
            .map(|s| async move { (s, hub.probe(&s.alias).await) }),
    )
    .await;
    let mut blocks = Vec::new();
    let mut text = String::new();
    for (server, probe) in probes {
        match probe {
            Ok((_, published)) => {
                let names: Vec<String> = published.iter().map(|t| t.name.clone()).collect();
                let alias = ServerAlias::new(server.alias.as_str());
                text.push_str(&ToolPolicy::block_with(
                    &alias,
                    names.iter().map(String::as_str),
                    |tool| effect_for(server, tool),
                ));
                text.push('\n');
                blocks.push((server, names));
            }
            Err(e) => {
                let _ = write!(
                    text,
                    "no policy for `{}`: it could not be listed\n{}\n",
                    server.alias,
                    render::connect_error(&server.alias, &e)
                );
            }
        }
    }
    out::print(&text);
    if blocks.is_empty() {
        out::print(
            "no policy was written; `mcp-harness policy ALIAS` prints one once the server starts\n",
        );
        return ExitCode::SUCCESS;
    }
    let question = format!(
        "Write {} polic{} into {}? Review them above: every tool \"confirm\" unless the source excluded it. [y/N] ",
        blocks.len(),
        if blocks.len() == 1 { "y" } else { "ies" },
        file.display()
    );
    if !(yes || confirm(question).await) {
        out::print("no policy was written (the servers are imported)\n");
        return ExitCode::SUCCESS;
    }
    for (server, names) in blocks {
        let policy = ToolPolicy::new(
            names
                .iter()
                .map(|n| (n.clone(), effect_for(server, n)))
                .collect(),
        );
        if let Err(e) = config::edit::write_policy(&file, &server.alias, &names, &policy) {
            eprintln!(
                "mcp-harness: the policy of `{}` was not written: {e}",
                server.alias
            );
            return ExitCode::from(exit::FAILURE);
        }
        out::println(&format!("wrote the policy of `{}`", server.alias));
    }
    ExitCode::SUCCESS
}

/// Asks on the terminal; without one, the answer is no (scripts pass --yes).
async fn confirm(question: String) -> bool {
    if !std::io::stdin().is_terminal() {
        eprintln!("mcp-harness: not asking without a terminal; pass --yes to confirm");
        return false;
    }
    out::print(&question);
    tokio::task::spawn_blocking(|| {
        let mut answer = String::new();
        std::io::stdin().read_line(&mut answer).ok();
        matches!(answer.trim(), "y" | "Y" | "yes" | "Yes")
    })
    .await
    .unwrap_or(false)
}
