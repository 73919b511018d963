//! Token endpoint requests (RFC 6749 §3.2, §4.1.3, §4.4, §6; RFC 7523; RFC 8693)
//! with the client authenticating as configured or registered — `client_secret_basic`,
//! `client_secret_post`, `none`, `private_key_jwt` — and the response checked
//! before anything is kept. Errors never quote a response body.

use reqwest::header::{AUTHORIZATION, HeaderMap, HeaderValue};
use serde::Deserialize;
use serde_json::json;
use url::Url;

use super::crypto::{self, Signer, now_secs};
use super::dpop::Dpop;
use super::error::{Failure, OAuthError};
use super::net::{Net, Reply};
use super::spec::{EndpointAuth, Secret};

/// How an access token is presented to the resource.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TokenType {
    Bearer,
    DPoP,
}

impl TokenType {
    pub fn as_str(self) -> &'static str {
        match self {
            TokenType::Bearer => "Bearer",
            TokenType::DPoP => "DPoP",
        }
    }
}

/// What a token endpoint issued.
#[derive(Debug, Clone)]
pub struct Issued {
    pub access_token: Secret,
    pub token_type: TokenType,
    pub refresh_token: Option<Secret>,
    /// Seconds since the epoch.
    pub expires_at: Option<u64>,
    /// The granted scopes, when the server said (else the requested ones apply).
    pub scopes: Option<Vec<String>>,
}

/// Who the client is at a token endpoint, and how it proves it.
pub struct ClientAuth<'a> {
    pub client_id: &'a str,
    pub method: EndpointAuth,
    pub secret: Option<&'a Secret>,
    pub signer: Option<&'a Signer>,
    /// The `aud` of a `private_key_jwt` assertion: the authorization server's issuer.
    pub audience: &'a str,
}

#[derive(Deserialize)]
struct RawToken {
    access_token: Option<String>,
    token_type: Option<String>,
    refresh_token: Option<String>,
    expires_in: Option<serde_json::Value>,
    scope: Option<String>,
}

#[derive(Deserialize, Default)]
struct RawError {
    error: Option<String>,
    error_description: Option<String>,
}

/// POSTs `form` (grant parameters) to `endpoint`, authenticated as `auth`.
pub async fn request(
    net: &Net,
    what: &'static str,
    endpoint: &Url,
    mut form: Vec<(&'static str, String)>,
    auth: &ClientAuth<'_>,
    dpop: Option<&Dpop>,
) -> Result<Issued, Failure> {
    let mut headers = HeaderMap::new();
    authenticate(auth, &mut form, &mut headers)?;
    // A DPoP nonce challenge (RFC 9449 §8) is answered once.
    for attempt in 0..2 {
        let mut headers = headers.clone();
        if let Some(dpop) = dpop {
            let proof = dpop.proof("POST", endpoint, None)?;
            headers.insert("DPoP", header_value(&proof)?);
        }
        let pairs: Vec<(&str, &str)> = form.iter().map(|(k, v)| (*k, v.as_str())).collect();
        let reply = net.post_form(what, endpoint, &pairs, headers).await?;
        if let Some(dpop) = dpop {
            dpop.remember_nonce(endpoint, reply.header("dpop-nonce"));
        }
        if reply.ok() {
            return Ok(parse_issued(&reply)?);
        }
        let error = rejected(what, &reply);
        let nonce_wanted = matches!(&error.error, OAuthError::TokenRejected { error, .. } if error == "use_dpop_nonce");
        if !(nonce_wanted && dpop.is_some() && attempt == 0) {
            return Err(error);
        }
    }
    Err(OAuthError::TokenRejected {
        what,
        url: endpoint.to_string(),
        error: "use_dpop_nonce".into(),
    }
    .into())
}

fn header_value(value: &str) -> Result<HeaderValue, OAuthError> {
    HeaderValue::from_str(value).map_err(|_| OAuthError::Crypto {
        problem: "a signed value is not a valid HTTP header".into(),
    })
}

/// Adds the client's credentials to the form or the headers.
pub(super) fn authenticate(
    auth: &ClientAuth<'_>,
    form: &mut Vec<(&'static str, String)>,
    headers: &mut HeaderMap,
) -> Result<(), OAuthError> {
    let secret = || {
        auth.secret.ok_or_else(|| OAuthError::Config {
            key: "client_secret_env".into(),
            problem: format!(
                "the token endpoint wants {} but no client secret is configured",
                auth.method.as_str()
            ),
        })
    };
    match auth.method {
        EndpointAuth::ClientSecretBasic => {
            // RFC 6749 §2.3.1: both parts form-encoded before base64.
            let enc =
                |s: &str| url::form_urlencoded::byte_serialize(s.as_bytes()).collect::<String>();
            let pair = format!("{}:{}", enc(auth.client_id), enc(secret()?.expose()));
            let value = format!("Basic {}", base64_std(pair.as_bytes()));
            let mut value = header_value(&value)?;
            value.set_sensitive(true);
            headers.insert(AUTHORIZATION, value);
        }
        EndpointAuth::ClientSecretPost => {
            form.push(("client_id", auth.client_id.to_string()));
            form.push(("client_secret", secret()?.expose().to_string()));
        }
        EndpointAuth::None => form.push(("client_id", auth.client_id.to_string())),
        EndpointAuth::PrivateKeyJwt => {
            let signer = auth.signer.ok_or_else(|| OAuthError::Config {
                key: "private_key_file".into(),
                problem: "private_key_jwt needs `private_key_file` and `private_key_alg`".into(),
            })?;
            let now = now_secs();
            let claims = json!({
                "iss": auth.client_id,
                "sub": auth.client_id,
                "aud": auth.audience,
                "iat": now,
                "exp": now + 120,
                "jti": crypto::random_token(16)?,
            });
            let assertion = signer
                .sign_jwt(json!({"typ": "JWT"}), &claims)
                .map_err(|e| OAuthError::Crypto {
                    problem: e.to_string(),
                })?;
            form.push(("client_id", auth.client_id.to_string()));
            form.push((
                "client_assertion_type",
                "urn:ietf:params:oauth:client-assertion-type:jwt-bearer".into(),
            ));
            form.push(("client_assertion", assertion));
        }
    }
    Ok(())
}

fn base64_std(bytes: &[u8]) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// A refusal: the OAuth error code (a short ASCII word) in our message, the
/// server's description apart as its words.
pub fn rejected(what: &'static str, reply: &Reply) -> Failure {
    let raw: RawError = serde_json::from_slice(&reply.body).unwrap_or_default();
    let code = raw
        .error
        .filter(|e| e.len() <= 64 && e.bytes().all(|b| b.is_ascii_graphic()))
        .unwrap_or_else(|| format!("HTTP {}", reply.status));
    Failure {
        error: OAuthError::TokenRejected {
            what,
            url: reply.url.to_string(),
            error: code,
        },
        server_output: raw.error_description.into_iter().collect(),
    }
}

fn parse_issued(reply: &Reply) -> Result<Issued, OAuthError> {
    let bad = |problem: String| OAuthError::BadTokenResponse {
        url: reply.url.to_string(),
        problem,
    };
    let raw: RawToken = serde_json::from_slice(&reply.body)
        .map_err(|_| bad("it is not a JSON object of the expected shape".into()))?;
    let access_token = raw
        .access_token
        .filter(|t| !t.is_empty())
        .ok_or_else(|| bad("it has no `access_token`".into()))?;
    if access_token.len() > 16 * 1024 || !access_token.bytes().all(|b| b.is_ascii_graphic()) {
        return Err(bad("its `access_token` is not a usable token".into()));
    }
    let token_type = match raw.token_type.as_deref().map(str::to_ascii_lowercase) {
        None => TokenType::Bearer,
        Some(t) if t == "bearer" => TokenType::Bearer,
        Some(t) if t == "dpop" => TokenType::DPoP,
        Some(_) => return Err(bad("its `token_type` is neither Bearer nor DPoP".into())),
    };
    let expires_in = match raw.expires_in {
        Some(serde_json::Value::Number(n)) => n.as_u64(),
        Some(serde_json::Value::String(s)) => s.trim().parse().ok(),
        _ => None,
    };
    Ok(Issued {
        access_token: Secret::new(access_token),
        token_type,
        refresh_token: raw.refresh_token.filter(|t| !t.is_empty()).map(Secret::new),
        expires_at: expires_in.map(|s| now_secs().saturating_add(s)),
        scopes: raw.scope.map(|s| super::challenge::split_scopes(&s)),
    })
}
