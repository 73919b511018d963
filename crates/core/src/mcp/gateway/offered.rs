//! What resources and prompts have in common through the gateway: which
//! aliases a client is offered them from, and how a refusal reaches the
//! client. `resources/read` and `prompts/get` have no `isError` result, so a
//! refusal is a JSON-RPC error whose message is the harness's envelope message
//! and whose `data` is the whole envelope (`code`, `message`, `alias`) — never
//! the server's own words.

use rmcp::ErrorData as McpError;
use serde_json::Value;

use super::super::envelope::{ToolError, ToolErrorCode as Code};
use super::super::events::{ConnectionId, Offering};
use super::super::hub::Hub;
use super::super::names::ServerAlias;
use super::super::policy::Effect;
use super::super::registry::Snapshot;
use super::settings::ClientProfile;

/// The aliases, in name order, whose live connection declared `what` and that
/// `client` may see: for resources, only those whose read policy is not
/// `deny` (their listing is refused to the Lead too). With each, its
/// connection, to tell a reconnect from no change.
pub(super) fn aliases_offering(
    hub: &Hub,
    snapshot: &Snapshot,
    client: &ClientProfile,
    what: Offering,
) -> Vec<(ServerAlias, ConnectionId)> {
    let mut aliases: Vec<(ServerAlias, ConnectionId)> = snapshot
        .connections()
        .filter(|entry| {
            let conn = entry.connection();
            !conn.is_ended()
                && client.sees(entry.alias())
                && match what {
                    Offering::Resources => {
                        conn.has_resources()
                            && hub.resource_policy(entry.alias().as_str()) != Effect::Deny
                    }
                    Offering::Prompts => conn.has_prompts(),
                }
        })
        .map(|entry| (entry.alias().clone(), entry.connection().id()))
        .collect();
    aliases.sort_by(|a, b| a.0.cmp(&b.0));
    aliases
}

/// A refusal in the harness's words, with the alias when there is one.
pub(super) fn envelope(code: Code, message: String, alias: Option<&ServerAlias>) -> ToolError {
    let mut e = ToolError::new(code, message);
    e.alias = alias.map(|a| a.as_str().to_string());
    e
}

/// The envelope as the JSON-RPC error the client gets: for what is not (or
/// no longer) offered, "resource not found" (-32002) for a resource and
/// invalid params for a prompt (what the spec names for each); invalid params
/// for bad arguments, invalid request for a refusal by policy or the
/// operator, internal error for an upstream that failed (its words stay in
/// the harness).
pub(super) fn to_mcp_error(error: &ToolError, what: Offering) -> McpError {
    let data = serde_json::to_value(error).unwrap_or(Value::Null);
    let message = error.message.clone();
    match error.code {
        Code::McpUnknownTool | Code::McpNotConnected => match what {
            Offering::Resources => McpError::resource_not_found(message, Some(data)),
            Offering::Prompts => McpError::invalid_params(message, Some(data)),
        },
        Code::McpInvalidArguments | Code::InvalidArguments => {
            McpError::invalid_params(message, Some(data))
        }
        Code::McpPermissionDenied | Code::PermissionDenied => {
            McpError::invalid_request(message, Some(data))
        }
        _ => McpError::internal_error(message, Some(data)),
    }
}
