//! `[limits]` and `[servers.ALIAS]`: how to reach each server, its timeouts and
//! its local policy, validated into the MCP layer's specs.

use std::collections::BTreeMap;
use std::time::Duration;

use serde::Deserialize;

use super::oauth::{RawAlg, RawEndpointAuth, RawGrant, RawMode, RawOAuth, auth_spec};
use crate::mcp::flows::{Label, Labels, ToolLabels};
use crate::mcp::spec::{ProtocolChoice, TaskMode};
use crate::mcp::{
    Effect, Limits, PinMode, ServerAlias, ServerSpec, ToolPolicy, TransportSpec, vars,
};

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub(super) struct RawLimits {
    connect_timeout_ms: Option<u64>,
    call_timeout_ms: Option<u64>,
    max_result_bytes: Option<usize>,
    max_message_bytes: Option<usize>,
    reset_timeout_on_progress: Option<bool>,
    max_call_ms: Option<u64>,
    max_tools_in_request: Option<usize>,
    max_tool_tokens_in_request: Option<usize>,
    close_grace_ms: Option<u64>,
    max_tools: Option<usize>,
    max_list_pages: Option<usize>,
    task_timeout_ms: Option<u64>,
    max_input_rounds: Option<usize>,
    max_request_state_bytes: Option<usize>,
    discover_timeout_ms: Option<u64>,
    idle_timeout_ms: Option<u64>,
    liveness_ping_ms: Option<u64>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawServer {
    command: Option<String>,
    args: Option<Vec<String>>,
    env: Option<BTreeMap<String, String>>,
    cwd: Option<String>,
    url: Option<String>,
    headers: Option<BTreeMap<String, String>>,
    connect_timeout_ms: Option<u64>,
    call_timeout_ms: Option<u64>,
    reset_timeout_on_progress: Option<bool>,
    max_call_ms: Option<u64>,
    max_message_bytes: Option<usize>,
    idle_timeout_ms: Option<u64>,
    task_timeout_ms: Option<u64>,
    max_concurrent_calls: Option<usize>,
    extra_arguments: Option<crate::mcp::undeclared::ExtraArguments>,
    allow_insecure_http: Option<bool>,
    protocol: Option<ProtocolChoice>,
    tasks: Option<TaskMode>,
    pin: Option<PinMode>,
    tools: Option<BTreeMap<String, Effect>>,
    resources: Option<RawResources>,
    /// Flow labels of every tool of the server (rule 20).
    labels: Option<Vec<Label>>,
    /// Per-tool labels, replacing the server's for that tool.
    tool_labels: Option<BTreeMap<String, Vec<Label>>>,
    // OAuth (see `oauth.rs`).
    auth: Option<RawMode>,
    client_id: Option<String>,
    client_secret_env: Option<String>,
    client_metadata_url: Option<String>,
    scopes: Option<Vec<String>>,
    callback_port: Option<u16>,
    grant: Option<RawGrant>,
    token_endpoint_auth: Option<RawEndpointAuth>,
    private_key_file: Option<String>,
    private_key_alg: Option<RawAlg>,
    assertion_env: Option<String>,
    idp_token_endpoint: Option<String>,
    idp_client_id: Option<String>,
    idp_client_secret_env: Option<String>,
    id_token_env: Option<String>,
}

/// `[servers.ALIAS.resources]`: the local policy for the server's resources.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawResources {
    read: Option<Effect>,
}

impl RawServer {
    fn take_oauth(&mut self) -> RawOAuth {
        RawOAuth {
            auth: self.auth.take(),
            client_id: self.client_id.take(),
            client_secret_env: self.client_secret_env.take(),
            client_metadata_url: self.client_metadata_url.take(),
            scopes: self.scopes.take(),
            callback_port: self.callback_port.take(),
            grant: self.grant.take(),
            token_endpoint_auth: self.token_endpoint_auth.take(),
            private_key_file: self.private_key_file.take(),
            private_key_alg: self.private_key_alg.take(),
            assertion_env: self.assertion_env.take(),
            idp_token_endpoint: self.idp_token_endpoint.take(),
            idp_client_id: self.idp_client_id.take(),
            idp_client_secret_env: self.idp_client_secret_env.take(),
            id_token_env: self.id_token_env.take(),
        }
    }
}

pub(super) type KeyError = (String, String);

pub(super) fn limits(raw: &RawLimits) -> Result<Limits, KeyError> {
    let d = Limits::default();
    let ms = |key: &str, v: Option<u64>, default: Duration| match v {
        Some(0) => Err((key.to_string(), "must be at least 1".to_string())),
        Some(ms) => Ok(Duration::from_millis(ms)),
        None => Ok(default),
    };
    let count = |key: &str, v: Option<usize>, default: usize| match v {
        Some(0) => Err((key.to_string(), "must be at least 1".to_string())),
        Some(n) => Ok(n),
        None => Ok(default),
    };
    Ok(Limits {
        connect_timeout: ms(
            "connect_timeout_ms",
            raw.connect_timeout_ms,
            d.connect_timeout,
        )?,
        call_timeout: ms("call_timeout_ms", raw.call_timeout_ms, d.call_timeout)?,
        max_result_bytes: count("max_result_bytes", raw.max_result_bytes, d.max_result_bytes)?,
        max_message_bytes: message_bytes(
            "max_message_bytes",
            raw.max_message_bytes,
            d.max_message_bytes,
        )?,
        reset_timeout_on_progress: raw
            .reset_timeout_on_progress
            .unwrap_or(d.reset_timeout_on_progress),
        max_call: ms("max_call_ms", raw.max_call_ms, d.max_call)?,
        max_tools_in_request: count(
            "max_tools_in_request",
            raw.max_tools_in_request,
            d.max_tools_in_request,
        )?,
        max_tool_tokens_in_request: count(
            "max_tool_tokens_in_request",
            raw.max_tool_tokens_in_request,
            d.max_tool_tokens_in_request,
        )?,
        close_grace: ms("close_grace_ms", raw.close_grace_ms, d.close_grace)?,
        max_tools: count("max_tools", raw.max_tools, d.max_tools)?,
        max_list_pages: count("max_list_pages", raw.max_list_pages, d.max_list_pages)?,
        task_timeout: ms("task_timeout_ms", raw.task_timeout_ms, d.task_timeout)?,
        max_input_rounds: count("max_input_rounds", raw.max_input_rounds, d.max_input_rounds)?,
        max_request_state_bytes: count(
            "max_request_state_bytes",
            raw.max_request_state_bytes,
            d.max_request_state_bytes,
        )?,
        discover_timeout: ms(
            "discover_timeout_ms",
            raw.discover_timeout_ms,
            d.discover_timeout,
        )?,
        idle_timeout: ms("idle_timeout_ms", raw.idle_timeout_ms, d.idle_timeout)?,
        // 0 turns the check off.
        liveness_ping: match raw.liveness_ping_ms {
            Some(0) => None,
            Some(ms) => Some(Duration::from_millis(ms)),
            None => d.liveness_ping,
        },
    })
}

/// `max_message_bytes`: at least 1 KiB, at most 256 MiB.
fn message_bytes(key: &str, v: Option<usize>, default: usize) -> Result<usize, KeyError> {
    use crate::mcp::spec::MAX_MESSAGE_BYTES_LIMIT;
    match v {
        None => Ok(default),
        Some(n) if n < 1024 => Err((key.to_string(), "must be at least 1024".to_string())),
        Some(n) if n > MAX_MESSAGE_BYTES_LIMIT => Err((
            key.to_string(),
            format!("must be at most {MAX_MESSAGE_BYTES_LIMIT} (256 MiB)"),
        )),
        Some(n) => Ok(n),
    }
}

pub(super) fn server_spec(
    alias: &str,
    mut raw: RawServer,
    limits: &Limits,
    base: Option<&std::path::Path>,
) -> Result<ServerSpec, KeyError> {
    let key = |k: &str| format!(".{k}");
    let labels = tool_labels(&raw)?;
    let oauth = raw.take_oauth();
    let transport = match (raw.command, raw.url) {
        (Some(_), Some(_)) => {
            return Err((
                String::new(),
                "set either `command` (stdio) or `url` (Streamable HTTP or WebSocket), not both"
                    .into(),
            ));
        }
        (None, None) => {
            return Err((
                String::new(),
                "set `command` (a stdio server) or `url` (a Streamable HTTP or WebSocket server)"
                    .into(),
            ));
        }
        (Some(command), None) => {
            if raw.headers.is_some() {
                return Err((
                    key("headers"),
                    "`headers` only applies to `url` servers".into(),
                ));
            }
            if command.trim().is_empty() {
                return Err((key("command"), "must not be empty".into()));
            }
            if raw.allow_insecure_http.is_some() {
                return Err((
                    key("allow_insecure_http"),
                    "`allow_insecure_http` only applies to `url` servers".into(),
                ));
            }
            if let Some(k) = oauth.any() {
                return Err((
                    key(k),
                    "OAuth settings only apply to `url` servers (stdio servers take credentials from `env`)".into(),
                ));
            }
            TransportSpec::Stdio {
                command,
                args: raw.args.unwrap_or_default(),
                env: raw.env.unwrap_or_default().into_iter().collect(),
                cwd: raw.cwd,
            }
        }
        (None, Some(url)) => {
            for (present, name) in [
                (raw.args.is_some(), "args"),
                (raw.env.is_some(), "env"),
                (raw.cwd.is_some(), "cwd"),
            ] {
                if present {
                    return Err((
                        key(name),
                        format!("`{name}` only applies to `command` servers"),
                    ));
                }
            }
            let websocket = url.starts_with("ws://") || url.starts_with("wss://");
            if !(websocket
                || url.starts_with("http://")
                || url.starts_with("https://")
                || url.starts_with("${"))
            {
                return Err((
                    key("url"),
                    "must start with http://, https:// (Streamable HTTP), ws:// or wss:// \
                     (WebSocket)"
                        .into(),
                ));
            }
            let allow_insecure_http = raw.allow_insecure_http.unwrap_or(false);
            if !allow_insecure_http {
                insecure_http(&url).map_err(|problem| (key("url"), problem))?;
            }
            let headers = raw.headers.unwrap_or_default().into_iter().collect();
            if websocket {
                if let Some(k) = oauth.any() {
                    return Err((
                        key(k),
                        "OAuth settings only apply to http:// and https:// servers (a WebSocket \
                         server takes a token in `headers`)"
                            .into(),
                    ));
                }
                TransportSpec::WebSocket {
                    url,
                    headers,
                    allow_insecure_http,
                }
            } else {
                TransportSpec::Http {
                    url,
                    headers,
                    auth: Box::new(auth_spec(oauth, base)?),
                    allow_insecure_http,
                }
            }
        }
    };
    check_templates(&transport)?;
    let timeout = |k: &str, v: Option<u64>, default: Duration| match v {
        Some(0) => Err((key(k), "must be at least 1".to_string())),
        Some(ms) => Ok(Duration::from_millis(ms)),
        None => Ok(default),
    };
    Ok(ServerSpec {
        alias: ServerAlias::new(alias),
        transport,
        connect_timeout: timeout(
            "connect_timeout_ms",
            raw.connect_timeout_ms,
            limits.connect_timeout,
        )?,
        call_timeout: timeout("call_timeout_ms", raw.call_timeout_ms, limits.call_timeout)?,
        reset_timeout_on_progress: raw
            .reset_timeout_on_progress
            .unwrap_or(limits.reset_timeout_on_progress),
        max_call: timeout("max_call_ms", raw.max_call_ms, limits.max_call)?,
        max_message_bytes: message_bytes(
            ".max_message_bytes",
            raw.max_message_bytes,
            limits.max_message_bytes,
        )?,
        idle_timeout: timeout("idle_timeout_ms", raw.idle_timeout_ms, limits.idle_timeout)?,
        policy: ToolPolicy::new(raw.tools.unwrap_or_default()),
        protocol: raw.protocol.unwrap_or_default(),
        tasks: raw.tasks.unwrap_or_default(),
        task_timeout: timeout("task_timeout_ms", raw.task_timeout_ms, limits.task_timeout)?,
        pin: raw.pin.unwrap_or_default(),
        resource_read: raw
            .resources
            .and_then(|r| r.read)
            .unwrap_or(Effect::Confirm),
        max_concurrent_calls: match raw.max_concurrent_calls {
            Some(0) => return Err((key("max_concurrent_calls"), "must be at least 1".into())),
            Some(n) => n,
            None => crate::mcp::spec::MAX_CONCURRENT_CALLS,
        },
        labels,
        extra_arguments: raw.extra_arguments.unwrap_or_default(),
    })
}

/// `labels` and `[servers.ALIAS.tool_labels]`; a tool named there must be one
/// the `tools` table names (when there is one): a typo is an error, with the
/// closest name.
fn tool_labels(raw: &RawServer) -> Result<ToolLabels, KeyError> {
    let mut tools = BTreeMap::new();
    for (tool, labels) in raw.tool_labels.iter().flatten() {
        if let Some(policy) = &raw.tools
            && !policy.contains_key(tool)
        {
            let hint = super::closest(tool, policy.keys().map(String::as_str))
                .map(|c| format!("; did you mean `{c}`?"))
                .unwrap_or_default();
            return Err((
                format!(".tool_labels.{tool}"),
                format!("names no tool of the `tools` table{hint}"),
            ));
        }
        tools.insert(tool.clone(), Labels::of(labels));
    }
    Ok(ToolLabels {
        server: raw.labels.as_deref().map(Labels::of).unwrap_or_default(),
        tools,
    })
}

/// Plaintext `http://` to a host that is not loopback: everything the harness
/// sends (arguments, headers, tokens) would cross the network in the clear. A
/// host written as a variable is judged at connect time, once expanded.
fn insecure_http(url: &str) -> Result<(), String> {
    let authority = url
        .strip_prefix("http://")
        .or_else(|| url.strip_prefix("ws://"))
        .map(|rest| rest.split(['/', '?', '#']).next().unwrap_or_default());
    match authority {
        Some(authority) if !authority.contains('$') => {}
        _ => return Ok(()),
    }
    match crate::mcp::spec::insecure_remote_host(url) {
        Some(host) => Err(format!(
            "plaintext {}// to `{host}`, which is not loopback (127.0.0.1, ::1, localhost), \
             would send every request and token in the clear; use https://, or set \
             `allow_insecure_http = true` on this server if the network is yours",
            url.split("//").next().unwrap_or("http:")
        )),
        None => Ok(()),
    }
}

/// `${VAR}` syntax is checked at load time; values are looked up at connect time.
fn check_templates(transport: &TransportSpec) -> Result<(), KeyError> {
    let check =
        |key: String, value: &str| vars::check_syntax(value).map_err(|e| (key, e.to_string()));
    match transport {
        TransportSpec::Stdio {
            command,
            args,
            env,
            cwd,
        } => {
            check(".command".into(), command)?;
            for (i, a) in args.iter().enumerate() {
                check(format!(".args[{i}]"), a)?;
            }
            for (k, v) in env {
                check(format!(".env.{k}"), v)?;
            }
            if let Some(cwd) = cwd {
                check(".cwd".into(), cwd)?;
            }
        }
        TransportSpec::Http { url, headers, .. }
        | TransportSpec::WebSocket { url, headers, .. } => {
            check(".url".into(), url)?;
            for (k, v) in headers {
                check(format!(".headers.{k}"), v)?;
            }
        }
    }
    Ok(())
}
