//! No model at all: a config file of the operator's own with no `[model]` and
//! no API key in the environment. The scripted demo belongs to the embedded
//! default alone, so nothing is replayed against the operator's servers; the
//! session still connects servers and runs the operator's calls by hand.

use super::{BoxFuture, ModelError, ModelProvider, ModelReply, ModelRequest, StreamEvent};

/// What the operator is told wherever a model would be needed.
pub const NO_MODEL: &str = "no model configured: set ANTHROPIC_API_KEY / OPENAI_API_KEY or `[model]`; \
     you can still connect, inspect and call tools by hand";

/// The provider of a session without a model: every request is refused.
pub struct Unconfigured;

impl ModelProvider for Unconfigured {
    fn name(&self) -> &'static str {
        "none"
    }

    fn model(&self) -> &str {
        "no model configured"
    }

    fn is_configured(&self) -> bool {
        false
    }

    fn complete<'a>(
        &'a self,
        _request: ModelRequest<'a>,
        _on_event: &'a mut (dyn FnMut(StreamEvent) + Send),
    ) -> BoxFuture<'a, Result<ModelReply, ModelError>> {
        Box::pin(async { Err(ModelError::NotConfigured) })
    }
}
