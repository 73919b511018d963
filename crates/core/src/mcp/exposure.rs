//! The validation pipeline from published to exposed, all-or-nothing per
//! connection: names (rule 3) → schema (rule 4) → policy (rule 5).
//!
//! Tools the policy denies are never exposed, so the name and schema rules do not
//! apply to them: denying a tool is how an operator keeps a server whose one odd
//! tool would otherwise reject the whole connection.

use std::collections::BTreeMap;
use std::sync::Arc;

use super::connection::{Connection, Endpoint};
use super::error::{ConnectError, ConnectErrorCode as Code};
use super::mcpheader;
use super::names::{MAX_EXPOSED_NAME_LEN, ServerAlias, exposed_name, quote};
use super::pins::PinHash;
use super::policy::{Effect, ToolPolicy};
use super::published::PublishedTool;
use super::registry::ExposedTool;
use super::schema::{self, SchemaProblem};
use super::undeclared::{self, ExtraArguments};
use super::validators::{Precompiled, ValidatorCache};

/// Validates `published` against the local rules and builds the exposed tools
/// (in listing order), or rejects the whole connection.
pub fn expose(
    conn: &Arc<Connection>,
    published: &[PublishedTool],
    policy: &ToolPolicy,
    extra: ExtraArguments,
    precompiled: Precompiled,
    pins: &[Option<PinHash>],
) -> Result<Vec<Arc<ExposedTool>>, ConnectError> {
    let alias = conn.alias();
    let (candidates, definitions): (Vec<&PublishedTool>, Vec<Option<PinHash>>) = published
        .iter()
        .enumerate()
        .filter(|(_, t)| policy.effect(&t.name) != Some(Effect::Deny))
        .map(|(i, t)| (t, pins.get(i).cloned().flatten()))
        .unzip();
    let names = check_names(alias, &candidates)?;
    if conn.is_stateless() && *conn.endpoint() == Endpoint::Http {
        check_headers(&candidates)?;
    }
    // Normally every schema was compiled while the listing was in flight; the
    // local cache covers anything that was not.
    let mut cache = ValidatorCache::default();
    let mut validators = Vec::with_capacity(candidates.len());
    let mut outputs = Vec::with_capacity(candidates.len());
    for (i, tool) in candidates.iter().enumerate() {
        let compiled = precompiled
            .get(i, &tool.input_schema)
            .unwrap_or_else(|| cache.get_or_compile(&tool.input_schema));
        validators.push(compiled.map_err(|p| schema_error(tool, Which::Input, p))?);
        let output = match &tool.output_schema {
            Some(schema) => Some(
                schema::compile_output(schema)
                    .map(Arc::new)
                    .map_err(|p| schema_error(tool, Which::Output, p))?,
            ),
            None => None,
        };
        outputs.push(output);
    }
    check_policy(alias, published, policy)?;
    Ok(candidates
        .into_iter()
        .zip(names)
        .zip(validators.into_iter().zip(outputs))
        .zip(definitions)
        .map(
            |(((tool, name), (validator, output_validator)), definition)| {
                let hidden_text = tool.has_hidden_text();
                // The model reads the schema too: without invisible code points.
                // (Arguments are still validated against the schema as published.)
                let model_schema = if hidden_text {
                    Arc::new(crate::sanitize::hidden::strip_value(&tool.input_schema))
                } else {
                    Arc::clone(&tool.input_schema)
                };
                // What the schema declares, worked out once here: a call only looks up its keys.
                let (undeclared, declared) = undeclared::classify(&tool.input_schema, extra);
                let suspicious: Arc<[_]> = super::screen::tool(tool, published).into();
                Arc::new(ExposedTool {
                    name,
                    alias: alias.clone(),
                    remote_name: tool.name.clone(),
                    // The model reads this: no control characters, bidi controls or
                    // other invisible code points from the server.
                    description: tool
                        .description
                        .as_deref()
                        .map(|d| crate::sanitize::for_model(d).into_owned()),
                    input_schema: Arc::clone(&tool.input_schema),
                    model_schema,
                    hidden_text,
                    suspicious,
                    undeclared,
                    declared: declared.map(Arc::new),
                    effect: policy.effect(&tool.name).unwrap_or(Effect::Confirm),
                    validator,
                    output_validator,
                    task_support: tool.task_support,
                    definition,
                    connection: Arc::clone(conn),
                })
            },
        )
        .collect())
}

/// Exposed names: at most 64 characters, no two tools on one name.
fn check_names(alias: &ServerAlias, tools: &[&PublishedTool]) -> Result<Vec<String>, ConnectError> {
    let names: Vec<String> = tools.iter().map(|t| exposed_name(alias, &t.name)).collect();
    let too_long: Vec<(&PublishedTool, &String)> = tools
        .iter()
        .zip(&names)
        .filter(|(_, n)| n.len() > MAX_EXPOSED_NAME_LEN)
        .map(|(t, n)| (*t, n))
        .collect();
    if !too_long.is_empty() {
        let list: Vec<String> = too_long
            .iter()
            .map(|(t, n)| format!("{} would be `{n}` ({} characters)", quote(&t.name), n.len()))
            .collect();
        return Err(ConnectError::new(
            Code::NameTooLong,
            format!(
                "naming rule: exposed names may have at most {MAX_EXPOSED_NAME_LEN} characters; {}",
                list.join(", ")
            ),
            "use a shorter alias, or set these tools to \"deny\" in the policy",
        )
        .with_tools(too_long.iter().map(|(t, _)| t.name.clone()).collect()));
    }
    let mut by_name: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for (tool, name) in tools.iter().zip(&names) {
        by_name.entry(name).or_default().push(&tool.name);
    }
    let clashes: Vec<(&str, Vec<&str>)> = by_name
        .into_iter()
        .filter(|(_, remotes)| remotes.len() > 1)
        .collect();
    if !clashes.is_empty() {
        let list: Vec<String> = clashes
            .iter()
            .map(|(name, remotes)| {
                let quoted: Vec<String> = remotes.iter().map(|r| quote(r)).collect();
                format!("{} would all be `{name}`", quoted.join(" and "))
            })
            .collect();
        return Err(ConnectError::new(
            Code::NameCollision,
            format!(
                "naming rule: names collide after normalization: {}",
                list.join("; ")
            ),
            "set all but one of each group to \"deny\" in the policy",
        )
        .with_tools(
            clashes
                .iter()
                .flat_map(|(_, r)| r.iter().map(|s| s.to_string()))
                .collect(),
        ));
    }
    Ok(names)
}

/// `x-mcp-header` (2026-07-28 over HTTP): every invalid definition, by name.
fn check_headers(tools: &[&PublishedTool]) -> Result<(), ConnectError> {
    let invalid: Vec<(&PublishedTool, mcpheader::HeaderError)> = tools
        .iter()
        .filter_map(|t| mcpheader::check(&t.input_schema).err().map(|why| (*t, why)))
        .collect();
    if invalid.is_empty() {
        return Ok(());
    }
    let list: Vec<String> = invalid
        .iter()
        .map(|(t, why)| format!("{}: {why}", quote(&t.name)))
        .collect();
    Err(ConnectError::new(
        Code::InvalidToolDefinition,
        format!(
            "header rule: tools with invalid `x-mcp-header` annotations cannot be called over \
             Streamable HTTP: {}",
            list.join("; ")
        ),
        "set these tools to \"deny\" in the policy, or ask the server's authors to fix them",
    )
    .with_tools(invalid.iter().map(|(t, _)| t.name.clone()).collect()))
}

/// Which of a tool's schemas broke the schema rule.
#[derive(Clone, Copy)]
enum Which {
    Input,
    Output,
}

fn schema_error(tool: &PublishedTool, which: Which, problem: SchemaProblem) -> ConnectError {
    let hint =
        "set this tool to \"deny\" in the policy, or ask the server's authors to fix its schema";
    let tools = vec![tool.name.clone()];
    let t = quote(&tool.name);
    let field = match which {
        Which::Input => "inputSchema",
        Which::Output => "outputSchema",
    };
    match problem {
        SchemaProblem::NotObject(detail) => ConnectError::new(
            Code::SchemaNotObject,
            format!("schema rule: the {field} of {t} must have top-level \"type\": \"object\" ({detail})"),
            hint,
        ),
        SchemaProblem::ExternalRef(reference) => ConnectError::new(
            Code::SchemaExternalRef,
            format!(
                "schema rule: the {field} of {t} references {}, which is not a local `#…` pointer; \
                 external schemas are never fetched",
                quote(&reference)
            ),
            hint,
        ),
        SchemaProblem::Invalid(detail) => ConnectError::new(
            Code::SchemaInvalid,
            format!("schema rule: the {field} of {t} does not compile: {}", crate::sanitize::inert_line(&detail, 300)),
            hint,
        ),
    }
    .with_tools(tools)
}

fn check_policy(
    alias: &ServerAlias,
    published: &[PublishedTool],
    policy: &ToolPolicy,
) -> Result<(), ConnectError> {
    let Err(diff) = policy.check_exact(published.iter().map(|t| t.name.as_str())) else {
        return Ok(());
    };
    let list = |names: &[String]| {
        names
            .iter()
            .map(|n| quote(n))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let mut parts = Vec::new();
    if !diff.missing.is_empty() {
        parts.push(format!(
            "published but not in the policy: {}",
            list(&diff.missing)
        ));
    }
    if !diff.extra.is_empty() {
        parts.push(format!(
            "in the policy but not published: {}",
            list(&diff.extra)
        ));
    }
    let mut error = ConnectError::new(
        Code::PolicyMismatch,
        format!(
            "policy rule: the policy of `{alias}` must list exactly the tools the server publishes; {}",
            parts.join("; ")
        ),
        format!(
            "run `mcp-harness policy {alias}` to print a [servers.{alias}.tools] block for what the server \
             publishes (every tool \"confirm\"), review it, and put it in the config"
        ),
    )
    .with_tools(diff.missing.iter().chain(&diff.extra).cloned().collect());
    error.policy_diff = Some(Box::new(diff));
    Err(error)
}
