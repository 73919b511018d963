//! `completion/complete` through the gateway: the reference is resolved as a
//! get or a read would be — a prompt by its outside name in a fresh listing
//! of what the client is offered, a resource template by its outside
//! `uriTemplate` as listed (never by passing on the client's string) — and
//! asked of that alias's server under the upstream name; the values come back
//! capped at 100 (the spec's maximum). Only where the client is offered the
//! prompts or resources of a server that declared `completions` is the
//! capability declared.

use std::collections::BTreeMap;

use rmcp::ErrorData as McpError;
use rmcp::model::{CompleteRequestParams, CompleteResult, Reference};
use serde_json::{Value, json};

use super::super::envelope::ToolErrorCode as Code;
use super::super::events::Offering;
use super::super::hub::Hub;
use super::super::offerings::CompletionRef;
use super::super::registry::Snapshot;
use super::Shared;
use super::offered::{aliases_offering, envelope, to_mcp_error};
use super::prompts::PromptView;
use super::resources::ResourceView;
use super::settings::ClientProfile;

/// Whether `client` is offered prompts or resources of a live connection
/// that declared `completions`.
pub(super) fn offered(hub: &Hub, snapshot: &Snapshot, client: &ClientProfile) -> bool {
    [Offering::Prompts, Offering::Resources]
        .into_iter()
        .flat_map(|what| aliases_offering(hub, snapshot, client, what))
        .any(|(alias, _)| {
            snapshot
                .connection_for(&alias)
                .is_some_and(|entry| entry.connection().has_completions())
        })
}

/// One `completion/complete` of `client`'s.
pub(super) async fn complete(
    shared: &Shared,
    client: &ClientProfile,
    request: CompleteRequestParams,
) -> Result<CompleteResult, McpError> {
    let context: BTreeMap<String, String> = request
        .context
        .and_then(|c| c.arguments)
        .map(|a| a.into_iter().collect())
        .unwrap_or_default();
    let argument = (
        request.argument.name.as_str(),
        request.argument.value.as_str(),
    );
    let (what, offered) = match &request.r#ref {
        Reference::Prompt(prompt) => {
            let view = PromptView::of(shared, client).await;
            let Some((alias, remote, arguments)) = view.find(&prompt.name) else {
                let shown = crate::sanitize::inert_line(&prompt.name, 100);
                let error = envelope(
                    Code::McpUnknownTool,
                    format!(
                        "there is no prompt named `{shown}` offered to client `{}` now; list the \
                         prompts again",
                        client.name
                    ),
                    None,
                );
                return Err(to_mcp_error(&error, Offering::Prompts));
            };
            if !arguments.contains(&argument.0) {
                let error = envelope(
                    Code::McpInvalidArguments,
                    format!(
                        "the prompt `{}` takes no argument `{}`; it takes: {}; nothing was sent",
                        prompt.name,
                        crate::sanitize::inert_line(argument.0, 64),
                        arguments.join(", ")
                    ),
                    Some(alias),
                );
                return Err(to_mcp_error(&error, Offering::Prompts));
            }
            let completed = shared
                .hub
                .complete(
                    alias.as_str(),
                    CompletionRef::Prompt(remote),
                    argument,
                    &context,
                )
                .await;
            (Offering::Prompts, completed)
        }
        Reference::Resource(template) => {
            let hub = &shared.hub;
            let aliases: Vec<_> =
                aliases_offering(hub, &hub.snapshot(), client, Offering::Resources)
                    .into_iter()
                    .map(|(a, _)| a)
                    .collect();
            let view = ResourceView::of(shared, &aliases).await;
            let Some((alias, upstream)) = view.template(&template.uri) else {
                let shown = crate::sanitize::inert_line(&template.uri, 200);
                let error = envelope(
                    Code::McpUnknownTool,
                    format!(
                        "`{shown}` is not a resource template offered to client `{}` now; list \
                         the templates again",
                        client.name
                    ),
                    None,
                );
                return Err(to_mcp_error(&error, Offering::Resources));
            };
            let completed = hub
                .complete(
                    alias.as_str(),
                    CompletionRef::ResourceTemplate(upstream),
                    argument,
                    &context,
                )
                .await;
            (Offering::Resources, completed)
        }
        // A kind of reference this rmcp does not know yet: nothing to resolve.
        _ => {
            return Err(McpError::invalid_params(
                "completion/complete: the reference is neither ref/prompt nor ref/resource",
                None,
            ));
        }
    };
    if let Some(said) = &offered.server_output {
        tracing::info!(
            client = client.name,
            "gateway: completion refused upstream: {}",
            crate::sanitize::inert_line(said, 200)
        );
    }
    let completion = offered.result.map_err(|e| to_mcp_error(&e, what))?;
    let mut answer = json!({ "values": completion.values, "hasMore": completion.has_more });
    if let Some(total) = completion.total {
        answer["total"] = Value::from(total);
    }
    super::handler::from_json(json!({ "completion": answer }))
}
