//! Built-in tools: their definitions, schemas and local policy. The read-only
//! tools (every role) stand apart from the Lead-only ones, so the subagent runner
//! and the tool that spawns subagents do not depend on each other.

pub mod lead_only;
pub mod readonly;

use std::collections::BTreeMap;
use std::sync::Arc;

use jsonschema::Validator;
use serde_json::{Value, json};

use super::conversation::{ToolCall, ToolDef};
use crate::mcp::schema;
use crate::mcp::{
    ApprovalDecision, ApprovalRequest, Approver, CallIdentity, Decision, Effect, ToolError,
    ToolErrorCode,
};

/// A built-in call past validation and policy: the arguments to run with, or
/// the envelope; and how it was decided.
pub struct Admission {
    pub arguments: Result<Value, ToolError>,
    pub decision: Decision,
}

/// One built-in tool.
pub struct Builtin {
    pub name: &'static str,
    pub description: &'static str,
    pub schema: Arc<Value>,
    pub effect: Effect,
    validator: Arc<Validator>,
}

/// The built-in tools of one role, with the effects the config gives them.
pub struct Builtins {
    tools: Vec<Builtin>,
}

/// Name, description, schema and default effect of every built-in.
fn catalog() -> Vec<(&'static str, &'static str, Value, Effect)> {
    let string = |d: &str| json!({"type": "string", "description": d});
    let object = |props: Value, required: &[&str]| json!({"type": "object", "properties": props, "required": required, "additionalProperties": false});
    vec![
        (
            "read_file",
            "Read a text file inside the working directory: the first max_bytes bytes \
            (default 64 KiB, at most 1 MiB = 1048576); a longer file is cut, with a notice.",
            object(
                json!({"path": string("Path relative to the working directory"),
                "max_bytes": {"type": "integer", "minimum": 1, "maximum": readonly::MAX_READ_BYTES}}),
                &["path"],
            ),
            Effect::Allow,
        ),
        (
            "list_dir",
            "List a directory inside the working directory (default: the working directory itself).",
            object(
                json!({"path": string("Path relative to the working directory")}),
                &[],
            ),
            Effect::Allow,
        ),
        (
            "search_text",
            "Search files inside the working directory for a literal text (case-sensitive); \
            returns path:line: text for each match, at most max_results matches (default 100, \
            at most 500). Honours .gitignore.",
            object(
                json!({"text": string("The text to find"), "path": string("Directory or file to search (default: all)"),
                "max_results": {"type": "integer", "minimum": 1, "maximum": readonly::MAX_MATCHES}}),
                &["text"],
            ),
            Effect::Allow,
        ),
        (
            "connect_mcp",
            "Connect the MCP server configured under this alias. Its tools become available from your \
            next request. Only configured aliases work (see list_mcp_servers).",
            object(
                json!({"alias": string("A server alias from list_mcp_servers")}),
                &["alias"],
            ),
            Effect::Allow,
        ),
        (
            "disconnect_mcp",
            "Disconnect the MCP server with this alias; all of its tools are revoked at once.",
            object(
                json!({"alias": string("A connected server alias")}),
                &["alias"],
            ),
            Effect::Allow,
        ),
        (
            "list_mcp_servers",
            "List the configured MCP server aliases with their state (connected or not) and tool counts.",
            object(json!({}), &[]),
            Effect::Allow,
        ),
        (
            "spawn_subagent",
            "Run a subagent with a fresh context on a self-contained task; returns its final answer. \
            Subagents can read files (read_file, list_dir, search_text) but cannot use MCP tools.",
            object(
                json!({"task": string("Everything the subagent needs to know to do the task")}),
                &["task"],
            ),
            Effect::Allow,
        ),
        (
            "ask_teammate",
            "Send a message to a named teammate (declared in the config) and get its reply. Teammates \
            remember earlier messages. They can read files but cannot use MCP tools.",
            object(
                json!({"name": string("The teammate's name"), "message": string("What to ask or tell it")}),
                &["name", "message"],
            ),
            Effect::Allow,
        ),
        (
            "search_tools",
            "Find MCP tools this request does not carry (there are more than one request may hold): \
            matches words of their names and descriptions. The tools found are offered from your \
            next request, not in this reply.",
            object(
                json!({"query": string("Words to look for, e.g. \"create issue\"")}),
                &["query"],
            ),
            Effect::Allow,
        ),
        (
            "list_mcp_resources",
            "List the resources (URI, name, MIME type, size) and resource templates a connected MCP \
            server offers. Read one with read_mcp_resource.",
            object(
                json!({"alias": string("A connected server alias")}),
                &["alias"],
            ),
            Effect::Allow,
        ),
        (
            "read_mcp_resource",
            "Read one resource of a connected MCP server by its URI (from list_mcp_resources, or a \
            URI filled in from one of its templates). The operator's policy may ask them first or \
            refuse.",
            object(
                json!({"alias": string("A connected server alias"),
                "uri": string("The resource's URI")}),
                &["alias", "uri"],
            ),
            Effect::Allow,
        ),
        (
            "read_result",
            "Read more of a tool result that was too large to show whole: the harness saved all of it \
            and its notice names the call_id and the offset where the shown part stops. Returns up to \
            `length` bytes from `offset` (default: as much as a result may show).",
            object(
                json!({"call_id": string("The call_id the notice names"),
                "offset": {"type": "integer", "minimum": 0},
                "length": {"type": "integer", "minimum": 1}}),
                &["call_id"],
            ),
            Effect::Allow,
        ),
    ]
}

/// The read-only tools every role gets.
pub const READ_ONLY: &[&str] = &["read_file", "list_dir", "search_text"];
/// The Lead's own tools on top of the read-only ones.
pub const LEAD_ONLY: &[&str] = &[
    "connect_mcp",
    "disconnect_mcp",
    "list_mcp_servers",
    "list_mcp_resources",
    "read_mcp_resource",
    "spawn_subagent",
    "ask_teammate",
    "read_result",
    "search_tools",
];

impl Builtins {
    /// The tools named in `names`, with effects from `[builtin_tools]` (or their
    /// defaults). Tools set to `deny` are left out: never offered, never run.
    pub fn new(names: &[&str], effects: &BTreeMap<String, Effect>) -> Self {
        let tools = catalog()
            .into_iter()
            .filter(|(name, ..)| names.contains(name))
            .filter_map(|(name, description, schema, default)| {
                let effect = effects.get(name).copied().unwrap_or(default);
                // The catalog's schemas are ours and compile; a failure would be a bug.
                let validator = Arc::new(schema::compile(&schema).ok()?);
                (effect != Effect::Deny).then_some(Builtin {
                    name,
                    description,
                    schema: Arc::new(schema),
                    effect,
                    validator,
                })
            })
            .collect();
        Self { tools }
    }

    pub fn get(&self, name: &str) -> Option<&Builtin> {
        self.tools.iter().find(|t| t.name == name)
    }

    pub fn definitions(&self) -> impl Iterator<Item = ToolDef> + '_ {
        self.tools.iter().map(|t| ToolDef {
            name: t.name.to_string(),
            description: t.description.to_string(),
            input_schema: std::sync::Arc::clone(&t.schema),
        })
    }

    pub fn names(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.tools.iter().map(|t| t.name)
    }
}

impl Builtin {
    /// Validates the arguments and applies the local policy (asking the operator
    /// for `confirm`, about call `identity`).
    pub async fn admit(
        &self,
        call: &ToolCall,
        identity: &CallIdentity,
        approver: &dyn Approver,
    ) -> Admission {
        let refused = |error, decision| Admission {
            arguments: Err(error),
            decision,
        };
        let arguments = if call.input.is_null() {
            json!({})
        } else {
            call.input.clone()
        };
        let envelope = |code, message: String| {
            let mut e = ToolError::new(code, message);
            e.tool = Some(self.name.to_string());
            e
        };
        let errors = schema::validate(&self.validator, &arguments);
        if !errors.is_empty() {
            let mut error = envelope(
                ToolErrorCode::InvalidArguments,
                format!(
                    "the arguments do not match the input schema of `{}`",
                    self.name
                ),
            );
            error.errors = errors;
            return refused(error, Decision::RefusedBySchema);
        }
        if self.effect != Effect::Confirm {
            return Admission {
                arguments: Ok(arguments),
                decision: Decision::Allow,
            };
        }
        let decider = approver.decider();
        {
            let request = ApprovalRequest {
                call: identity.id.clone(),
                requester: identity.requester.clone(),
                tool: self.name.to_string(),
                alias: None,
                remote_name: None,
                arguments: arguments.clone(),
                effect: self.effect,
                definition: None,
                flow: None,
            };
            if let ApprovalDecision::Denied { reason } = approver.approve(request).await {
                let denied = envelope(ToolErrorCode::PermissionDenied, reason);
                return refused(denied, Decision::Denied { decider });
            }
        }
        Admission {
            arguments: Ok(arguments),
            decision: Decision::Approved { decider },
        }
    }
}

/// A string argument the schema already guaranteed.
pub fn str_arg<'a>(arguments: &'a Value, name: &str) -> &'a str {
    arguments
        .get(name)
        .and_then(Value::as_str)
        .unwrap_or_default()
}
