//! How an HTTP server is signed in to, as configured (`[servers.ALIAS]` keys
//! `auth`, `client_id`, `grant`, …), and the same with its secrets read from
//! the environment at connect time.

use std::path::PathBuf;

use super::crypto::{JwtAlg, Signer};
use super::error::OAuthError;

/// Where a secret named by its environment variable is read (the core's
/// `${VAR}` lookup, which also knows the harness's own variables). `Sync`: an
/// async sign-out holds it across its requests.
pub trait Env: Sync {
    /// The variable's value, if it is set.
    fn var(&self, name: &str) -> Option<String>;
}

/// Whether OAuth is used for a server.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum AuthMode {
    /// Only when the server answers 401 with a challenge that names its
    /// protected-resource metadata (the `auth` key is absent).
    #[default]
    Auto,
    /// `auth = "oauth"`: also the 2025-03-26 discovery fallbacks.
    OAuth,
    /// `auth = "none"`: never; a 401 is reported as it is.
    Off,
}

/// How the client gets its tokens.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Grant {
    /// A person signs in in a browser (authorization code with PKCE).
    #[default]
    AuthorizationCode,
    /// Machine to machine: the client's own credentials (secret or key).
    ClientCredentials,
    /// Workload identity (RFC 7523 JWT-bearer): an assertion from the environment.
    JwtBearer { assertion: SecretSource },
    /// Enterprise-managed authorization (SEP-990): the identity provider's ID
    /// token is exchanged for an ID-JAG (RFC 8693), then for an access token (RFC 7523).
    CrossAppAccess {
        idp_token_endpoint: String,
        idp_client_id: String,
        idp_client_secret: Option<SecretSource>,
        id_token: SecretSource,
    },
}

/// How the client authenticates at the token endpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EndpointAuth {
    ClientSecretBasic,
    ClientSecretPost,
    None,
    PrivateKeyJwt,
}

impl EndpointAuth {
    pub fn as_str(self) -> &'static str {
        match self {
            EndpointAuth::ClientSecretBasic => "client_secret_basic",
            EndpointAuth::ClientSecretPost => "client_secret_post",
            EndpointAuth::None => "none",
            EndpointAuth::PrivateKeyJwt => "private_key_jwt",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "client_secret_basic" => EndpointAuth::ClientSecretBasic,
            "client_secret_post" => EndpointAuth::ClientSecretPost,
            "none" => EndpointAuth::None,
            "private_key_jwt" => EndpointAuth::PrivateKeyJwt,
            _ => return None,
        })
    }
}

/// Where a secret comes from: the *name* of an environment variable (config),
/// or the value itself (only the conformance client builds these).
#[derive(Clone, PartialEq, Eq)]
pub enum SecretSource {
    Env(String),
    Value(Secret),
}

impl std::fmt::Debug for SecretSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SecretSource::Env(name) => write!(f, "Env({name})"),
            SecretSource::Value(_) => f.write_str("Value([redacted])"),
        }
    }
}

/// A private key for `private_key_jwt`: a PEM file, or PEM text (conformance).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KeySource {
    File(PathBuf),
    Pem(Secret),
}

/// Everything configured about signing in to one server.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AuthSpec {
    pub mode: AuthMode,
    pub client_id: Option<String>,
    pub client_secret: Option<SecretSource>,
    /// An https URL of this client's metadata document, used as its client ID
    /// where the authorization server supports that.
    pub client_metadata_url: Option<String>,
    /// Scopes to ask for instead of what the server suggests.
    pub scopes: Vec<String>,
    pub callback_port: Option<u16>,
    pub grant: Grant,
    pub endpoint_auth: Option<EndpointAuth>,
    pub private_key: Option<(KeySource, JwtAlg)>,
}

/// A secret string: never shown by `Debug` or `Display`.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    pub fn new(value: impl Into<String>) -> Self {
        Self(value.into())
    }

    /// The value, to put on the wire. Never format it.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("[redacted]")
    }
}

impl SecretSource {
    fn read(&self, key: &str, vars: &dyn Env) -> Result<Secret, OAuthError> {
        match self {
            SecretSource::Value(v) => Ok(v.clone()),
            SecretSource::Env(name) => match vars.var(name) {
                Some(v) if !v.is_empty() => Ok(Secret(v)),
                _ => Err(OAuthError::Config {
                    key: key.to_string(),
                    problem: format!("the environment variable `{name}` is not set"),
                }),
            },
        }
    }
}

/// The spec with its secrets in hand (at connect time).
#[derive(Debug)]
pub struct Resolved {
    pub client_secret: Option<Secret>,
    pub signer: Option<Signer>,
    pub assertion: Option<Secret>,
    pub idp_client_secret: Option<Secret>,
    pub id_token: Option<Secret>,
}

impl AuthSpec {
    /// Reads the secrets this spec names. `alias` is for the key paths in errors.
    pub fn resolve(&self, alias: &str, vars: &dyn Env) -> Result<Resolved, OAuthError> {
        let key = |k: &str| format!("servers.{alias}.{k}");
        let client_secret = self
            .client_secret
            .as_ref()
            .map(|s| s.read(&key("client_secret_env"), vars))
            .transpose()?;
        let signer = match &self.private_key {
            None => None,
            Some((source, alg)) => Some(load_key(source, *alg)?),
        };
        let (assertion, idp_client_secret, id_token) = match &self.grant {
            Grant::JwtBearer { assertion } => (
                Some(assertion.read(&key("assertion_env"), vars)?),
                None,
                None,
            ),
            Grant::CrossAppAccess {
                idp_client_secret,
                id_token,
                ..
            } => (
                None,
                idp_client_secret
                    .as_ref()
                    .map(|s| s.read(&key("idp_client_secret_env"), vars))
                    .transpose()?,
                Some(id_token.read(&key("id_token_env"), vars)?),
            ),
            _ => (None, None, None),
        };
        Ok(Resolved {
            client_secret,
            signer,
            assertion,
            idp_client_secret,
            id_token,
        })
    }
}

fn load_key(source: &KeySource, alg: JwtAlg) -> Result<Signer, OAuthError> {
    let (label, pem) = match source {
        KeySource::Pem(text) => ("(given)".to_string(), text.expose().as_bytes().to_vec()),
        KeySource::File(path) => (
            path.display().to_string(),
            std::fs::read(path).map_err(|e| OAuthError::Key {
                path: path.display().to_string(),
                problem: format!("cannot be read ({e})"),
            })?,
        ),
    };
    Signer::from_pem(&pem, alg).map_err(|e| OAuthError::Key {
        path: label,
        problem: e.to_string(),
    })
}
