//! One `tools/call` on the wire, however many requests it takes: multi-round
//! input (2026-07-28: the server answers `InputRequiredResult`, the operator
//! answers its questions like an elicitation, the call is retried with the
//! answers and the `requestState` echoed exactly) and tasks (see `tasks`).
//! Bounded everywhere: rounds, questions per round, the size of the state.

use std::time::Duration;

use serde_json::{Map, Value, json};

use super::CallIdentity;
use super::tasks;
use crate::mcp::connection::negotiate::Era;
use crate::mcp::connection::{Connection, RequestError};
use crate::mcp::elicit;
use crate::mcp::registry::ExposedTool;
use crate::mcp::spec::Limits;
use crate::mcp::spill::Spilled;

/// At most this many questions in one `InputRequiredResult`.
const MAX_QUESTIONS_PER_ROUND: usize = 16;

/// Why a call did not end with a result.
#[derive(Debug)]
pub(in crate::mcp) enum CallFailure {
    /// A request of the call failed (timeout, connection lost, JSON-RPC error).
    Request(RequestError),
    /// The server broke the protocol or a local bound; `message` is the
    /// harness's words. The connection is kept.
    Protocol(String),
    /// The task ran past `task_timeout_ms`; it was cancelled.
    TaskTimeout(Duration),
    /// The task failed on the server (its JSON-RPC error; the message is server text).
    TaskFailed { code: i64, message: String },
}

impl From<RequestError> for CallFailure {
    fn from(error: RequestError) -> Self {
        CallFailure::Request(error)
    }
}

pub(in crate::mcp) use crate::mcp::connection::raw;

/// What an answer to `tools/call` is.
enum Answer {
    Final(Value),
    InputRequired(Value),
    /// A task was created: the 2026-07-28 extension (`resultType: "task"`) or
    /// the experimental tasks of 2025-11-25 (`{task: {...}}`).
    Task(Value, tasks::Shape),
}

fn classify(result: Value) -> Answer {
    match result.get("resultType").and_then(Value::as_str) {
        Some("input_required") => Answer::InputRequired(result),
        Some("task") => Answer::Task(result, tasks::Shape::Extension),
        _ => {
            let call_shaped = ["content", "structuredContent", "isError"]
                .iter()
                .any(|k| result.get(*k).is_some());
            match result.get("task") {
                Some(task) if task.is_object() && !call_shaped => {
                    Answer::Task(task.clone(), tasks::Shape::Experimental)
                }
                _ => Answer::Final(result),
            }
        }
    }
}

/// Runs the call of `tool` with `arguments` to its end; the result JSON
/// (a `CallToolResult`) or why not.
///
/// `call_id` names the call: its progress notifications (which restart the
/// call's timer) are told apart by it, also while it runs as a task. What the
/// stdio gate cut from the final answer (long texts, in files) comes with it.
pub(in crate::mcp) async fn call(
    conn: &Connection,
    tool: &ExposedTool,
    arguments: Map<String, Value>,
    limits: &Limits,
    call: &CallIdentity,
) -> Result<(Value, Option<Spilled>), CallFailure> {
    let as_task = conn.era() == Era::Handshake && tasks::wanted(conn, tool.task_support);
    let mut params = json!({ "name": tool.remote_name, "arguments": arguments });
    if as_task {
        params["task"] = json!({ "ttl": tasks::ttl_ms(conn) });
    }
    let mut rounds = 0usize;
    loop {
        let answer = conn
            .request_long(
                "tools/call",
                params.clone(),
                conn.call_timeout(),
                Some(call),
            )
            .await?;
        // Progress of a task keeps the token of the request that created it.
        let _route = answer.route;
        match classify(raw(answer.result)) {
            Answer::Final(result) => return Ok((result, answer.spilled)),
            Answer::Task(task, shape) => {
                let expected = match conn.era() {
                    Era::Stateless => tasks::Shape::Extension,
                    Era::Handshake => tasks::Shape::Experimental,
                };
                if shape != expected {
                    return Err(CallFailure::Protocol(format!(
                        "the server answered with a task in the shape of {}, which this {} \
                         connection does not speak",
                        shape.revision(),
                        conn.server().protocol_version
                    )));
                }
                return tasks::run(conn, tool, call, task, shape).await;
            }
            Answer::InputRequired(result) => {
                if conn.era() != Era::Stateless {
                    return Err(CallFailure::Protocol(format!(
                        "the server asked for input with an InputRequiredResult, which the {} \
                         protocol of this connection does not have",
                        conn.server().protocol_version
                    )));
                }
                // A state cut as it streamed in is no longer what the server
                // sent: it is never sent back, the call ends here.
                if let Some(bytes) = answer.spilled.as_ref().and_then(|s| s.state_cut) {
                    return Err(state_too_long(bytes, limits));
                }
                rounds += 1;
                if rounds > limits.max_input_rounds {
                    return Err(CallFailure::Protocol(format!(
                        "the server asked for input {rounds} times without finishing the call; \
                         the limit is {} rounds (max_input_rounds)",
                        limits.max_input_rounds
                    )));
                }
                let (responses, state) = answer_round(conn, call, &result, limits).await?;
                retry_params(&mut params, responses, state);
                if params.get("inputResponses").is_none() {
                    // A state-only round (load shedding): do not hammer the server.
                    let pause =
                        Duration::from_millis(100 * rounds as u64).min(Duration::from_secs(1));
                    tokio::time::sleep(pause).await;
                }
            }
        }
    }
}

/// The next request after an `InputRequiredResult`: the same call with the
/// answers and the state, exactly as received, and nothing left over from an
/// earlier round.
fn retry_params(params: &mut Value, responses: Option<Map<String, Value>>, state: Option<Value>) {
    let Some(object) = params.as_object_mut() else {
        return;
    };
    object.remove("inputResponses");
    object.remove("requestState");
    if let Some(responses) = responses {
        object.insert("inputResponses".into(), Value::Object(responses));
    }
    if let Some(state) = state {
        object.insert("requestState".into(), state);
    }
}

type Round = (Option<Map<String, Value>>, Option<Value>);

/// A `requestState` over the limit: the harness's own error, the state unsent.
fn state_too_long(bytes: u64, limits: &Limits) -> CallFailure {
    CallFailure::Protocol(format!(
        "the server's requestState has {bytes} bytes; the limit is {} (max_request_state_bytes): \
         a state is sent back whole or not at all, so the call ends here",
        limits.max_request_state_bytes
    ))
}

/// Answers the questions of one `InputRequiredResult` (also used for a task
/// that needs input): the `inputResponses` and the `requestState` to echo.
pub(in crate::mcp) async fn answer_round(
    conn: &Connection,
    call: &CallIdentity,
    result: &Value,
    limits: &Limits,
) -> Result<Round, CallFailure> {
    let state = match result.get("requestState") {
        None | Some(Value::Null) => None,
        Some(Value::String(state)) if state.len() > limits.max_request_state_bytes => {
            return Err(state_too_long(state.len() as u64, limits));
        }
        Some(state @ Value::String(_)) => Some(state.clone()),
        Some(_) => {
            return Err(CallFailure::Protocol(
                "the server's requestState is not a string".into(),
            ));
        }
    };
    let questions = match result.get("inputRequests") {
        None | Some(Value::Null) => None,
        Some(Value::Object(questions)) => Some(questions),
        Some(_) => {
            return Err(CallFailure::Protocol(
                "the server's inputRequests is not an object".into(),
            ));
        }
    };
    if questions.is_none_or(Map::is_empty) && state.is_none() {
        return Err(CallFailure::Protocol(
            "the server asked for input without saying what (no inputRequests, no requestState)"
                .into(),
        ));
    }
    let Some(questions) = questions.filter(|q| !q.is_empty()) else {
        return Ok((None, state));
    };
    Ok((Some(answer_questions(conn, call, questions).await?), state))
}

/// Asks the operator each question (elicitations only: the harness offers no
/// sampling and no roots), one at a time, in the server's order.
pub(in crate::mcp) async fn answer_questions(
    conn: &Connection,
    call: &CallIdentity,
    questions: &Map<String, Value>,
) -> Result<Map<String, Value>, CallFailure> {
    if questions.len() > MAX_QUESTIONS_PER_ROUND {
        return Err(CallFailure::Protocol(format!(
            "the server asked {} questions at once; the limit is {MAX_QUESTIONS_PER_ROUND}",
            questions.len()
        )));
    }
    let mut answers = Map::new();
    for (key, question) in questions {
        let method = question.get("method").and_then(Value::as_str).unwrap_or("");
        if method != "elicitation/create" {
            return Err(CallFailure::Protocol(format!(
                "the server asked for {}, which the harness does not offer (only elicitation/create)",
                if method.is_empty() {
                    "an unnamed request".into()
                } else {
                    crate::mcp::names::quote(method)
                }
            )));
        }
        let params = question.get("params").cloned().unwrap_or(Value::Null);
        let answer = elicit::answer_form(
            conn.parts.elicitor.as_ref(),
            &conn.parts.alias,
            conn.parts.id,
            elicit::During {
                call: Some(call.clone()),
                may_be: Vec::new(),
            },
            &params,
            // An input round's questions reach us as JSON already parsed
            // into a sorted map: the server's order is gone by now.
            None,
        )
        .await;
        answers.insert(key.clone(), answer);
    }
    Ok(answers)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_are_told_apart_by_their_shape() {
        assert!(matches!(
            classify(json!({"resultType": "input_required", "requestState": "s"})),
            Answer::InputRequired(_)
        ));
        assert!(matches!(
            classify(json!({"resultType": "task", "taskId": "t", "status": "working"})),
            Answer::Task(_, tasks::Shape::Extension)
        ));
        assert!(matches!(
            classify(json!({"task": {"taskId": "t", "status": "working"}})),
            Answer::Task(_, tasks::Shape::Experimental)
        ));
        assert!(matches!(
            classify(json!({"content": [], "task": {"note": "a field of the result"}})),
            Answer::Final(_)
        ));
        assert!(matches!(classify(json!({"content": []})), Answer::Final(_)));
    }

    #[test]
    fn a_retry_carries_this_round_only() {
        let mut params = json!({"name": "t", "arguments": {}, "inputResponses": {"old": 1}, "requestState": "old"});
        retry_params(&mut params, None, Some(json!("new state")));
        assert_eq!(
            params,
            json!({"name": "t", "arguments": {}, "requestState": "new state"})
        );
        let mut answers = Map::new();
        answers.insert("q".into(), json!({"action": "decline"}));
        retry_params(&mut params, Some(answers), None);
        assert_eq!(
            params,
            json!({"name": "t", "arguments": {}, "inputResponses": {"q": {"action": "decline"}}})
        );
    }
}
