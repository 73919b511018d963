//! The tool pool of one role, and what running a tool gives back.

use std::time::Duration;

use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::conversation::{ResultPart, ToolCall, ToolDef};
use super::events::CallTarget;
use super::image;
use super::model::BoxFuture;
use crate::mcp::secrets::SecretKind;
use crate::mcp::{CallIdentity, CallOutcome, Decision, Effect, Snapshot, ToolError};

/// The result of one tool call, for the model (`outcome`) and the operator.
#[derive(Debug, Clone)]
pub struct ToolRun {
    pub outcome: Result<Vec<ResultPart>, ToolError>,
    /// How the policy (and the operator) decided it, where it was decided.
    pub decision: Decision,
    /// What the server said that the model must not see.
    pub server_output: Option<String>,
    pub elapsed: Duration,
    /// Arguments left out before validation (`null`s the schema refuses at
    /// optional properties), as JSON pointers.
    pub dropped_nulls: Vec<String>,
    /// Kinds of credentials withheld from the model (`server_output` then
    /// holds them, for the operator only: never written to the audit log).
    pub redacted: Vec<SecretKind>,
}

impl ToolRun {
    /// A run that never got as far as a decision (interrupted, unknown tool).
    pub fn local(outcome: Result<Vec<ResultPart>, ToolError>) -> Self {
        Self::decided(outcome, Decision::NotRun)
    }

    pub fn decided(outcome: Result<Vec<ResultPart>, ToolError>, decision: Decision) -> Self {
        Self {
            outcome,
            decision,
            server_output: None,
            elapsed: Duration::ZERO,
            dropped_nulls: Vec::new(),
            redacted: Vec::new(),
        }
    }

    pub fn text(text: impl Into<String>) -> Self {
        Self::local(Ok(vec![ResultPart::Text { text: text.into() }]))
    }
}

/// How a call may run beside the other calls of its model reply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Concurrency {
    /// Together with the reply's other calls to servers, at most `limit` at
    /// once on server `alias` (`max_concurrent_calls`).
    Server { alias: String, limit: usize },
    /// Alone: after every earlier call of the reply ended, before any later
    /// one starts.
    Alone,
}

/// What one role may call. The Lead's pool is built-ins + MCP management +
/// exposed MCP tools; subagents and teammates get the read-only built-ins only.
pub trait ToolBox: Send + Sync {
    /// The tools offered in a request built from `snapshot`.
    fn definitions(&self, snapshot: &Snapshot) -> Vec<ToolDef>;
    /// Where `name` would go and its local effect (for the operator's view).
    fn describe(&self, name: &str, snapshot: &Snapshot) -> (CallTarget, Option<Effect>);
    /// How `name` may run beside the other calls of its reply (built-in
    /// tools: alone, in the reply's order).
    fn concurrency(&self, _name: &str, _snapshot: &Snapshot) -> Concurrency {
        Concurrency::Alone
    }
    /// Runs one call (`identity`: its id and who asks), resolved against
    /// `snapshot` (the request's own tool set). `cancel` is the turn's: tools
    /// that run agents of their own pass it on.
    fn run<'a>(
        &'a self,
        call: &'a ToolCall,
        identity: &'a CallIdentity,
        snapshot: &'a Snapshot,
        cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, ToolRun>;
}

/// An MCP call's outcome as the model sees it: text (without invisible code
/// points) and images the model can take pass through, other blocks become
/// short placeholders, errors stay envelopes.
pub fn from_mcp(outcome: CallOutcome) -> ToolRun {
    let redacted = outcome
        .result
        .as_ref()
        .map(|o| o.redacted.clone())
        .unwrap_or_default();
    let parts = outcome.result.map(|output| {
        let mut parts: Vec<ResultPart> = output.content.iter().map(content_part).collect();
        if parts.is_empty()
            && let Some(structured) = &output.structured_content
        {
            parts.push(ResultPart::Text {
                text: structured.to_string(),
            });
        }
        // Server text for the model: never an invisible code point (SPEC rule 15).
        for part in &mut parts {
            if let ResultPart::Text { text } = part
                && let std::borrow::Cow::Owned(clean) = crate::sanitize::hidden::strip(text)
            {
                *text = clean;
            }
        }
        parts
    });
    ToolRun {
        outcome: parts,
        decision: outcome.decision,
        server_output: outcome.server_output,
        elapsed: outcome.elapsed,
        dropped_nulls: outcome.dropped_nulls,
        redacted,
    }
}

/// One MCP content block as the model sees it (in a tool result, or in server
/// content the operator brought in).
pub fn content_part(block: &Value) -> ResultPart {
    use crate::mcp::content::{Block, resource_header, summary_line};
    let text = |text: String| ResultPart::Text { text };
    let described = Block::of(block);
    match described {
        Block::Text(t) => text(t.to_string()),
        Block::Image { mime, data } => {
            // MIME types are case-insensitive; the APIs want them lowercase.
            let media_type = mime.trim().to_ascii_lowercase();
            match image::problem(&media_type, data) {
                None => ResultPart::Image {
                    media_type,
                    data: data.to_string(),
                },
                Some(reason) => text(image::placeholder(mime, data, reason)),
            }
        }
        Block::Resource {
            uri,
            mime,
            text: Some(body),
            ..
        } => text(format!("{}\n{body}", resource_header(uri, mime))),
        other => text(
            summary_line(&other)
                .map(|line| crate::sanitize::inert_line(&line, 2000))
                .unwrap_or_default(),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn content_blocks_become_parts_or_placeholders() {
        assert_eq!(
            content_part(&json!({"type":"text","text":"hi"})),
            ResultPart::Text { text: "hi".into() }
        );
        assert_eq!(
            content_part(&json!({"type":"image","mimeType":"image/png","data":"AAAA"})),
            ResultPart::Image {
                media_type: "image/png".into(),
                data: "AAAA".into()
            }
        );
        let ResultPart::Text { text } =
            content_part(&json!({"type":"audio","mimeType":"audio/wav","data":"AAAAAAAA"}))
        else {
            panic!()
        };
        assert_eq!(text, "[audio] audio/wav, 6 bytes");
        let ResultPart::Text { text } =
            content_part(&json!({"type":"image","mimeType":"image/svg+xml","data":"AAAA"}))
        else {
            panic!()
        };
        assert_eq!(
            text,
            "[image: image/svg+xml, 4 bytes of base64, not shown: unsupported type (png, jpeg, gif and webp are supported)]"
        );
        let ResultPart::Text { text } =
            content_part(&json!({"type":"image","mimeType":"image/png","data":"<script>"}))
        else {
            panic!()
        };
        assert!(text.ends_with("not shown: not valid base64]"), "{text}");
        assert!(matches!(
            content_part(&json!({"type":"image","mimeType":"Image/PNG","data":"AAAA"})),
            ResultPart::Image { media_type, .. } if media_type == "image/png"
        ));
        let ResultPart::Text { text } = content_part(&json!({"type":"hologram"})) else {
            panic!()
        };
        assert_eq!(text, "[content of type `hologram`]");
    }
}
