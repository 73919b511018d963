//! Signing out: revoke the tokens where the authorization server supports it
//! (RFC 7009), then forget them. Nothing stored is not an error.

use std::time::Duration;

use reqwest::header::HeaderMap;
use url::Url;

use super::error::OAuthError;
use super::identity;
use super::net::Net;
use super::spec::{AuthSpec, Env, Resolved};
use super::store::Store;
use super::token::{self, ClientAuth};

/// What signing out did.
#[derive(Debug, Default)]
pub struct LogoutReport {
    /// Tokens deleted from the store.
    pub removed: usize,
    /// Tokens the authorization server confirmed revoked.
    pub revoked: usize,
    /// Why a revocation did not happen (the tokens are deleted all the same).
    pub problems: Vec<String>,
}

pub async fn logout(
    alias: &str,
    server_url: &str,
    spec: &AuthSpec,
    vars: &dyn Env,
    store: &Store,
    per_request: Duration,
) -> Result<LogoutReport, OAuthError> {
    let server = Url::parse(server_url).map_err(|e| OAuthError::BadUrl {
        what: "server URL",
        url: server_url.to_string(),
        problem: e.to_string(),
    })?;
    let mut report = LogoutReport::default();
    let tokens = store.tokens_for(&server)?;
    if tokens.is_empty() {
        return Ok(report);
    }
    let resolved = spec.resolve(alias, vars).unwrap_or(Resolved {
        client_secret: None,
        signer: None,
        assertion: None,
        idp_client_secret: None,
        id_token: None,
    });
    let net = Net::new(per_request);
    for t in tokens {
        match &t.revocation_endpoint {
            None => report.problems.push(format!(
                "{} offers no revocation endpoint; the token was only deleted here",
                t.issuer
            )),
            Some(endpoint) => {
                let client =
                    identity::for_refresh(store, spec, &resolved, &t.issuer, None, &t.client_id);
                let auth = ClientAuth {
                    client_id: &client.client_id,
                    method: client.method,
                    secret: client.secret.as_ref(),
                    signer: resolved.signer.as_ref(),
                    audience: &t.issuer,
                };
                // The refresh token first: revoking it usually ends the grant.
                let mut all = true;
                let kinds = [
                    (t.refresh_token.as_ref(), "refresh_token"),
                    (Some(&t.access_token), "access_token"),
                ];
                for (value, hint) in kinds {
                    let Some(value) = value else { continue };
                    let done = revoke(&net, endpoint, &auth, value.expose(), hint).await;
                    if let Err(e) = done {
                        all = false;
                        report.problems.push(e.to_string());
                        break;
                    }
                }
                if all {
                    report.revoked += 1;
                }
            }
        }
        report.removed += store.remove_token(&t.issuer, &t.resource)?;
    }
    Ok(report)
}

async fn revoke(
    net: &Net,
    endpoint: &str,
    auth: &ClientAuth<'_>,
    value: &str,
    hint: &str,
) -> Result<(), OAuthError> {
    const WHAT: &str = "revocation endpoint";
    let url = super::origin::endpoint(WHAT, endpoint)?;
    let mut form = vec![
        ("token", value.to_string()),
        ("token_type_hint", hint.to_string()),
    ];
    let mut headers = HeaderMap::new();
    token::authenticate(auth, &mut form, &mut headers)?;
    let pairs: Vec<(&str, &str)> = form.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let reply = net.post_form(WHAT, &url, &pairs, headers).await?;
    if reply.ok() {
        Ok(())
    } else {
        Err(token::rejected(WHAT, &reply).error)
    }
}
