//! `--extras`: two more tools, so every protocol path can be tried on the demo
//! servers without third-party code:
//!
//! - `research` runs as a task (`execution.taskSupport: "required"`): the
//!   2025-11-25 experimental tasks on a handshake connection, the
//!   `io.modelcontextprotocol/tasks` extension on a 2026-07-28 one (see `tasks.rs`).
//! - `guarded_set` asks the operator to confirm before it stores a value: a
//!   multi-round `InputRequiredResult` on 2026-07-28, an `elicitation/create`
//!   request on a handshake connection.
//!
//! How they answer, here; what they publish, in `toolsets/extras.rs`.

use rmcp::{
    RoleServer,
    model::{
        CallToolResponse, CallToolResult, ContentBlock, ElicitRequest, InputRequests,
        InputRequiredResult, JsonObject, ServerRequest,
    },
    service::RequestContext,
};
use serde_json::{Value, json};

use super::{faults::Faults, log, tools::DemoHandler};

/// The key of the one input request `guarded_set` makes.
const CONFIRM_KEY: &str = "confirm";

/// The form `guarded_set` asks the operator to fill.
fn confirm_form(key: &str, value: &str, faults: &Faults) -> Value {
    json!({
        "mode": "form",
        "message": faults.taint(format!("Store {key} = {value}?")),
        "requestedSchema": {
            "type": "object",
            "properties": {
                "confirm": {"type": "boolean", "title": "Store it", "default": true},
                "note": {"type": "string", "title": "Note", "description": "Why (optional)."}
            },
            "required": ["confirm"]
        }
    })
}

/// The `requestState` sent in reply to round `round` (0 = the first call):
/// `state-grows` doubles it every round (from 64 KiB); `request-state-bytes=N`
/// makes it N bytes long.
fn request_state_for(round: u32, key: &str, faults: &Faults) -> String {
    let head = format!("{}:{key}:", round + 1);
    let padding = match faults.request_state_bytes {
        Some(n) => "x".repeat(n.saturating_sub(head.len())),
        None if faults.state_grows => "x".repeat((64 * 1024usize) << round.min(12)),
        None => String::new(),
    };
    head + &padding
}

/// Whether an `ElicitResult` (raw) confirms.
fn confirmed(answer: &Value) -> bool {
    answer.get("action").and_then(Value::as_str) == Some("accept")
        && answer
            .get("content")
            .and_then(|c| c.get(CONFIRM_KEY))
            .and_then(Value::as_bool)
            == Some(true)
}

impl DemoHandler {
    /// `guarded_set` on a 2026-07-28 connection: ask through an
    /// `InputRequiredResult`, store once the retry carries a confirmation.
    pub(super) fn guarded_set_stateless(
        &self,
        args: &JsonObject,
        input_responses: Option<&JsonObject>,
        request_state: Option<&str>,
    ) -> CallToolResponse {
        let (Some(key), Some(value)) = (
            args.get("key").and_then(Value::as_str),
            args.get("value").and_then(Value::as_str),
        ) else {
            return self.answer_error("guarded_set needs string arguments \"key\" and \"value\"");
        };
        let faults = &self.inner.faults;
        let answer = input_responses.and_then(|r| r.get(CONFIRM_KEY));
        let round = request_state
            .and_then(|s| s.split(':').next())
            .and_then(|n| n.parse::<u32>().ok())
            .unwrap_or(0);
        // The state must come back byte for byte as it was sent.
        if let Some(state) = request_state
            && round > 0
            && state != request_state_for(round - 1, key, faults)
        {
            return self.answer_error("the requestState did not come back as it was sent");
        }
        if answer.is_none() || faults.input_loop {
            log(format_args!("guarded_set: asking (round {})", round + 1));
            let mut requests: InputRequests = InputRequests::new();
            let request =
                json!({"method": "elicitation/create", "params": confirm_form(key, value, faults)});
            match serde_json::from_value(request) {
                Ok(request) => requests.insert(CONFIRM_KEY.to_string(), request),
                Err(error) => return self.answer_error(&format!("building the question: {error}")),
            };
            let state = request_state_for(round, key, faults);
            return InputRequiredResult::new(Some(requests), Some(state)).into();
        }
        let answer = answer.cloned().unwrap_or(Value::Null);
        self.store_if_confirmed(key, value, &answer).into()
    }

    /// `guarded_set` on a handshake connection: ask with `elicitation/create`.
    pub(super) async fn guarded_set_handshake(
        &self,
        args: &JsonObject,
        context: &RequestContext<RoleServer>,
    ) -> CallToolResult {
        let (Some(key), Some(value)) = (
            args.get("key").and_then(Value::as_str),
            args.get("value").and_then(Value::as_str),
        ) else {
            return self.result_error("guarded_set needs string arguments \"key\" and \"value\"");
        };
        let asks = context
            .client_capabilities()
            .is_some_and(|c| c.elicitation.is_some());
        if !asks {
            return self.result_error(
                "guarded_set needs a client that can answer questions (elicitation); nothing stored",
            );
        }
        let params = match serde_json::from_value(confirm_form(key, value, &self.inner.faults)) {
            Ok(params) => params,
            Err(error) => return self.result_error(&format!("building the question: {error}")),
        };
        let request = ServerRequest::ElicitRequest(ElicitRequest::new(params));
        match context.peer.send_request(request).await {
            Ok(result) => {
                let answer = serde_json::to_value(result).unwrap_or(Value::Null);
                self.store_if_confirmed(key, value, &answer)
            }
            Err(error) => self.result_error(&format!("asking failed: {error}")),
        }
    }

    /// `research` as one slow call (a handshake client over HTTP).
    pub(super) async fn research_now(&self, args: &JsonObject) -> CallToolResult {
        let topic = args
            .get("topic")
            .and_then(Value::as_str)
            .unwrap_or("nothing in particular");
        let seconds = args.get("seconds").and_then(Value::as_f64).unwrap_or(3.0);
        tokio::time::sleep(std::time::Duration::from_secs_f64(
            seconds.clamp(0.0, 600.0),
        ))
        .await;
        CallToolResult::success(vec![ContentBlock::text(self.inner.faults.taint(format!(
            "research on {topic}: three sources agree ({})",
            self.name()
        )))])
    }

    fn store_if_confirmed(&self, key: &str, value: &str, answer: &Value) -> CallToolResult {
        if !confirmed(answer) {
            let action = answer
                .get("action")
                .and_then(Value::as_str)
                .unwrap_or("no answer");
            return CallToolResult::success(vec![ContentBlock::text(self.inner.faults.taint(
                format!("not stored: the operator did not confirm ({action})"),
            ))]);
        }
        let mut args = JsonObject::new();
        args.insert("key".into(), json!(key));
        args.insert("value".into(), json!(value));
        self.set(&args)
    }

    fn result_error(&self, text: &str) -> CallToolResult {
        CallToolResult::error(vec![ContentBlock::text(self.inner.faults.taint(text))])
    }

    fn answer_error(&self, text: &str) -> CallToolResponse {
        self.result_error(text).into()
    }
}
