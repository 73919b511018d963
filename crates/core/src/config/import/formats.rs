//! The six source formats, read leniently (keys we do not use are ignored) but
//! with exact positions for what is wrong: serde errors carry the line and
//! column, `serde_path_to_error` the key path.

use indexmap::IndexMap;
use serde::Deserialize;
use serde_json::Value;

/// A scalar where a string is expected: `"3000"`, `3000` and `true` all work
/// as an environment value, as they do in the hosts that wrote them.
#[derive(Debug, Clone)]
pub struct Scalar(pub String);

impl<'de> Deserialize<'de> for Scalar {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        match Value::deserialize(d)? {
            Value::String(s) => Ok(Scalar(s)),
            Value::Number(n) => Ok(Scalar(n.to_string())),
            Value::Bool(b) => Ok(Scalar(b.to_string())),
            other => Err(serde::de::Error::custom(format!(
                "expected a string, found {}",
                kind(&other)
            ))),
        }
    }
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// A server entry in any of the JSON formats (`mcpServers` or VS Code's `servers`).
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct JsonServer {
    #[serde(rename = "type")]
    pub kind: Option<String>,
    pub command: Option<String>,
    pub args: Option<Vec<Scalar>>,
    pub env: Option<IndexMap<String, Scalar>>,
    pub env_file: Option<String>,
    pub cwd: Option<String>,
    pub url: Option<String>,
    /// Gemini CLI: Streamable HTTP (its `url` is SSE).
    pub http_url: Option<String>,
    pub headers: Option<IndexMap<String, Scalar>>,
    /// Gemini CLI: the call timeout in milliseconds.
    pub timeout: Option<u64>,
    pub disabled: Option<bool>,
    pub include_tools: Option<Vec<String>>,
    pub exclude_tools: Option<Vec<String>>,
}

/// Claude Desktop, Claude Code (`.mcp.json`, `~/.claude.json`), Cursor, Gemini CLI.
#[derive(Debug, Deserialize)]
pub struct McpServersFile {
    #[serde(rename = "mcpServers")]
    pub mcp_servers: Option<IndexMap<String, JsonServer>>,
    /// `~/.claude.json`: per-project servers.
    pub projects: Option<IndexMap<String, ClaudeProject>>,
}

#[derive(Debug, Deserialize)]
pub struct ClaudeProject {
    #[serde(rename = "mcpServers")]
    pub mcp_servers: Option<IndexMap<String, JsonServer>>,
}

/// VS Code's `.vscode/mcp.json`.
#[derive(Debug, Deserialize)]
pub struct VscodeFile {
    pub servers: Option<IndexMap<String, JsonServer>>,
    pub inputs: Option<Vec<VscodeInput>>,
}

#[derive(Debug, Deserialize)]
pub struct VscodeInput {
    pub id: String,
    pub description: Option<String>,
}

/// Codex's `config.toml`: `[mcp_servers.NAME]`.
#[derive(Debug, Deserialize)]
pub struct CodexFile {
    pub mcp_servers: Option<IndexMap<String, CodexServer>>,
}

#[derive(Debug, Deserialize)]
pub struct CodexServer {
    pub command: Option<String>,
    pub args: Option<Vec<String>>,
    pub env: Option<IndexMap<String, String>>,
    /// Names of variables passed through from Codex's own environment.
    pub env_vars: Option<Vec<String>>,
    pub cwd: Option<String>,
    pub url: Option<String>,
    pub bearer_token_env_var: Option<String>,
    pub bearer_token: Option<String>,
    pub http_headers: Option<IndexMap<String, String>>,
    /// Header → the name of the variable holding its value.
    pub env_http_headers: Option<IndexMap<String, String>>,
    pub startup_timeout_sec: Option<f64>,
    pub startup_timeout_ms: Option<u64>,
    pub tool_timeout_sec: Option<f64>,
    pub enabled: Option<bool>,
    pub enabled_tools: Option<Vec<String>>,
    pub disabled_tools: Option<Vec<String>>,
}
