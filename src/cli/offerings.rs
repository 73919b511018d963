//! `mcp-harness resources ALIAS [--read URI]` and `mcp-harness prompts ALIAS
//! [--get NAME key=value …]`: what a server offers besides tools, headless.
//! Every server string is printed inert; `--json` keeps them as sent.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use serde_json::json;

use super::call::print_connect_error;
use super::{exit, interruptible, json as out_json, load_config, out, render};
use crate::mcp::{Effect, FlagApprover, Hub, Offered, ToolError, ToolErrorCode};
use crate::sanitize::{inert, inert_line};

#[derive(Debug, Args)]
pub struct ResourcesArgs {
    /// The server alias, as configured
    pub alias: String,
    /// Read this resource (its URI) instead of listing them
    #[arg(long, value_name = "URI")]
    pub read: Option<String>,
    /// Approve the read if the local policy says "confirm" (otherwise it is refused)
    #[arg(long)]
    pub yes: bool,
    /// Print one JSON object
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct PromptsArgs {
    /// The server alias, as configured
    pub alias: String,
    /// Get this prompt's messages instead of listing the prompts
    #[arg(long, value_name = "NAME")]
    pub get: Option<String>,
    /// The prompt's arguments, as key=value
    #[arg(value_name = "KEY=VALUE", requires = "get")]
    pub arguments: Vec<String>,
    /// Print one JSON object
    #[arg(long)]
    pub json: bool,
}

/// A hub with `alias` connected (and a session directory for large reads),
/// or the exit code after saying why not.
async fn connected(config: Option<PathBuf>, alias: &str, json: bool) -> Result<Hub, ExitCode> {
    let config = load_config(config)?;
    let mut hub = super::hub_builder(&config, crate::mcp::EventSink::discard());
    match crate::logging::data_dir().map(|d| crate::store::Store::create(&d)) {
        Some(Ok(store)) => hub = hub.results_dir(store.dir().join("results")),
        Some(Err(e)) => {
            eprintln!("mcp-harness: no session directory ({e}); a large resource will be cut")
        }
        None => {}
    }
    let hub = hub.build();
    let report = match hub.connect(alias).await {
        Ok(report) => report,
        Err(e) => {
            eprintln!("mcp-harness: {e}");
            return Err(ExitCode::from(exit::USAGE));
        }
    };
    if let Err(e) = &report.outcome {
        hub.shutdown().await;
        print_connect_error(&report, e, json);
        return Err(ExitCode::from(exit::FAILURE));
    }
    Ok(hub)
}

/// An envelope (and the server's words, marked) the way `call` prints them.
fn fail(
    error: &ToolError,
    server_output: Option<&str>,
    json: bool,
    hint: Option<&str>,
) -> ExitCode {
    if json {
        let mut line = json!({ "ok": false, "error": error });
        if let Some(said) = server_output {
            line["server_output"] = json!(said);
        }
        out::println(&out_json::to_line(&line));
    } else {
        eprintln!("error: {}: {}", error.code, error.message);
        if let Some(hint) = hint {
            eprintln!("  ({hint})");
        }
        eprint!(
            "{}",
            render::server_output(server_output.unwrap_or_default())
        );
    }
    ExitCode::from(exit::FAILURE)
}

pub async fn resources(config: Option<PathBuf>, args: ResourcesArgs) -> ExitCode {
    let hub = match connected(config, &args.alias, args.json).await {
        Ok(hub) => hub,
        Err(code) => return code,
    };
    let work = async {
        match &args.read {
            None => list_resources(&hub, &args).await,
            Some(uri) => read_resource(&hub, &args, uri).await,
        }
    };
    interruptible(&hub, work).await
}

async fn list_resources(hub: &Hub, args: &ResourcesArgs) -> ExitCode {
    let listed = hub.list_resources(&args.alias).await;
    let list = match listed.result {
        Ok(list) => list,
        Err(e) => return fail(&e, listed.server_output.as_deref(), args.json, None),
    };
    if args.json {
        let mut line = json!({ "ok": true, "alias": args.alias });
        if let Some(object) = line.as_object_mut()
            && let Ok(serde_json::Value::Object(fields)) = serde_json::to_value(&list)
        {
            object.extend(fields);
        }
        out::println(&out_json::to_line(&line));
        return ExitCode::SUCCESS;
    }
    let mut text = String::new();
    text.push_str(&format!(
        "{} resources of `{}` (reading them: {}):\n",
        list.resources.len(),
        args.alias,
        effect_word(list.read)
    ));
    for r in &list.resources {
        let hidden = if r.flags.is_empty() {
            ""
        } else {
            " [hidden text]"
        };
        text.push_str(&format!(
            "  {}  {}{hidden}  {}  {}\n",
            inert_line(&r.uri, 100),
            inert_line(&r.name, 40),
            r.mime_type
                .as_deref()
                .map_or("-".into(), |m| inert_line(m, 40)),
            r.size.map_or("-".into(), human_bytes)
        ));
    }
    if !list.templates.is_empty() {
        text.push_str(&format!("{} templates:\n", list.templates.len()));
        for t in &list.templates {
            text.push_str(&format!(
                "  {}  {}  {}\n",
                inert_line(&t.uri_template, 100),
                inert_line(&t.name, 40),
                t.mime_type
                    .as_deref()
                    .map_or("-".into(), |m| inert_line(m, 40)),
            ));
        }
    }
    if list.malformed > 0 {
        text.push_str(&format!(
            "({} malformed entries left out)\n",
            list.malformed
        ));
    }
    out::print(&text);
    ExitCode::SUCCESS
}

async fn read_resource(hub: &Hub, args: &ResourcesArgs, uri: &str) -> ExitCode {
    let outcome = hub
        .read_resource(
            &args.alias,
            uri,
            &FlagApprover { approve: args.yes },
            &crate::mcp::CallIdentity::lead("resource"),
        )
        .await;
    let output = match outcome.result {
        Ok(output) => output,
        Err(e) => {
            let hint = (e.code == ToolErrorCode::McpPermissionDenied && !args.yes)
                .then_some("pass --yes to read resources whose policy is \"confirm\"");
            return fail(&e, outcome.server_output.as_deref(), args.json, hint);
        }
    };
    if args.json {
        let line = json!({
            "ok": true, "alias": args.alias, "content": output.content, "truncated": output.truncated,
        });
        out::println(&out_json::to_line(&line));
    } else {
        out::print(&render::content(&output.content));
        if output.truncated
            && let Some(dir) = hub.results_dir()
        {
            eprintln!("mcp-harness: whole results are kept in {}", dir.display());
        }
    }
    ExitCode::SUCCESS
}

fn effect_word(effect: Effect) -> &'static str {
    match effect {
        Effect::Allow => "allow",
        Effect::Confirm => "confirm",
        Effect::Deny => "deny",
    }
}

fn human_bytes(n: u64) -> String {
    match n {
        n if n < 1024 => format!("{n} B"),
        n if n < 1024 * 1024 => format!("{:.1} kB", n as f64 / 1024.0),
        n => format!("{:.1} MB", n as f64 / (1024.0 * 1024.0)),
    }
}

pub async fn prompts(config: Option<PathBuf>, args: PromptsArgs) -> ExitCode {
    let mut arguments = BTreeMap::new();
    for pair in &args.arguments {
        match pair.split_once('=') {
            Some((key, value)) if !key.is_empty() => {
                arguments.insert(key.to_string(), value.to_string());
            }
            _ => {
                eprintln!("mcp-harness: prompt arguments are key=value, got {pair:?}");
                return ExitCode::from(exit::USAGE);
            }
        }
    }
    let hub = match connected(config, &args.alias, args.json).await {
        Ok(hub) => hub,
        Err(code) => return code,
    };
    let work = async {
        match &args.get {
            None => list_prompts(&hub, &args).await,
            Some(name) => get_prompt(&hub, &args, name, &arguments).await,
        }
    };
    interruptible(&hub, work).await
}

async fn list_prompts(hub: &Hub, args: &PromptsArgs) -> ExitCode {
    let listed = hub.list_prompts(&args.alias).await;
    let prompts = match listed.result {
        Ok(prompts) => prompts,
        Err(e) => return fail(&e, listed.server_output.as_deref(), args.json, None),
    };
    if args.json {
        let line = json!({ "ok": true, "alias": args.alias, "prompts": prompts });
        out::println(&out_json::to_line(&line));
        return ExitCode::SUCCESS;
    }
    let mut text = format!("{} prompts of `{}`:\n", prompts.len(), args.alias);
    for p in &prompts {
        let arguments: Vec<String> = p
            .arguments
            .iter()
            .map(|a| {
                let name = inert_line(&a.name, 40);
                if a.required {
                    name
                } else {
                    format!("[{name}]")
                }
            })
            .collect();
        text.push_str(&format!(
            "  {} {}\n",
            inert_line(&p.name, 60),
            arguments.join(" ")
        ));
        if let Some(d) = p.description.as_deref().or(p.title.as_deref()) {
            text.push_str(&format!("      {}\n", inert_line(d, 200)));
        }
    }
    out::print(&text);
    ExitCode::SUCCESS
}

async fn get_prompt(
    hub: &Hub,
    args: &PromptsArgs,
    name: &str,
    arguments: &BTreeMap<String, String>,
) -> ExitCode {
    let got: Offered<_> = hub.get_prompt(&args.alias, name, arguments).await;
    let messages = match got.result {
        Ok(messages) => messages,
        Err(e) => return fail(&e, got.server_output.as_deref(), args.json, None),
    };
    if args.json {
        let mut line = json!({ "ok": true, "alias": args.alias, "name": name });
        if let Some(object) = line.as_object_mut()
            && let Ok(serde_json::Value::Object(fields)) = serde_json::to_value(&messages)
        {
            object.extend(fields);
        }
        out::println(&out_json::to_line(&line));
        return ExitCode::SUCCESS;
    }
    let mut text = String::new();
    for message in &messages.messages {
        text.push_str(&format!("[{}]\n", message.role));
        text.push_str(&render::content(std::slice::from_ref(&message.content)));
    }
    if messages.truncated {
        text.push_str("[mcp-harness: the prompt was longer; it was cut]\n");
    }
    out::print(&inert(&text, true));
    ExitCode::SUCCESS
}
