//! Elicitation: a server asks the operator for input in the middle of a call
//! (`elicitation/create`, form mode). Every mode advertises the same capability
//! (SPEC rule 16: a server publishes one tool set whoever connects); what differs
//! is who answers: the TUI with a form built from the requested schema, headless
//! commands with `decline`, the conformance client with the schema's defaults.
//! The server's message and schema are untrusted.

use futures::future::BoxFuture;
use serde_json::{Map, Value, json};

use super::call::CallIdentity;
use super::events::ConnectionId;
use super::names::ServerAlias;

/// What a server asks for.
#[derive(Debug, Clone, PartialEq)]
pub struct ElicitationRequest {
    pub alias: ServerAlias,
    pub connection: ConnectionId,
    /// The call the question came during, with who made it (the Lead, a
    /// subagent, an outside client through the gateway), as the call path
    /// passed it along. `None` when the connection cannot tell: a 2025-11-25
    /// `elicitation/create` names no request, so it is one call's only while
    /// that call is the only one in flight on the connection.
    pub call: Option<CallIdentity>,
    /// When `call` is `None` because two or more calls were in flight on
    /// the connection: those calls, one of which it came during (by id).
    /// Empty otherwise.
    pub may_be: Vec<CallIdentity>,
    /// The server's explanation (untrusted: show it inert, as the server's words).
    pub message: String,
    /// The requested schema: an object whose properties are strings, numbers,
    /// integers, booleans or enums, each possibly with a `default` (untrusted).
    pub requested_schema: Value,
    /// The properties' names in the server's order (`requested_schema` is a
    /// map, which keeps no order).
    pub order: Vec<String>,
}

/// The operator's answer.
#[derive(Debug, Clone, PartialEq)]
pub enum ElicitationResponse {
    /// Submitted: `content` must satisfy the requested schema, or the server is
    /// told the request was cancelled instead.
    Accept { content: Map<String, Value> },
    /// Explicitly refused.
    Decline,
    /// Dismissed without a choice.
    Cancel,
}

/// Answers elicitation requests. May take as long as the operator needs.
pub trait Elicitor: Send + Sync {
    fn elicit(&self, request: ElicitationRequest) -> BoxFuture<'_, ElicitationResponse>;
}

/// For headless commands: nobody to ask, so every request is declined. The
/// capability is advertised all the same, so the server publishes the tool set
/// the TUI sees.
#[derive(Debug, Clone, Copy, Default)]
pub struct DecliningElicitor;

impl Elicitor for DecliningElicitor {
    fn elicit(&self, _request: ElicitationRequest) -> BoxFuture<'_, ElicitationResponse> {
        Box::pin(std::future::ready(ElicitationResponse::Decline))
    }
}

/// Which call a question came during, as far as the connection can tell.
#[derive(Debug, Clone, Default)]
pub(super) struct During {
    pub(super) call: Option<CallIdentity>,
    /// Without `call`: the calls in flight it may belong to.
    pub(super) may_be: Vec<CallIdentity>,
}

/// Answers one `elicitation/create` (its `params`, raw: from a server request
/// or from an `InputRequiredResult`) through `elicitor`, returning the
/// `ElicitResult` to send back. URL mode is never offered: a server that asks for
/// it is declined without reaching the operator; an accepted answer that does
/// not satisfy the requested schema is sent as `cancel`, never as content the
/// server's own schema refuses. `order` is the properties' wire order where the
/// caller still has it (the schema's own keys otherwise).
pub(super) async fn answer_form(
    elicitor: &dyn Elicitor,
    alias: &ServerAlias,
    connection: ConnectionId,
    during: During,
    params: &Value,
    order: Option<Vec<String>>,
) -> Value {
    let decline = json!({"action": "decline"});
    let form = params.get("mode").is_none_or(|m| m == "form");
    let (Some(message), Some(schema)) = (
        params.get("message").and_then(Value::as_str),
        params.get("requestedSchema").filter(|s| s.is_object()),
    ) else {
        return decline;
    };
    if !form {
        return decline;
    }
    let request = ElicitationRequest {
        alias: alias.clone(),
        connection,
        call: during.call,
        may_be: during.may_be,
        message: message.to_string(),
        requested_schema: schema.clone(),
        order: order.unwrap_or_else(|| {
            schema
                .get("properties")
                .and_then(Value::as_object)
                .map(|p| p.keys().cloned().collect())
                .unwrap_or_default()
        }),
    };
    match elicitor.elicit(request).await {
        ElicitationResponse::Accept { content } => {
            let content = Value::Object(content);
            if satisfies(schema, &content) {
                json!({"action": "accept", "content": content})
            } else {
                tracing::warn!(%alias, "elicitation answer does not match the requested schema; cancelled");
                json!({"action": "cancel"})
            }
        }
        ElicitationResponse::Decline => decline,
        ElicitationResponse::Cancel => json!({"action": "cancel"}),
    }
}

/// Whether `content` satisfies the requested schema (compiled offline, like every
/// server schema: no external `$ref` is ever fetched).
fn satisfies(schema: &Value, content: &Value) -> bool {
    super::schema::compile(schema)
        .map(|validator| super::schema::validate(&validator, content).is_empty())
        .unwrap_or(false)
}

/// Accepts every request with the requested schema's defaults (see
/// [`content_from_defaults`]): the conformance client's stand-in for an
/// operator who presses Enter on a pre-filled form.
#[derive(Debug, Clone, Copy, Default)]
pub struct DefaultsElicitor;

impl Elicitor for DefaultsElicitor {
    fn elicit(&self, request: ElicitationRequest) -> BoxFuture<'_, ElicitationResponse> {
        let content = content_from_defaults(&request.requested_schema);
        Box::pin(std::future::ready(ElicitationResponse::Accept { content }))
    }
}

/// The form's initial content: every property of the requested schema that has
/// a `default` of the property's own type (an enum default must be one of its
/// values), in schema order. Properties without a usable default are left out.
pub fn content_from_defaults(schema: &Value) -> Map<String, Value> {
    let Some(properties) = schema.get("properties").and_then(Value::as_object) else {
        return Map::new();
    };
    properties
        .iter()
        .filter_map(|(name, property)| {
            let default = property.get("default")?;
            usable_default(property, default).then(|| (name.clone(), default.clone()))
        })
        .collect()
}

fn usable_default(property: &Value, default: &Value) -> bool {
    if let Some(options) = property.get("enum").and_then(Value::as_array) {
        return options.contains(default);
    }
    match property.get("type").and_then(Value::as_str) {
        Some("string") => default.is_string(),
        Some("boolean") => default.is_boolean(),
        Some("number") => default.is_number(),
        Some("integer") => default.is_i64() || default.is_u64(),
        // Multi-select enums (`type: array` with `items.enum`/`anyOf`).
        Some("array") => default.as_array().is_some_and(|items| {
            let allowed = property
                .get("items")
                .and_then(|i| i.get("enum"))
                .and_then(Value::as_array);
            allowed.is_none_or(|allowed| items.iter().all(|i| allowed.contains(i)))
        }),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_fill_the_form_when_they_fit_their_type() {
        let schema = json!({
            "type": "object",
            "properties": {
                "name": {"type": "string", "default": "John Doe"},
                "age": {"type": "integer", "default": 30},
                "score": {"type": "number", "default": 95.5},
                "status": {"type": "string", "enum": ["active", "inactive"], "default": "active"},
                "verified": {"type": "boolean", "default": true},
                "nickname": {"type": "string"},
                "wrong": {"type": "integer", "default": "thirty"},
                "bad_enum": {"type": "string", "enum": ["a"], "default": "b"},
                "tags": {"type": "array", "items": {"enum": ["x", "y"]}, "default": ["x"]}
            }
        });
        let content = content_from_defaults(&schema);
        assert_eq!(
            Value::Object(content),
            json!({"name": "John Doe", "age": 30, "score": 95.5, "status": "active",
                   "verified": true, "tags": ["x"]})
        );
        assert!(content_from_defaults(&json!({"type": "object"})).is_empty());
        assert!(content_from_defaults(&json!("not a schema")).is_empty());
    }
}
