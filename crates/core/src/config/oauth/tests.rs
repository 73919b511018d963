//! The OAuth keys as a config file states them: what parses, and each error's words.

use crate::config::{ConfigSource, parse};
use crate::mcp::auth::{AuthMode, Grant};

fn error(body: &str) -> String {
    let text = format!("[servers.x]\nurl = \"https://mcp.example/mcp\"\n{body}");
    parse(&text, ConfigSource::File("t.toml".into()))
        .unwrap_err()
        .to_string()
}

fn spec(body: &str) -> crate::mcp::auth::AuthSpec {
    let text = format!("[servers.x]\nurl = \"https://mcp.example/mcp\"\n{body}");
    let config = parse(&text, ConfigSource::File("t.toml".into())).unwrap();
    config.servers[0].transport.auth().unwrap().clone()
}

#[test]
fn the_example_keys_mean_what_they_say() {
    assert_eq!(spec("").mode, AuthMode::Auto);
    assert_eq!(spec("auth = \"none\"").mode, AuthMode::Off);
    let s = spec("client_id = \"c\"\nscopes = [\"a\", \"b\"]\ncallback_port = 8765");
    assert_eq!(s.mode, AuthMode::OAuth);
    assert_eq!(s.scopes, ["a", "b"]);
    assert_eq!(s.callback_port, Some(8765));
    assert_eq!(s.grant, Grant::AuthorizationCode);
}

#[test]
fn bad_oauth_keys_name_the_key() {
    let cases = [
        (
            "client_secret_env = \"S\"",
            "servers.x.client_secret_env",
            "needs its `client_id`",
        ),
        (
            "client_id = \"c\"\nclient_secret_env = \"s3cr3t value\"",
            "servers.x.client_secret_env",
            "*name* of an environment variable",
        ),
        (
            "grant = \"client_credentials\"\nclient_id = \"c\"",
            "servers.x.grant",
            "needs `client_secret_env` or `private_key_file`",
        ),
        (
            "grant = \"client_credentials\"",
            "servers.x.client_id",
            "is needed",
        ),
        (
            "grant = \"password\"",
            "servers.x.grant",
            "unknown variant `password`",
        ),
        (
            "token_endpoint_auth = \"private_key_jwt\"\nclient_id = \"c\"",
            "servers.x.token_endpoint_auth",
            "needs `private_key_file`",
        ),
        (
            "private_key_alg = \"ES256\"",
            "servers.x.private_key_alg",
            "needs `private_key_file`",
        ),
        (
            "scopes = [\"a b\"]",
            "servers.x.scopes",
            "one scope per string",
        ),
        (
            "callback_port = 0",
            "servers.x.callback_port",
            "from 1 to 65535",
        ),
        (
            "client_metadata_url = \"http://example.com/c.json\"",
            "servers.x.client_metadata_url",
            "https URL",
        ),
        (
            "auth = \"none\"\nclient_id = \"c\"",
            "servers.x.client_id",
            "need `auth = \"oauth\"`",
        ),
        (
            "assertion_env = \"J\"",
            "servers.x.assertion_env",
            "only applies to `grant = \"jwt_bearer\"`",
        ),
        (
            "grant = \"jwt_bearer\"",
            "servers.x.assertion_env",
            "is needed",
        ),
    ];
    for (body, key, what) in cases {
        let e = error(body);
        assert!(e.contains(&format!("at `{key}`")), "{body}: {e}");
        assert!(e.contains(what), "{body}: {e}");
    }
    let stdio = parse(
        "[servers.x]\ncommand = \"x\"\nauth = \"oauth\"",
        ConfigSource::File("t.toml".into()),
    )
    .unwrap_err()
    .to_string();
    assert!(
        stdio.contains("at `servers.x.auth`") && stdio.contains("only apply to `url` servers"),
        "{stdio}"
    );
}
