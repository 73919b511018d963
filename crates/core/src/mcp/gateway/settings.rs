//! What the config says about the gateway (`[serve]`): where it listens, which
//! aliases it connects, how it names tools, and the clients it lets in. Plain
//! data; `config/serve.rs` builds it from the TOML and checks it.

use std::net::SocketAddr;

use super::super::names::ServerAlias;

/// The longest outside name by default: what most hosts accept (Cursor needs 60).
pub const DEFAULT_MAX_NAME_LEN: usize = 64;

/// `[serve]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GatewaySettings {
    /// `listen`: the address `serve --http` uses when the flag gives none.
    pub listen: Option<SocketAddr>,
    /// `connect`: the aliases connected on start (`None`: every configured one).
    pub connect: Option<Vec<ServerAlias>>,
    pub names: Naming,
    /// `max_name_len`: an outside name longer than this rejects its alias.
    pub max_name_len: usize,
    /// `[serve.clients.NAME]`, in file order.
    pub clients: Vec<ClientProfile>,
}

impl Default for GatewaySettings {
    fn default() -> Self {
        Self {
            listen: None,
            connect: None,
            names: Naming::Prefixed,
            max_name_len: DEFAULT_MAX_NAME_LEN,
            clients: Vec::new(),
        }
    }
}

/// How an exposed tool is named to outside clients.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Naming {
    /// `ALIAS__TOOL` (hosts add their own `mcp__server__` prefix).
    Prefixed,
    /// `TOOL` alone, for a gateway in front of one upstream; two aliases that
    /// publish one name collide, and the later alias is rejected.
    Bare,
}

/// One outside client: who it is, where its token is, what it may see.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientProfile {
    /// The name the audit log and the approvals use.
    pub name: String,
    /// The environment variable that holds its bearer token (never the
    /// file); `None`: the client comes in over stdio only.
    pub token_env: Option<String>,
    /// `servers`: the aliases it sees and may call (`None`: all).
    pub servers: Option<Vec<ServerAlias>>,
    /// `max_tools`: the most tools it is offered (hosts cap their tool lists:
    /// Cursor 80, VS Code 128); an alias that would pass it is not offered.
    pub max_tools: Option<usize>,
}

impl ClientProfile {
    /// Whether this client may see `alias`'s tools.
    pub fn sees(&self, alias: &ServerAlias) -> bool {
        self.servers
            .as_ref()
            .is_none_or(|servers| servers.iter().any(|s| s == alias))
    }
}

impl GatewaySettings {
    /// The profile a stdio host comes in as: the one `client` names, or without
    /// a name `stdio`, added (every alias, no token) when the config has no
    /// `[serve.clients.stdio]`. Returns its name.
    pub fn stdio_client(&mut self, client: Option<&str>) -> Result<String, super::GatewayError> {
        let name = client.unwrap_or(super::STDIO_CLIENT).to_string();
        if self.clients.iter().any(|c| c.name == name) {
            return Ok(name);
        }
        if client.is_some() {
            let known: Vec<&str> = self.clients.iter().map(|c| c.name.as_str()).collect();
            let known = if known.is_empty() {
                "none".to_string()
            } else {
                known.join(", ")
            };
            return Err(super::GatewayError::UnknownClient(name, known));
        }
        self.clients.push(ClientProfile {
            name: name.clone(),
            token_env: None,
            servers: None,
            max_tools: None,
        });
        Ok(name)
    }
}
