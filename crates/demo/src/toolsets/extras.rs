//! What `--extras` publishes: `research` (a task) and `guarded_set` (asks the
//! operator first). How they answer is `extras.rs` at the crate's top; the
//! service and the handler match their names.

use rmcp::model::{Tool, ToolAnnotations};
use serde_json::json;

use super::schema;

pub const RESEARCH: &str = "research";
pub const GUARDED_SET: &str = "guarded_set";

/// The two tools, described for the server called `name`.
pub fn tools(name: &str) -> Vec<Tool> {
    vec![
        Tool::new(
            RESEARCH,
            format!(
                "Research a topic in {name}'s archive. Takes a while, so it runs as a task: \
                 the harness polls it and shows its status."
            ),
            schema(json!({
                "type": "object",
                "properties": {
                    "topic": {"type": "string", "description": "What to research."},
                    "seconds": {
                        "type": "number", "minimum": 0, "maximum": 600, "default": 3,
                        "description": "How long the research takes."
                    }
                },
                "required": ["topic"],
                "additionalProperties": false
            })),
        )
        .with_title("Research (a task)")
        .with_annotations(ToolAnnotations::new().read_only(true)),
        Tool::new(
            GUARDED_SET,
            format!(
                "Store a value under a key in {name}'s table, but only after the operator \
                 confirms it when the server asks."
            ),
            schema(json!({
                "type": "object",
                "properties": {
                    "key": {"type": "string", "description": "The key to set."},
                    "value": {"type": "string", "description": "The value to store."}
                },
                "required": ["key", "value"],
                "additionalProperties": false
            })),
        )
        .with_title("Set a key after asking"),
    ]
}
