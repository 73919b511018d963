//! The Lead's own tools: MCP management by alias only (never a command, URL or
//! path), and delegation to subagents and teammates.

use crate::mcp::{AliasState, Effect, FailureKind, Hub, HubError, ToolError, ToolErrorCode};

/// `connect_mcp {alias}`: the result for the model, and what the server said
/// (its error text, its stderr) for the operator only.
pub async fn connect_mcp(hub: &Hub, alias: &str) -> (Result<String, ToolError>, Option<String>) {
    match connect(hub, alias).await {
        Ok(text) => (Ok(text), None),
        Err((error, server_output)) => {
            let said = (!server_output.is_empty()).then(|| server_output.join("\n"));
            (Err(error), said)
        }
    }
}

async fn connect(hub: &Hub, alias: &str) -> Result<String, (ToolError, Vec<String>)> {
    let failed = |message: String| {
        let mut e = ToolError::new(ToolErrorCode::McpConnectFailed, message);
        e.alias = Some(alias.to_string());
        e
    };
    let report = match hub.connect(alias).await {
        Ok(report) => report,
        Err(HubError::AlreadyConnected(_)) => {
            let tools: Vec<String> = hub
                .snapshot()
                .tools()
                .filter(|t| t.alias.as_str() == alias)
                .map(|t| t.name.clone())
                .collect();
            return Ok(format!(
                "`{alias}` is already connected; its tools: {}",
                tools.join(", ")
            ));
        }
        Err(e) => return Err((failed(e.to_string()), Vec::new())),
    };
    match report.outcome {
        Ok(exposed) => {
            let names: Vec<&str> = exposed.iter().map(|t| t.name.as_str()).collect();
            let denied: Vec<&str> = report
                .published
                .iter()
                .filter(|p| !exposed.iter().any(|t| t.remote_name == p.name))
                .map(|p| p.name.as_str())
                .collect();
            let mut text = format!(
                "connected `{alias}`: {} tools exposed, available from your next request: {}",
                names.len(),
                names.join(", ")
            );
            if !denied.is_empty() {
                text.push_str(&format!(
                    ". Not offered (local policy: deny): {}",
                    denied.len()
                ));
            }
            Ok(text)
        }
        Err(e) => {
            let kind = match e.kind() {
                FailureKind::Rejected => "was rejected",
                FailureKind::Failed => "failed",
            };
            // The server's words (its error text, stderr) go to the operator only.
            Err((
                failed(format!(
                    "connecting `{alias}` {kind} ({}): {}. What the operator can do: {}",
                    e.code,
                    e.model_message(),
                    e.hint
                )),
                e.server_output,
            ))
        }
    }
}

/// `disconnect_mcp {alias}`.
pub fn disconnect_mcp(hub: &Hub, alias: &str) -> Result<String, ToolError> {
    let revoked = hub
        .snapshot()
        .tools()
        .filter(|t| t.alias.as_str() == alias)
        .count();
    hub.disconnect(alias).map_err(|e| {
        let mut error = ToolError::new(ToolErrorCode::McpNotConnected, e.to_string());
        error.alias = Some(alias.to_string());
        error
    })?;
    Ok(format!(
        "disconnected `{alias}`; its {revoked} tools were revoked"
    ))
}

/// `list_mcp_servers {}`: aliases and states, so the model knows what it may connect.
pub fn list_mcp_servers(hub: &Hub) -> String {
    let aliases = hub.aliases();
    if aliases.is_empty() {
        return "no MCP servers are configured".into();
    }
    let lines: Vec<String> = aliases
        .iter()
        .map(|(alias, state)| {
            let detail = match state {
                AliasState::Ready { exposed, .. } => format!("connected, {exposed} tools exposed"),
                AliasState::Rejected { code, .. } => {
                    format!("rejected ({code}); the operator must fix it")
                }
                AliasState::Failed { code, .. } => format!("failed ({code})"),
                AliasState::Lost { cause } => format!("lost ({cause}); it can be reconnected"),
                other => other.label().to_string(),
            };
            format!("{alias}: {detail}")
        })
        .collect();
    format!(
        "{}\nConnect one with connect_mcp {{\"alias\": …}}.",
        lines.join("\n")
    )
}

/// `read_result {call_id, offset, length}`: a page of a result saved whole.
/// The text is the server's, so it goes to the model as any result does
/// (without invisible code points).
/// Credentials in the page are kept from the model like a result's (the
/// second value: what was withheld, for the operator).
pub fn read_result(
    hub: &Hub,
    arguments: &serde_json::Value,
    call: &crate::mcp::CallIdentity,
) -> (Result<String, ToolError>, crate::mcp::secrets::Redactions) {
    let mut withheld = Default::default();
    let text = read_result_page(hub, arguments, |page| {
        withheld = hub.withhold_secrets(call, "read_result", page);
    });
    (text, withheld)
}

fn read_result_page(
    hub: &Hub,
    arguments: &serde_json::Value,
    redact: impl FnOnce(&mut String),
) -> Result<String, ToolError> {
    let call_id = arguments
        .get("call_id")
        .and_then(serde_json::Value::as_str)
        .unwrap_or_default();
    let offset = arguments
        .get("offset")
        .and_then(serde_json::Value::as_u64)
        .unwrap_or(0);
    let max = hub.limits().max_result_bytes;
    let length = arguments
        .get("length")
        .and_then(serde_json::Value::as_u64)
        .map_or(max, |l| (l as usize).min(max));
    let failed = |message: String| {
        let mut e = ToolError::new(ToolErrorCode::ToolFailed, message);
        e.tool = Some("read_result".into());
        e
    };
    let dir = hub
        .results_dir()
        .ok_or_else(|| failed("this session saves no results".into()))?;
    let page = crate::mcp::results::read(&dir, call_id, offset, length)
        .map_err(|e| failed(e.to_string()))?;
    let stem = crate::mcp::results::file_stem(call_id);
    let mut text = format!(
        "[results/{stem}.txt: bytes {}–{} of {}]\n",
        page.start, page.end, page.total
    );
    let mut body = crate::sanitize::hidden::strip(&page.text).into_owned();
    redact(&mut body);
    text.push_str(&body);
    if page.end < page.total {
        text.push_str(&format!(
            "\n[mcp-harness: {} more bytes; read_result {{\"call_id\": \"{stem}\", \"offset\": {}}} reads on]",
            page.total - page.end,
            page.end
        ));
    }
    Ok(text)
}

/// `list_mcp_resources`: the server's listing as the model sees it, every
/// server string one line without invisible code points, and the local policy.
pub fn resources_text(alias: &str, list: &crate::mcp::ResourceList) -> String {
    use crate::sanitize::for_model_line;
    let mut lines = Vec::new();
    lines.push(format!(
        "Resources of `{alias}` ({}; reading them: {} by local policy):",
        list.resources.len(),
        match list.read {
            Effect::Allow => "allowed",
            Effect::Confirm => "the operator confirms each read",
            Effect::Deny => "denied",
        }
    ));
    for r in &list.resources {
        let mut line = format!(
            "- {} <{}>",
            for_model_line(&r.name, 120),
            for_model_line(&r.uri, 500)
        );
        if let Some(mime) = &r.mime_type {
            line.push_str(&format!(" ({})", for_model_line(mime, 80)));
        }
        if let Some(size) = r.size {
            line.push_str(&format!(", {size} bytes"));
        }
        if let Some(d) = r.description.as_deref().or(r.title.as_deref()) {
            line.push_str(&format!(": {}", for_model_line(d, 300)));
        }
        lines.push(line);
    }
    if !list.templates.is_empty() {
        lines.push(format!(
            "Templates ({}; fill in the {{…}} parts to read one):",
            list.templates.len()
        ));
        for t in &list.templates {
            let mut line = format!(
                "- {} <{}>",
                for_model_line(&t.name, 120),
                for_model_line(&t.uri_template, 500)
            );
            if let Some(d) = t.description.as_deref().or(t.title.as_deref()) {
                line.push_str(&format!(": {}", for_model_line(d, 300)));
            }
            lines.push(line);
        }
    }
    if list.malformed > 0 {
        lines.push(format!("({} malformed entries left out)", list.malformed));
    }
    lines.join("\n")
}
