//! The OAuth keys of `[servers.ALIAS]` (`auth`, `client_id`, `grant`, …),
//! checked together: a key that its grant does not use, or a grant without
//! what it needs, is an error naming the key.

use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::mcp::auth::{AuthMode, AuthSpec, EndpointAuth, Grant, JwtAlg, KeySource, SecretSource};

use super::servers::KeyError;

#[derive(Deserialize, Clone, Copy)]
#[serde(rename_all = "snake_case")]
pub(super) enum RawMode {
    Oauth,
    None,
}

#[derive(Deserialize, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub(super) enum RawGrant {
    AuthorizationCode,
    ClientCredentials,
    JwtBearer,
    CrossAppAccess,
}

#[derive(Deserialize, Clone, Copy)]
#[serde(rename_all = "snake_case")]
pub(super) enum RawEndpointAuth {
    ClientSecretBasic,
    ClientSecretPost,
    None,
    PrivateKeyJwt,
}

#[derive(Deserialize, Clone, Copy)]
pub(super) enum RawAlg {
    ES256,
    RS256,
}

/// The OAuth keys as written (part of `RawServer`).
#[derive(Default)]
pub(super) struct RawOAuth {
    pub auth: Option<RawMode>,
    pub client_id: Option<String>,
    pub client_secret_env: Option<String>,
    pub client_metadata_url: Option<String>,
    pub scopes: Option<Vec<String>>,
    pub callback_port: Option<u16>,
    pub grant: Option<RawGrant>,
    pub token_endpoint_auth: Option<RawEndpointAuth>,
    pub private_key_file: Option<String>,
    pub private_key_alg: Option<RawAlg>,
    pub assertion_env: Option<String>,
    pub idp_token_endpoint: Option<String>,
    pub idp_client_id: Option<String>,
    pub idp_client_secret_env: Option<String>,
    pub id_token_env: Option<String>,
}

impl RawOAuth {
    /// Whether any OAuth key is set (they only apply to `url` servers).
    pub fn any(&self) -> Option<&'static str> {
        let set = [
            (self.auth.is_some(), "auth"),
            (self.client_id.is_some(), "client_id"),
            (self.client_secret_env.is_some(), "client_secret_env"),
            (self.client_metadata_url.is_some(), "client_metadata_url"),
            (self.scopes.is_some(), "scopes"),
            (self.callback_port.is_some(), "callback_port"),
            (self.grant.is_some(), "grant"),
            (self.token_endpoint_auth.is_some(), "token_endpoint_auth"),
            (self.private_key_file.is_some(), "private_key_file"),
            (self.private_key_alg.is_some(), "private_key_alg"),
            (self.assertion_env.is_some(), "assertion_env"),
            (self.idp_token_endpoint.is_some(), "idp_token_endpoint"),
            (self.idp_client_id.is_some(), "idp_client_id"),
            (
                self.idp_client_secret_env.is_some(),
                "idp_client_secret_env",
            ),
            (self.id_token_env.is_some(), "id_token_env"),
        ];
        set.into_iter().find(|(on, _)| *on).map(|(_, k)| k)
    }
}

fn err(key: &str, message: impl Into<String>) -> KeyError {
    (format!(".{key}"), message.into())
}

fn env_name(key: &str, value: &str) -> Result<String, KeyError> {
    let ok = !value.is_empty()
        && value.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !value.starts_with(|c: char| c.is_ascii_digit());
    if ok {
        Ok(value.to_string())
    } else {
        Err(err(
            key,
            "the *name* of an environment variable (letters, digits, `_`), not its value",
        ))
    }
}

/// Validates the OAuth keys. `base` resolves a relative `private_key_file`.
pub(super) fn auth_spec(raw: RawOAuth, base: Option<&Path>) -> Result<AuthSpec, KeyError> {
    let grant_kind = raw.grant.unwrap_or(RawGrant::AuthorizationCode);
    let mode = match raw.auth {
        Some(RawMode::None) => {
            if let Some(k) = (RawOAuth { auth: None, ..raw }).any() {
                return Err(err(
                    k,
                    "OAuth settings need `auth = \"oauth\"` (this server has `auth = \"none\"`)",
                ));
            }
            return Ok(AuthSpec {
                mode: AuthMode::Off,
                ..AuthSpec::default()
            });
        }
        Some(RawMode::Oauth) => AuthMode::OAuth,
        // Any OAuth key means OAuth is wanted.
        None if raw.any().is_some() => AuthMode::OAuth,
        None => AuthMode::Auto,
    };
    let client_secret = raw
        .client_secret_env
        .as_deref()
        .map(|v| env_name("client_secret_env", v).map(SecretSource::Env))
        .transpose()?;
    if client_secret.is_some() && raw.client_id.is_none() {
        return Err(err(
            "client_secret_env",
            "a client secret needs its `client_id`",
        ));
    }
    if let Some(url) = &raw.client_metadata_url {
        let ok = url::Url::parse(url)
            .is_ok_and(|u| u.scheme() == "https" && u.path() != "/" && u.fragment().is_none());
        if !ok {
            return Err(err(
                "client_metadata_url",
                "must be an https URL with a path (a client ID metadata document)",
            ));
        }
    }
    let scopes = raw.scopes.unwrap_or_default();
    if let Some(bad) = scopes.iter().find(|s| {
        s.is_empty()
            || s.chars()
                .any(|c| c.is_whitespace() || c == '"' || c == '\\')
    }) {
        return Err(err(
            "scopes",
            format!("{bad:?} is not a scope (one scope per string, no spaces)"),
        ));
    }
    if raw.callback_port == Some(0) {
        return Err(err(
            "callback_port",
            "must be a port number from 1 to 65535 (leave it out for any free port)",
        ));
    }
    let private_key = match (raw.private_key_file, raw.private_key_alg) {
        (Some(file), alg) => {
            let path = PathBuf::from(&file);
            let path = match base {
                Some(dir) if path.is_relative() => dir.join(path),
                _ => path,
            };
            let alg = match alg.unwrap_or(RawAlg::ES256) {
                RawAlg::ES256 => JwtAlg::Es256,
                RawAlg::RS256 => JwtAlg::Rs256,
            };
            Some((KeySource::File(path), alg))
        }
        (None, Some(_)) => return Err(err("private_key_alg", "needs `private_key_file`")),
        (None, None) => None,
    };
    let endpoint_auth = raw.token_endpoint_auth.map(|a| match a {
        RawEndpointAuth::ClientSecretBasic => EndpointAuth::ClientSecretBasic,
        RawEndpointAuth::ClientSecretPost => EndpointAuth::ClientSecretPost,
        RawEndpointAuth::None => EndpointAuth::None,
        RawEndpointAuth::PrivateKeyJwt => EndpointAuth::PrivateKeyJwt,
    });
    match endpoint_auth {
        Some(EndpointAuth::PrivateKeyJwt) if private_key.is_none() => {
            return Err(err(
                "token_endpoint_auth",
                "`private_key_jwt` needs `private_key_file`",
            ));
        }
        Some(EndpointAuth::ClientSecretBasic | EndpointAuth::ClientSecretPost)
            if client_secret.is_none() =>
        {
            return Err(err(
                "token_endpoint_auth",
                "a client secret method needs `client_id` and `client_secret_env`",
            ));
        }
        _ => {}
    }
    let only_for =
        |key: &str, present: bool, grant: RawGrant, name: &str| -> Result<(), KeyError> {
            if present && grant_kind != grant {
                return Err(err(key, format!("only applies to `grant = \"{name}\"`")));
            }
            Ok(())
        };
    only_for(
        "assertion_env",
        raw.assertion_env.is_some(),
        RawGrant::JwtBearer,
        "jwt_bearer",
    )?;
    for (key, present) in [
        ("idp_token_endpoint", raw.idp_token_endpoint.is_some()),
        ("idp_client_id", raw.idp_client_id.is_some()),
        ("idp_client_secret_env", raw.idp_client_secret_env.is_some()),
        ("id_token_env", raw.id_token_env.is_some()),
    ] {
        only_for(key, present, RawGrant::CrossAppAccess, "cross_app_access")?;
    }
    let needs = |key: &str, value: Option<String>| {
        value.ok_or_else(|| {
            err(
                key,
                format!("is needed by `grant = \"{}\"`", grant_name(grant_kind)),
            )
        })
    };
    let grant = match grant_kind {
        RawGrant::AuthorizationCode => Grant::AuthorizationCode,
        RawGrant::ClientCredentials => {
            if raw.client_id.is_none() {
                return Err(err(
                    "client_id",
                    "is needed by `grant = \"client_credentials\"`",
                ));
            }
            if client_secret.is_none() && private_key.is_none() {
                return Err(err(
                    "grant",
                    "client_credentials needs `client_secret_env` or `private_key_file`",
                ));
            }
            Grant::ClientCredentials
        }
        RawGrant::JwtBearer => Grant::JwtBearer {
            assertion: SecretSource::Env(env_name(
                "assertion_env",
                &needs("assertion_env", raw.assertion_env)?,
            )?),
        },
        RawGrant::CrossAppAccess => {
            if raw.client_id.is_none() {
                return Err(err(
                    "client_id",
                    "is needed by `grant = \"cross_app_access\"`",
                ));
            }
            Grant::CrossAppAccess {
                idp_token_endpoint: needs("idp_token_endpoint", raw.idp_token_endpoint)?,
                idp_client_id: needs("idp_client_id", raw.idp_client_id)?,
                idp_client_secret: raw
                    .idp_client_secret_env
                    .as_deref()
                    .map(|v| env_name("idp_client_secret_env", v).map(SecretSource::Env))
                    .transpose()?,
                id_token: SecretSource::Env(env_name(
                    "id_token_env",
                    &needs("id_token_env", raw.id_token_env)?,
                )?),
            }
        }
    };
    if grant_kind != RawGrant::AuthorizationCode && raw.callback_port.is_some() {
        return Err(err(
            "callback_port",
            "only applies to `grant = \"authorization_code\"` (a browser sign-in)",
        ));
    }
    Ok(AuthSpec {
        mode,
        client_id: raw.client_id,
        client_secret,
        client_metadata_url: raw.client_metadata_url,
        scopes,
        callback_port: raw.callback_port,
        grant,
        endpoint_auth,
        private_key,
    })
}

fn grant_name(g: RawGrant) -> &'static str {
    match g {
        RawGrant::AuthorizationCode => "authorization_code",
        RawGrant::ClientCredentials => "client_credentials",
        RawGrant::JwtBearer => "jwt_bearer",
        RawGrant::CrossAppAccess => "cross_app_access",
    }
}

#[cfg(test)]
mod tests;
