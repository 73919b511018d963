//! Resources: list (with templates) and read, under the local policy
//! `[servers.ALIAS.resources] read`. A read goes the way a tool result does:
//! long texts cut below rmcp and saved whole, the model gets the head, a
//! notice and `read_result`.

use serde::Serialize;
use serde_json::{Value, json};

use super::super::approver::{ApprovalDecision, ApprovalRequest, Approver};
use super::super::call::{CallIdentity, CallOutcome, ToolOutput};
use super::super::connection::raw;
use super::super::envelope::{ToolError, ToolErrorCode as Code};
use super::super::events::McpEvent;
use super::super::flows::{Label, Labels};
use super::super::hub::Hub;
use super::super::observe::Decision;
use super::super::policy::Effect;
use super::super::result::{finish_result, parse_value};
use super::paged::{self, PageError, string};
use super::{Kind, Offered, malformed, request_failed};

/// The longest URI the harness takes from a listing.
pub const MAX_URI_BYTES: usize = 4096;

/// One resource as the server lists it (its text, untrusted).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Resource {
    pub uri: String,
    pub name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(rename = "mimeType", skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub size: Option<u64>,
    /// What the harness noticed: `hidden_text` when its URI, name, title or
    /// description holds invisible characters or controls (the model gets
    /// them removed; the operator sees them made visible).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub flags: Vec<crate::mcp::published::ToolFlag>,
}

/// One resource template (`uriTemplate`, RFC 6570).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ResourceTemplate {
    #[serde(rename = "uriTemplate")]
    pub uri_template: String,
    pub name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(rename = "mimeType", skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
}

/// What `resources/list` and `resources/templates/list` returned.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ResourceList {
    pub resources: Vec<Resource>,
    pub templates: Vec<ResourceTemplate>,
    /// Entries left out: no URI, a URI longer than [`MAX_URI_BYTES`], no name.
    pub malformed: usize,
    /// The local policy for reading them.
    pub read: Effect,
}

fn resource(item: &Value) -> Option<Resource> {
    let uri = string(item, "uri").filter(|u| !u.is_empty() && u.len() <= MAX_URI_BYTES)?;
    let mut resource = Resource {
        name: string(item, "name").unwrap_or_else(|| uri.clone()),
        uri,
        title: string(item, "title"),
        description: string(item, "description"),
        mime_type: string(item, "mimeType"),
        size: item.get("size").and_then(Value::as_u64),
        flags: Vec::new(),
    };
    let hidden = crate::sanitize::hidden::has_hidden;
    if hidden(&resource.uri)
        || hidden(&resource.name)
        || resource.title.as_deref().is_some_and(hidden)
        || resource.description.as_deref().is_some_and(hidden)
    {
        resource
            .flags
            .push(crate::mcp::published::ToolFlag::HiddenText);
    }
    Some(resource)
}

fn template(item: &Value) -> Option<ResourceTemplate> {
    let uri_template =
        string(item, "uriTemplate").filter(|u| !u.is_empty() && u.len() <= MAX_URI_BYTES)?;
    Some(ResourceTemplate {
        name: string(item, "name").unwrap_or_else(|| uri_template.clone()),
        uri_template,
        title: string(item, "title"),
        description: string(item, "description"),
        mime_type: string(item, "mimeType"),
    })
}

impl Hub {
    /// The read policy of `alias`'s resources (default `confirm`).
    pub fn resource_policy(&self, alias: &str) -> Effect {
        self.spec(alias)
            .map(|s| s.resource_read)
            .unwrap_or(Effect::Confirm)
    }

    /// `resources/list` and `resources/templates/list` of a connected alias.
    /// Refused when the policy denies reading them (nothing is sent).
    pub async fn list_resources(&self, alias: &str) -> Offered<ResourceList> {
        let conn = match self.offering(alias, Kind::Resources) {
            Ok(conn) => conn,
            Err(e) => return Offered::local(e),
        };
        let read = self.resource_policy(alias);
        if read == Effect::Deny {
            return Offered::local(denied(alias));
        }
        let pages = self.limits().max_list_pages;
        let mut list = ResourceList {
            resources: Vec::new(),
            templates: Vec::new(),
            malformed: 0,
            read,
        };
        for (method, key) in [
            ("resources/list", "resources"),
            ("resources/templates/list", "resourceTemplates"),
        ] {
            let items = match paged::list_all(&conn, method, key, pages).await {
                Ok(items) => items,
                // A server may list resources without templates.
                Err(PageError::Request(RequestError::Remote { code, .. }))
                    if key == "resourceTemplates" && code == -32601 =>
                {
                    Vec::new()
                }
                Err(PageError::Request(e)) => return request_failed(alias, method, e),
                Err(PageError::Malformed(problem)) => return malformed(alias, method, problem),
            };
            for item in &items {
                let kept = if key == "resources" {
                    resource(item).map(|r| list.resources.push(r))
                } else {
                    template(item).map(|t| list.templates.push(t))
                };
                if kept.is_none() {
                    list.malformed += 1;
                }
            }
        }
        Offered::ok(list)
    }

    /// `resources/subscribe` (`on`) or `resources/unsubscribe` of `uri` on a
    /// connected alias whose read policy lets its resources be read (`deny`
    /// refuses, nothing sent): the connection it was sent on, whose
    /// `notifications/resources/updated` then come as
    /// [`McpEvent::ResourceUpdated`](crate::mcp::McpEvent::ResourceUpdated).
    /// A subscription says only that a resource changed; reading it is still
    /// a read under the policy.
    pub async fn resource_subscription(
        &self,
        alias: &str,
        uri: &str,
        on: bool,
    ) -> Offered<super::super::events::ConnectionId> {
        let conn = match self.offering(alias, Kind::Resources) {
            Ok(conn) => conn,
            Err(e) => return Offered::local(e),
        };
        if self.resource_policy(alias) == Effect::Deny {
            return Offered::local(denied(alias));
        }
        let method = if on {
            "resources/subscribe"
        } else {
            "resources/unsubscribe"
        };
        if conn.era() == crate::mcp::connection::negotiate::Era::Stateless {
            // 2026-07-28 has no resources/subscribe: a subscription of its own.
            if !on {
                crate::mcp::connection::listen::unwatch_resource(&conn, uri);
                return Offered::ok(conn.id());
            }
            return match crate::mcp::connection::listen::watch_resource(&conn, uri).await {
                Ok(()) => Offered::ok(conn.id()),
                Err(rmcp::ServiceError::McpError(e)) => request_failed(
                    alias,
                    "subscriptions/listen",
                    RequestError::Remote {
                        code: e.code.0,
                        message: e.message.to_string(),
                    },
                ),
                Err(e) => request_failed(
                    alias,
                    "subscriptions/listen",
                    RequestError::Lost(e.to_string()),
                ),
            };
        }
        match conn
            .request(method, json!({ "uri": uri }), conn.call_timeout())
            .await
        {
            Ok(_) => Offered::ok(conn.id()),
            Err(e) => request_failed(alias, method, e),
        }
    }

    /// `resources/read` of `uri` on a connected alias, under its read policy
    /// (`confirm` asks `approver`). The text is capped at `max_result_bytes`;
    /// the whole of it is saved as `results/CALL_ID.txt`.
    pub async fn read_resource(
        &self,
        alias: &str,
        uri: &str,
        approver: &dyn Approver,
        call: &CallIdentity,
    ) -> CallOutcome {
        let mut decision = Decision::NotRun;
        let offered = self
            .read_resource_offered(alias, uri, approver, call, &mut decision)
            .await;
        if let Ok(output) = &offered.result {
            // What the session has now read: the server's labels, and a
            // withheld credential is private data.
            let mut labels = self
                .spec(alias)
                .map(|s| s.labels.server)
                .unwrap_or_default();
            if !output.redacted.is_empty() {
                labels = labels.with(Labels::of(&[Label::PrivateData]));
            }
            self.tainted(&call.requester, &call.id, "read_mcp_resource", labels);
        }
        CallOutcome {
            id: call.id.clone(),
            decision,
            result: offered.result,
            server_output: offered.server_output,
            elapsed: std::time::Duration::ZERO,
            dropped_nulls: Vec::new(),
        }
    }

    async fn read_resource_offered(
        &self,
        alias: &str,
        uri: &str,
        approver: &dyn Approver,
        call: &CallIdentity,
        decision: &mut Decision,
    ) -> Offered<ToolOutput> {
        let conn = match self.offering(alias, Kind::Resources) {
            Ok(conn) => conn,
            Err(e) => return Offered::local(e),
        };
        if uri.is_empty() || uri.len() > MAX_URI_BYTES {
            let mut e = ToolError::new(
                Code::McpInvalidArguments,
                format!("a resource URI has 1 to {MAX_URI_BYTES} bytes; nothing was sent"),
            );
            e.alias = Some(alias.to_string());
            return Offered::local(e);
        }
        match self.resource_policy(alias) {
            Effect::Deny => {
                *decision = Decision::DeniedByPolicy;
                return Offered::local(denied(alias));
            }
            Effect::Allow => *decision = Decision::Allow,
            Effect::Confirm => {
                let decider = approver.decider();
                let request = ApprovalRequest {
                    call: call.id.clone(),
                    requester: call.requester.clone(),
                    tool: "read_mcp_resource".into(),
                    alias: Some(conn.alias().clone()),
                    remote_name: Some("resources/read".into()),
                    arguments: json!({ "uri": uri }),
                    effect: Effect::Confirm,
                    definition: None,
                    flow: None,
                };
                let answer = approver.approve(request).await;
                *decision = match answer {
                    ApprovalDecision::Approved => Decision::Approved { decider },
                    ApprovalDecision::Denied { .. } => Decision::Denied { decider },
                };
                if let ApprovalDecision::Denied { reason } = answer {
                    let mut e = ToolError::new(Code::McpPermissionDenied, reason);
                    e.alias = Some(alias.to_string());
                    return Offered::local(e);
                }
            }
        }
        let answer = match conn
            .request_long(
                "resources/read",
                json!({ "uri": uri }),
                conn.call_timeout(),
                None,
            )
            .await
        {
            Ok(answer) => answer,
            Err(e) => return request_failed(alias, "resources/read", e),
        };
        // Each content as an embedded resource block: the result path caps and
        // saves `resource.text` as it does a tool's (same order as the gate's).
        let contents = match raw(answer.result).get_mut("contents").map(Value::take) {
            Some(Value::Array(contents)) => contents,
            _ => {
                return malformed(
                    alias,
                    "resources/read",
                    "the result has no `contents` array".into(),
                );
            }
        };
        let blocks: Vec<Value> = contents
            .into_iter()
            .map(|c| json!({ "type": "resource", "resource": c }))
            .collect();
        let parsed = match parse_value(json!({ "content": blocks })) {
            Ok(parsed) => parsed,
            Err(problem) => return malformed(alias, "resources/read", problem.to_string()),
        };
        let finished = finish_result(
            parsed,
            answer.spilled,
            self.limits().max_result_bytes,
            self.results_dir(),
            call.id.to_string(),
        )
        .await;
        match finished {
            Ok((output, withheld)) => {
                if !withheld.is_empty() {
                    self.inner.events.emit(McpEvent::Redacted {
                        alias: Some(conn.alias().clone()),
                        call: Some(call.id.clone()),
                        tool: "read_mcp_resource".into(),
                        kinds: output.redacted.clone(),
                    });
                }
                Offered {
                    result: Ok(output),
                    server_output: withheld.for_operator(),
                }
            }
            Err(e) => Offered {
                result: Err(ToolError::new(
                    Code::McpRemoteError,
                    format!("the resource of `{alias}` could not be read"),
                )),
                server_output: Some(format!("mcp-harness: {e}")),
            },
        }
    }
}

use super::super::connection::RequestError;

fn denied(alias: &str) -> ToolError {
    let mut e = ToolError::new(
        Code::McpPermissionDenied,
        format!(
            "reading the resources of `{alias}` is denied by local policy \
             ([servers.{alias}.resources] read = \"deny\")"
        ),
    );
    e.alias = Some(alias.to_string());
    e
}
