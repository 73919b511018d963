//! Who this client is at an authorization server, in the spec's order: a
//! pre-registered client (config), a client ID metadata document (when the
//! server supports them), else dynamic client registration (RFC 7591), whose
//! result is kept per issuer and never shown to another server.

use serde::Deserialize;
use serde_json::json;
use url::Url;

use super::discovery::ServerMetadata;
use super::error::{Failure, OAuthError};
use super::net::Net;
use super::spec::{AuthSpec, EndpointAuth, Resolved, Secret};
use super::store::{Store, StoredClient};

/// The client as the token endpoint will see it.
#[derive(Debug, Clone)]
pub struct Client {
    pub client_id: String,
    pub secret: Option<Secret>,
    pub method: EndpointAuth,
}

const CLIENT_NAME: &str = "mcp-harness";

/// The client for `server`; `redirect` is the redirect URI a registration must
/// carry (authorization code grant), `None` for grants without a browser.
pub async fn identify(
    net: &Net,
    store: &Store,
    spec: &AuthSpec,
    resolved: &Resolved,
    server: &ServerMetadata,
    redirect: Option<&Url>,
) -> Result<Client, Failure> {
    if let Some(client_id) = &spec.client_id {
        let method = spec
            .endpoint_auth
            .unwrap_or_else(|| choose_method(resolved, Some(server)));
        return Ok(Client {
            client_id: client_id.clone(),
            secret: resolved.client_secret.clone(),
            method,
        });
    }
    if let Some(url) = &spec.client_metadata_url
        && server.cimd
    {
        let method = match (spec.endpoint_auth, &resolved.signer) {
            (Some(m), _) => m,
            (None, Some(_)) => EndpointAuth::PrivateKeyJwt,
            (None, None) => EndpointAuth::None,
        };
        return Ok(Client {
            client_id: url.clone(),
            secret: None,
            method,
        });
    }
    let Some(redirect) = redirect else {
        return Err(OAuthError::Config {
            key: "client_id".into(),
            problem: "this grant needs a pre-registered `client_id`".into(),
        }
        .into());
    };
    if let Some(known) = store.client(&server.issuer)?
        && known.redirect_uri == redirect.as_str()
    {
        return Ok(from_stored(&known));
    }
    register(net, store, server, redirect).await
}

/// The registration kept for `issuer`, if any (its redirect URI's port is
/// worth listening on again, so the registration stays valid).
pub fn registered_port(store: &Store, issuer: &str) -> Option<u16> {
    let known = store.client(issuer).ok()??;
    Url::parse(&known.redirect_uri).ok()?.port()
}

/// A client known by its ID alone (a stored token names one), for a refresh.
pub fn for_refresh(
    store: &Store,
    spec: &AuthSpec,
    resolved: &Resolved,
    issuer: &str,
    server: Option<&ServerMetadata>,
    client_id: &str,
) -> Client {
    if spec.client_id.as_deref() == Some(client_id) {
        return Client {
            client_id: client_id.to_string(),
            secret: resolved.client_secret.clone(),
            method: spec
                .endpoint_auth
                .unwrap_or_else(|| choose_method(resolved, server)),
        };
    }
    if let Ok(Some(known)) = store.client(issuer)
        && known.client_id == client_id
    {
        return from_stored(&known);
    }
    let method = match (spec.endpoint_auth, &resolved.signer) {
        (Some(m), _) => m,
        (None, Some(_)) => EndpointAuth::PrivateKeyJwt,
        _ => EndpointAuth::None,
    };
    Client {
        client_id: client_id.to_string(),
        secret: None,
        method,
    }
}

fn from_stored(known: &StoredClient) -> Client {
    Client {
        client_id: known.client_id.clone(),
        secret: known.client_secret.clone(),
        method: EndpointAuth::parse(&known.method).unwrap_or(if known.client_secret.is_some() {
            EndpointAuth::ClientSecretBasic
        } else {
            EndpointAuth::None
        }),
    }
}

/// For a configured client without an explicit method: a key means
/// `private_key_jwt`; a secret, Basic unless the server lists only POST.
fn choose_method(resolved: &Resolved, server: Option<&ServerMetadata>) -> EndpointAuth {
    if resolved.signer.is_some() {
        return EndpointAuth::PrivateKeyJwt;
    }
    if resolved.client_secret.is_none() {
        return EndpointAuth::None;
    }
    let supports = |m: &str| server.and_then(|s| s.supports_auth_method(m));
    match (
        supports("client_secret_basic"),
        supports("client_secret_post"),
    ) {
        (Some(false), Some(true)) => EndpointAuth::ClientSecretPost,
        _ => EndpointAuth::ClientSecretBasic,
    }
}

#[derive(Deserialize)]
struct RawRegistration {
    client_id: Option<String>,
    client_secret: Option<String>,
    token_endpoint_auth_method: Option<String>,
}

async fn register(
    net: &Net,
    store: &Store,
    server: &ServerMetadata,
    redirect: &Url,
) -> Result<Client, Failure> {
    let Some(endpoint) = &server.registration_endpoint else {
        return Err(OAuthError::NoClientIdentity {
            issuer: server.issuer.clone(),
        }
        .into());
    };
    // A native client prefers to be public; else what the server accepts.
    let wanted = match (
        server.supports_auth_method("none"),
        server.supports_auth_method("client_secret_basic"),
        server.supports_auth_method("client_secret_post"),
    ) {
        (None | Some(true), _, _) => EndpointAuth::None,
        (_, Some(true), _) => EndpointAuth::ClientSecretBasic,
        (_, _, Some(true)) => EndpointAuth::ClientSecretPost,
        _ => EndpointAuth::None,
    };
    let body = json!({
        "client_name": CLIENT_NAME,
        "redirect_uris": [redirect.as_str()],
        "grant_types": ["authorization_code", "refresh_token"],
        "response_types": ["code"],
        "token_endpoint_auth_method": wanted.as_str(),
        // SEP-837: a CLI on the user's machine with a loopback redirect.
        "application_type": "native",
    });
    let failed = |problem: String| -> Failure {
        OAuthError::RegistrationFailed {
            issuer: server.issuer.clone(),
            problem,
        }
        .into()
    };
    let reply = net
        .post_json("registration endpoint", endpoint, &body)
        .await?;
    if !reply.ok() {
        let mut f = super::token::rejected("registration endpoint", &reply);
        f.error = OAuthError::RegistrationFailed {
            issuer: server.issuer.clone(),
            problem: f.error.to_string(),
        };
        return Err(f);
    }
    let raw: RawRegistration = reply
        .json("registration endpoint")
        .map_err(|e| failed(e.to_string()))?;
    let client_id = raw
        .client_id
        .filter(|c| !c.is_empty())
        .ok_or_else(|| failed("the response has no `client_id`".into()))?;
    let secret = raw.client_secret.filter(|s| !s.is_empty()).map(Secret::new);
    let method = match raw.token_endpoint_auth_method.as_deref() {
        Some(m) => EndpointAuth::parse(m)
            .ok_or_else(|| failed(format!("it assigned the unsupported method `{m}`")))?,
        None if secret.is_some() && wanted == EndpointAuth::None => EndpointAuth::ClientSecretBasic,
        None => wanted,
    };
    store.put_client(StoredClient {
        issuer: server.issuer.clone(),
        client_id: client_id.clone(),
        client_secret: secret.clone(),
        method: method.as_str().to_string(),
        redirect_uri: redirect.to_string(),
    })?;
    Ok(Client {
        client_id,
        secret,
        method,
    })
}
