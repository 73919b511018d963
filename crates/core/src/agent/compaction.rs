//! Context budget: before a request would overflow the model's window, shorten the
//! oldest tool results first, then drop the oldest exchanges. The session file
//! keeps everything; the operator gets a notice.

use super::conversation::{Block, Message, ResultPart, Role, ToolDef};

/// Requests are kept under this share of the window (room for the reply).
const FILL: f64 = 0.75;
/// Tool results longer than this are candidates for shortening…
const LONG_RESULT: usize = 400;
/// …down to this much of their beginning.
const KEPT_PREFIX: usize = 200;
/// The most recent messages are never touched.
const PROTECTED_TAIL: usize = 2;

/// ~4 bytes of JSON per token: cheap, provider-neutral, errs on the safe side.
pub fn estimate(messages: &[Message], system: &str, tools: &[ToolDef]) -> u64 {
    let bytes: usize = messages.iter().map(size).sum::<usize>() + fixed_size(system, tools);
    (bytes / 4) as u64
}

fn size(message: &Message) -> usize {
    serde_json::to_string(message).map(|s| s.len()).unwrap_or(0)
}

fn fixed_size(system: &str, tools: &[ToolDef]) -> usize {
    serde_json::to_string(tools).map(|s| s.len()).unwrap_or(0) + system.len()
}

/// Compacts `conversation` in place if needed; returns the notice to show.
/// Each message is measured once (and again only when it changes).
pub fn fit(
    conversation: &mut Vec<Message>,
    system: &str,
    tools: &[ToolDef],
    context_tokens: u64,
) -> Option<String> {
    let limit = (context_tokens as f64 * FILL) as usize * 4;
    let fixed = fixed_size(system, tools);
    let mut sizes: Vec<usize> = conversation.iter().map(size).collect();
    let total = |sizes: &[usize]| fixed + sizes.iter().sum::<usize>();
    if total(&sizes) <= limit {
        return None;
    }
    let mut shortened = 0;
    for i in 0..conversation.len().saturating_sub(PROTECTED_TAIL) {
        if total(&sizes) <= limit {
            break;
        }
        let n = shorten_results(&mut conversation[i]);
        if n > 0 {
            shortened += n;
            sizes[i] = size(&conversation[i]);
        }
    }
    let mut dropped = 0;
    while total(&sizes) > limit {
        // An exchange starts at a user message with text (not only tool results).
        let Some(next) = (1..conversation.len()).find(|&i| starts_exchange(&conversation[i]))
        else {
            break;
        };
        if next + PROTECTED_TAIL > conversation.len() {
            break;
        }
        conversation.drain(..next);
        sizes.drain(..next);
        dropped += next;
        // After an interrupted or failed turn the operator's next text joins the
        // user message holding that turn's tool results. Their tool_use blocks
        // were just dropped, and both APIs reject a result without its call —
        // every later request would fail — so they go too.
        if strip_results(&mut conversation[0]) {
            sizes[0] = size(&conversation[0]);
        }
    }
    let mut notice = format!(
        "context compacted to fit the model's window: shortened {shortened} old tool results"
    );
    if dropped > 0 {
        notice.push_str(&format!(", left out the {dropped} oldest messages"));
    }
    notice.push_str(" (the session transcript keeps everything)");
    Some(notice)
}

fn starts_exchange(message: &Message) -> bool {
    message.role == Role::User
        && message
            .content
            .iter()
            .any(|b| matches!(b, Block::Text { .. }))
}

/// Removes the tool results of the message; whether there were any.
fn strip_results(message: &mut Message) -> bool {
    let before = message.content.len();
    message
        .content
        .retain(|b| !matches!(b, Block::ToolResult(_)));
    message.content.len() != before
}

fn shorten_results(message: &mut Message) -> usize {
    let mut count = 0;
    for block in &mut message.content {
        let Block::ToolResult(result) = block else {
            continue;
        };
        for part in &mut result.content {
            match part {
                ResultPart::Text { text } if text.len() > LONG_RESULT => {
                    let kept: String = text.chars().take(KEPT_PREFIX).collect();
                    let removed = text.len() - kept.len();
                    *text = format!(
                        "{kept}\n[shortened to save context: {removed} more bytes not shown]"
                    );
                    count += 1;
                }
                ResultPart::Image { media_type, data } => {
                    let text = format!(
                        "[image: {media_type}, {} bytes, removed to save context]",
                        data.len()
                    );
                    *part = ResultPart::Text { text };
                    count += 1;
                }
                ResultPart::Text { .. } => {}
            }
        }
    }
    count
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::conversation::{ToolCall, ToolResult};
    use serde_json::json;

    fn exchange(n: usize, result_len: usize) -> Vec<Message> {
        vec![
            Message::user_text(format!("question {n}")),
            Message::assistant(vec![Block::ToolUse(ToolCall {
                id: format!("c{n}"),
                name: "t".into(),
                input: json!({}),
            })]),
            Message {
                role: Role::User,
                content: vec![Block::ToolResult(ToolResult {
                    tool_use_id: format!("c{n}"),
                    content: vec![ResultPart::Text {
                        text: "x".repeat(result_len),
                    }],
                    is_error: false,
                })],
            },
            Message::assistant(vec![Block::Text {
                text: format!("answer {n}"),
            }]),
        ]
    }

    #[test]
    fn small_conversations_are_untouched() {
        let mut c = exchange(1, 100);
        assert_eq!(fit(&mut c, "", &[], 100_000), None);
    }

    #[test]
    fn oldest_tool_results_are_shortened_first() {
        let mut c: Vec<Message> = (0..4).flat_map(|n| exchange(n, 4000)).collect();
        let notice = fit(&mut c, "", &[], 4000).expect("compacted");
        assert!(notice.contains("shortened"), "{notice}");
        assert!(estimate(&c, "", &[]) <= 3000);
        let Block::ToolResult(first) = &c[2].content[0] else {
            panic!()
        };
        let ResultPart::Text { text } = &first.content[0] else {
            panic!()
        };
        assert!(text.contains("[shortened to save context"), "{text}");
        assert_eq!(c.len(), 16, "nothing dropped when shortening was enough");
    }

    #[test]
    fn oldest_exchanges_are_dropped_when_shortening_is_not_enough() {
        let mut c: Vec<Message> = (0..30).flat_map(|n| exchange(n, 10)).collect();
        let notice = fit(&mut c, "", &[], 1000).expect("compacted");
        assert!(notice.contains("left out"), "{notice}");
        assert!(
            starts_exchange(&c[0]),
            "the conversation still starts with a user question"
        );
        assert_eq!(c.last().unwrap().text(), "answer 29");
    }

    /// The ids of tool results whose call is not in the message right before.
    fn orphaned_results(conversation: &[Message]) -> Vec<String> {
        let mut orphans = Vec::new();
        for (i, message) in conversation.iter().enumerate() {
            for block in &message.content {
                let Block::ToolResult(result) = block else {
                    continue;
                };
                let called = i > 0
                    && conversation[i - 1]
                        .tool_calls()
                        .any(|c| c.id == result.tool_use_id);
                if !called {
                    orphans.push(result.tool_use_id.clone());
                }
            }
        }
        orphans
    }

    #[test]
    fn a_cut_never_leaves_a_tool_result_without_its_call() {
        // Turn 1 was interrupted after its call: the operator's next text joined
        // the user message with that call's result (as `Lead::send` does).
        let mut c = vec![
            Message::user_text("q".repeat(2900)),
            Message::assistant(vec![Block::ToolUse(ToolCall {
                id: "c1".into(),
                name: "t".into(),
                input: json!({}),
            })]),
            Message {
                role: Role::User,
                content: vec![
                    Block::ToolResult(ToolResult {
                        tool_use_id: "c1".into(),
                        content: vec![ResultPart::Text {
                            text: "interrupted".into(),
                        }],
                        is_error: true,
                    }),
                    Block::Text {
                        text: "never mind, next question".into(),
                    },
                ],
            },
            Message::assistant(vec![Block::Text {
                text: "answer".into(),
            }]),
        ];
        c.extend(exchange(2, 10));
        let notice = fit(&mut c, "", &[], 1000).expect("compacted");
        assert!(notice.contains("left out the 2 oldest"), "{notice}");
        assert_eq!(c[0].text(), "never mind, next question");
        assert_eq!(orphaned_results(&c), Vec::<String>::new());
        assert!(
            !c[0]
                .content
                .iter()
                .any(|b| matches!(b, Block::ToolResult(_)))
        );
    }
}
