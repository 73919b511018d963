//! `[serve]`: the gateway's listen address, the aliases it connects, how it
//! names tools, and `[serve.clients.NAME]` (a token's environment variable,
//! never the token, and the aliases the client may see).

use std::net::SocketAddr;

use serde::Deserialize;

use crate::mcp::ServerAlias;
use crate::mcp::gateway::{ClientProfile, DEFAULT_MAX_NAME_LEN, GatewaySettings, Naming};

/// The `[serve]` table as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawServe {
    listen: Option<String>,
    connect: Option<Vec<String>>,
    names: Option<String>,
    max_name_len: Option<usize>,
    #[serde(default)]
    clients: indexmap::IndexMap<String, RawClient>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawClient {
    token_env: Option<String>,
    /// A token written into the file is refused with a message, not ignored.
    token: Option<toml::Value>,
    servers: Option<Vec<String>>,
    max_tools: Option<usize>,
}

/// Validates the table against the configured aliases: `Err((key, message))`
/// with the key under `serve.`.
pub(super) fn serve(
    raw: RawServe,
    aliases: &[ServerAlias],
) -> Result<GatewaySettings, (String, String)> {
    let key = |k: &str| format!("serve.{k}");
    let known = |list: &[String], at: &str| -> Result<Vec<ServerAlias>, (String, String)> {
        list.iter()
            .map(|a| {
                aliases
                    .iter()
                    .find(|known| known.as_str() == a)
                    .cloned()
                    .ok_or_else(|| {
                        let names: Vec<&str> = aliases.iter().map(ServerAlias::as_str).collect();
                        (
                            at.to_string(),
                            format!(
                                "`{a}` is not a configured server alias (known: {})",
                                names.join(", ")
                            ),
                        )
                    })
            })
            .collect()
    };
    let listen = raw
        .listen
        .map(|text| {
            let addr: SocketAddr = text.parse().map_err(|_| {
                (
                    key("listen"),
                    format!("`{text}` is not an address with a port, e.g. \"127.0.0.1:8765\""),
                )
            })?;
            if !addr.ip().is_loopback() {
                return Err((
                    key("listen"),
                    format!("the gateway only listens on loopback addresses, not {addr}"),
                ));
            }
            Ok(addr)
        })
        .transpose()?;
    let connect = raw
        .connect
        .map(|list| known(&list, &key("connect")))
        .transpose()?;
    let names = match raw.names.as_deref() {
        None | Some("prefixed") => Naming::Prefixed,
        Some("bare") => Naming::Bare,
        Some(other) => {
            return Err((
                key("names"),
                format!("`{other}` is not \"prefixed\" (ALIAS__TOOL, the default) or \"bare\""),
            ));
        }
    };
    let max_name_len = raw.max_name_len.unwrap_or(DEFAULT_MAX_NAME_LEN);
    if max_name_len == 0 {
        return Err((key("max_name_len"), "must be at least 1".into()));
    }
    let mut clients = Vec::new();
    for (name, client) in raw.clients {
        let at = |k: &str| key(&format!("clients.{name}.{k}"));
        if !crate::mcp::gateway::valid_name(&name) {
            return Err((
                key(&format!("clients.{name}")),
                "a client name is [A-Za-z0-9_-] only".into(),
            ));
        }
        if client.token.is_some() {
            return Err((
                at("token"),
                "tokens never go in the file: put it in an environment variable and name that \
                 variable in token_env"
                    .into(),
            ));
        }
        // Without one the client comes in over stdio only (`serve --stdio
        // --client NAME`): the host that spawns the harness is its proof.
        let token_env = match client.token_env {
            Some(var) if var.trim().is_empty() => {
                return Err((
                    at("token_env"),
                    "empty: name the environment variable that holds this client's bearer \
                     token, or leave the key out for a client that comes in over stdio only"
                        .into(),
                ));
            }
            other => other,
        };
        let servers = client
            .servers
            .map(|list| known(&list, &at("servers")))
            .transpose()?;
        if client.max_tools == Some(0) {
            return Err((at("max_tools"), "must be at least 1".into()));
        }
        clients.push(ClientProfile {
            name,
            token_env,
            servers,
            max_tools: client.max_tools,
        });
    }
    Ok(GatewaySettings {
        listen,
        connect,
        names,
        max_name_len,
        clients,
    })
}

#[cfg(test)]
mod tests {
    use super::super::{ConfigSource, parse};
    use crate::mcp::gateway::Naming;

    const SERVER: &str = "[servers.a]\ncommand = \"x\"\n[servers.a.tools]\nt = \"allow\"\n";

    fn error_of(serve: &str) -> (Option<String>, String) {
        let e = parse(&format!("{SERVER}{serve}"), ConfigSource::Embedded).unwrap_err();
        (e.path, e.message)
    }

    #[test]
    fn the_example_config_has_a_gateway_with_an_http_and_a_stdio_client() {
        let text = include_str!("../../../../config.example.toml");
        let config = parse(text, ConfigSource::File("config.example.toml".into())).unwrap();
        let serve = &config.serve;
        assert_eq!(serve.listen, Some("127.0.0.1:8765".parse().unwrap()));
        assert_eq!(serve.names, Naming::Prefixed);
        assert_eq!(serve.max_name_len, 64);
        assert_eq!(serve.clients.len(), 2);
        assert_eq!(serve.clients[0].name, "claude-code");
        assert_eq!(
            serve.clients[0].token_env.as_deref(),
            Some("CLAUDE_CODE_TOKEN")
        );
        assert_eq!(serve.clients[1].name, "cursor");
        assert_eq!(serve.clients[1].token_env, None);
    }

    #[test]
    fn a_client_sees_only_its_servers() {
        let config = parse(
            &format!(
                "{SERVER}[servers.b]\ncommand = \"x\"\n[servers.b.tools]\nt = \"allow\"\n\
                 [serve]\nnames = \"bare\"\n[serve.clients.ci]\ntoken_env = \"T\"\nservers = [\"a\"]\n"
            ),
            ConfigSource::Embedded,
        )
        .unwrap();
        let client = &config.serve.clients[0];
        assert_eq!(config.serve.names, Naming::Bare);
        assert!(client.sees(&crate::mcp::ServerAlias::new("a")));
        assert!(!client.sees(&crate::mcp::ServerAlias::new("b")));
    }

    #[test]
    fn tokens_never_come_from_the_file() {
        let (path, message) =
            error_of("[serve.clients.c]\ntoken_env = \"T\"\ntoken = \"s3cret-value\"\n");
        assert_eq!(path.as_deref(), Some("serve.clients.c.token"));
        assert!(message.contains("environment variable"), "{message}");
        assert!(!message.contains("s3cret-value"), "{message}");
        let (path, _) = error_of("[serve.clients.c]\ntoken_env = \" \"\n");
        assert_eq!(path.as_deref(), Some("serve.clients.c.token_env"));
    }

    #[test]
    fn wrong_values_name_their_key() {
        let cases = [
            (
                "[serve]\nlisten = \"0.0.0.0:80\"\n",
                "serve.listen",
                "loopback",
            ),
            ("[serve]\nlisten = \"nope\"\n", "serve.listen", "port"),
            (
                "[serve]\nconnect = [\"zz\"]\n",
                "serve.connect",
                "`zz` is not a configured",
            ),
            ("[serve]\nnames = \"short\"\n", "serve.names", "bare"),
            (
                "[serve]\nmax_name_len = 0\n",
                "serve.max_name_len",
                "at least 1",
            ),
            (
                "[serve.clients.c]\ntoken_env = \"T\"\nservers = [\"zz\"]\n",
                "serve.clients.c.servers",
                "known: a",
            ),
            (
                "[serve.clients.c]\ntoken_env = \"T\"\nmax_tools = 0\n",
                "serve.clients.c.max_tools",
                "at least 1",
            ),
            (
                "[serve.clients.\"a b\"]\ntoken_env = \"T\"\n",
                "serve.clients.a b",
                "[A-Za-z0-9_-]",
            ),
        ];
        for (text, key, words) in cases {
            let (path, message) = error_of(text);
            assert_eq!(path.as_deref(), Some(key), "{text}");
            assert!(message.contains(words), "{text}: {message}");
        }
    }
}
