//! What servers offer besides tools, as it crosses to the UI: their prompts
//! (for `/alias:prompt` and its completion), and the server content the
//! operator brought into the conversation (`@alias:uri`, a prompt's messages).

use std::collections::BTreeMap;

/// At most this many resources are attached to one message.
pub const MAX_ATTACHED: usize = 8;

/// A resource the operator attached to a message (`@alias:uri`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResourceRef {
    pub alias: String,
    pub uri: String,
}

/// The operator's message: their text, and the resources attached to it (read
/// before the turn and added after the text, marked as server content).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct UserMessage {
    pub text: String,
    pub resources: Vec<ResourceRef>,
}

impl From<&str> for UserMessage {
    fn from(text: &str) -> Self {
        Self {
            text: text.to_string(),
            resources: Vec::new(),
        }
    }
}

/// `/alias:prompt key=value …`: a server's prompt, as the operator invoked it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PromptUse {
    pub alias: String,
    pub name: String,
    pub arguments: BTreeMap<String, String>,
}

/// One argument a prompt takes (its text, untrusted: rendered inert).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PromptArgRow {
    pub name: String,
    pub description: Option<String>,
    pub required: bool,
}

/// One prompt of a server as listed (its text, untrusted: rendered inert).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PromptRow {
    pub name: String,
    pub description: Option<String>,
    pub arguments: Vec<PromptArgRow>,
}

/// A server's prompts (the answer to `Command::ListPrompts`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PromptsView {
    pub alias: String,
    pub prompts: Vec<PromptRow>,
    /// Why there is no listing (the harness's words), if there is none.
    pub error: Option<String>,
}

/// What the operator brought in from a server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ContentSource {
    /// `@alias:uri`: a resource attached to a message.
    Resource { uri: String },
    /// `/alias:prompt`: a prompt's messages.
    Prompt { name: String },
    /// A resource the operator read in the Resources window: for their eyes,
    /// never sent to the model.
    Read { uri: String },
}

/// One part of it: a label (`user`, `assistant`, a MIME type) and the text the
/// model got (the server's words: untrusted, shown inert).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContentPart {
    pub label: String,
    pub text: String,
}

/// Server content the operator brought into the conversation: what the model
/// got of it, or why nothing came (`error`, the harness's words).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerContentView {
    pub alias: String,
    pub source: ContentSource,
    pub parts: Vec<ContentPart>,
    pub error: Option<String>,
    /// What the server said that the model did not get (its error text).
    pub server_output: Option<String>,
}
