//! Getting a token, by grant: the authorization code flow with PKCE (S256
//! required), `state` and `iss` checked before the code goes anywhere and
//! `resource` on both requests; client credentials; the JWT-bearer grant
//! (workload identity); and cross-app access (SEP-990).

use serde::Deserialize;

use super::agent::{AgentKind, Prompt, UserAgent};
use super::budget::Budget;
use super::crypto::{Pkce, random_token};
use super::discovery::{Discovery, Source};
use super::dpop::Dpop;
use super::error::{Failure, OAuthError};
use super::identity::{self, Client};
use super::listener::{Callback, Listener};
use super::net::Net;
use super::spec::{AuthSpec, Grant, Resolved, Secret};
use super::store::Store;
use super::token::{self, ClientAuth, Issued};

const JWT_BEARER: &str = "urn:ietf:params:oauth:grant-type:jwt-bearer";
const TOKEN_EXCHANGE: &str = "urn:ietf:params:oauth:grant-type:token-exchange";
const ID_JAG: &str = "urn:ietf:params:oauth:token-type:id-jag";
const ID_TOKEN: &str = "urn:ietf:params:oauth:token-type:id_token";

/// What a flow needs from the session.
pub struct Ctx<'a> {
    pub alias: &'a str,
    pub net: &'a Net,
    pub store: &'a Store,
    pub spec: &'a AuthSpec,
    pub resolved: &'a Resolved,
    pub agent: Option<&'a dyn UserAgent>,
    /// Paused while a person is at the browser.
    pub budget: &'a Budget,
    /// Proof of possession for the token requests (when the server offers DPoP).
    pub dpop: Option<&'a Dpop>,
}

/// A token and who it was issued to.
pub struct Obtained {
    pub issued: Issued,
    pub client_id: String,
    /// What was asked for (the grant, when the response does not say).
    pub requested: Vec<String>,
}

/// Whether `grant` needs a person at a browser.
pub fn needs_person(grant: &Grant) -> bool {
    matches!(grant, Grant::AuthorizationCode)
}

pub async fn obtain(
    ctx: &Ctx<'_>,
    d: &Discovery,
    scopes: Vec<String>,
) -> Result<Obtained, Failure> {
    match &ctx.spec.grant {
        Grant::AuthorizationCode => authorization_code(ctx, d, scopes).await,
        Grant::ClientCredentials => {
            let client =
                identity::identify(ctx.net, ctx.store, ctx.spec, ctx.resolved, &d.server, None)
                    .await?;
            let mut form = vec![("grant_type", "client_credentials".to_string())];
            with_scope_and_resource(&mut form, &scopes, d);
            token_at_server(ctx, d, client, form, scopes).await
        }
        Grant::JwtBearer { .. } => {
            let assertion = secret_of(ctx.resolved.assertion.as_ref(), "assertion_env")?;
            let client = client_or_public(ctx, d).await?;
            let mut form = vec![
                ("grant_type", JWT_BEARER.to_string()),
                ("assertion", assertion.expose().to_string()),
            ];
            with_scope_and_resource(&mut form, &scopes, d);
            token_at_server(ctx, d, client, form, scopes).await
        }
        Grant::CrossAppAccess { .. } => cross_app(ctx, d, scopes).await,
    }
}

fn secret_of<'s>(s: Option<&'s Secret>, key: &str) -> Result<&'s Secret, OAuthError> {
    s.ok_or_else(|| OAuthError::Config {
        key: key.to_string(),
        problem: "is needed by this grant".into(),
    })
}

fn with_scope_and_resource(
    form: &mut Vec<(&'static str, String)>,
    scopes: &[String],
    d: &Discovery,
) {
    if !scopes.is_empty() {
        form.push(("scope", scopes.join(" ")));
    }
    form.push(("resource", d.resource.clone()));
}

async fn client_or_public(ctx: &Ctx<'_>, d: &Discovery) -> Result<Client, Failure> {
    identity::identify(ctx.net, ctx.store, ctx.spec, ctx.resolved, &d.server, None).await
}

async fn token_at_server(
    ctx: &Ctx<'_>,
    d: &Discovery,
    client: Client,
    form: Vec<(&'static str, String)>,
    requested: Vec<String>,
) -> Result<Obtained, Failure> {
    let auth = ClientAuth {
        client_id: &client.client_id,
        method: client.method,
        secret: client.secret.as_ref(),
        signer: ctx.resolved.signer.as_ref(),
        audience: &d.server.issuer,
    };
    let issued = token::request(
        ctx.net,
        "token endpoint",
        &d.server.token_endpoint,
        form,
        &auth,
        ctx.dpop,
    )
    .await?;
    Ok(Obtained {
        issued,
        client_id: client.client_id,
        requested,
    })
}

async fn authorization_code(
    ctx: &Ctx<'_>,
    d: &Discovery,
    mut scopes: Vec<String>,
) -> Result<Obtained, Failure> {
    let server = &d.server;
    let agent = ctx.agent.ok_or_else(|| OAuthError::NeedsSignIn {
        reason: format!("{} needs a sign-in in a browser", ctx.alias),
        step_up: false,
    })?;
    let endpoint =
        server
            .authorization_endpoint
            .clone()
            .ok_or_else(|| OAuthError::BadDocument {
                what: "authorization-server metadata",
                url: server.issuer.clone(),
                problem: "it has no `authorization_endpoint`".into(),
            })?;
    let s256 = server
        .code_challenge_methods
        .as_ref()
        .is_some_and(|m| m.iter().any(|x| x == "S256"));
    // Without metadata (the 2025-03-26 defaults) there is nothing to check.
    if !s256 && server.source != Source::LegacyDefaults {
        return Err(OAuthError::NoPkce {
            issuer: server.issuer.clone(),
        }
        .into());
    }
    let port = ctx
        .spec
        .callback_port
        .or_else(|| identity::registered_port(ctx.store, &server.issuer));
    let mut listener = match Listener::bind(port).await {
        // The port of an earlier registration is taken: a new one, registered anew.
        Err(_) if ctx.spec.callback_port.is_none() && port.is_some() => {
            Listener::bind(None).await?
        }
        other => other?,
    };
    let redirect = listener.redirect_uri().clone();
    let client = identity::identify(
        ctx.net,
        ctx.store,
        ctx.spec,
        ctx.resolved,
        server,
        Some(&redirect),
    )
    .await?;
    // SEP-2207: ask for a refresh token where the server offers one.
    if !scopes.is_empty()
        && server.offers_scope("offline_access")
        && !scopes.iter().any(|s| s == "offline_access")
    {
        scopes.push("offline_access".into());
    }
    let pkce = Pkce::new()?;
    let state = random_token(24)?;
    let mut url = endpoint;
    {
        let mut q = url.query_pairs_mut();
        q.append_pair("response_type", "code")
            .append_pair("client_id", &client.client_id)
            .append_pair("redirect_uri", redirect.as_str())
            .append_pair("code_challenge", &pkce.challenge)
            .append_pair("code_challenge_method", "S256")
            .append_pair("state", &state);
        if !scopes.is_empty() {
            q.append_pair("scope", &scopes.join(" "));
        }
        q.append_pair("resource", &d.resource);
    }
    tracing::info!(alias = ctx.alias, issuer = %server.issuer, kind = ?agent.kind(), "authorization code flow: waiting for the redirect");
    let pause = (agent.kind() == AgentKind::Human).then(|| ctx.budget.pause());
    let callback = agent
        .authorize(Prompt {
            alias: ctx.alias,
            url: &url,
            listener: &mut listener,
        })
        .await;
    drop(pause);
    let callback = callback?;
    drop(listener);
    let code = check_callback(callback, &state, &server.issuer, server.iss_parameter)?;
    let form = vec![
        ("grant_type", "authorization_code".to_string()),
        ("code", code),
        ("redirect_uri", redirect.to_string()),
        ("code_verifier", pkce.verifier),
        ("resource", d.resource.clone()),
    ];
    token_at_server(ctx, d, client, form, scopes).await
}

/// RFC 6749 §4.1.2 and RFC 9207 §2.4 (as the MCP spec tabulates it), before
/// the code is sent anywhere.
pub fn check_callback(
    cb: Callback,
    state: &str,
    issuer: &str,
    iss_required: bool,
) -> Result<String, Failure> {
    if cb.state.as_deref() != Some(state) {
        return Err(OAuthError::StateMismatch.into());
    }
    match cb.iss.as_deref() {
        // Simple string comparison: no case folding, no trailing-slash games.
        Some(iss) if iss != issuer => {
            return Err(OAuthError::IssMismatch {
                expected: issuer.to_string(),
                found: iss.to_string(),
            }
            .into());
        }
        None if iss_required => {
            return Err(OAuthError::IssMissing {
                expected: issuer.to_string(),
            }
            .into());
        }
        _ => {}
    }
    if let Some(error) = cb.error {
        let code = if error.len() <= 64 && error.bytes().all(|b| b.is_ascii_graphic()) {
            error
        } else {
            "an unreadable error code".into()
        };
        return Err(Failure {
            error: OAuthError::AuthorizationDenied { error: code },
            server_output: cb.error_description.into_iter().collect(),
        });
    }
    cb.code
        .filter(|c| !c.is_empty())
        .ok_or_else(|| OAuthError::NoCode.into())
}

#[derive(Deserialize)]
struct RawExchange {
    access_token: Option<String>,
    issued_token_type: Option<String>,
}

/// SEP-990: the IdP's ID token → an ID-JAG (RFC 8693) → an access token (RFC 7523).
async fn cross_app(ctx: &Ctx<'_>, d: &Discovery, scopes: Vec<String>) -> Result<Obtained, Failure> {
    let Grant::CrossAppAccess {
        idp_token_endpoint,
        idp_client_id,
        ..
    } = &ctx.spec.grant
    else {
        return Err(OAuthError::NoCode.into());
    };
    let endpoint =
        super::origin::endpoint("identity provider's token endpoint", idp_token_endpoint)?;
    let id_token = secret_of(ctx.resolved.id_token.as_ref(), "id_token_env")?;
    let mut form: Vec<(&str, &str)> = vec![
        ("grant_type", TOKEN_EXCHANGE),
        ("requested_token_type", ID_JAG),
        ("audience", &d.server.issuer),
        ("resource", &d.resource),
        ("subject_token", id_token.expose()),
        ("subject_token_type", ID_TOKEN),
        ("client_id", idp_client_id),
    ];
    let joined = scopes.join(" ");
    if !scopes.is_empty() {
        form.push(("scope", &joined));
    }
    if let Some(secret) = &ctx.resolved.idp_client_secret {
        form.push(("client_secret", secret.expose()));
    }
    const WHAT: &str = "identity provider's token endpoint";
    let reply = ctx
        .net
        .post_form(WHAT, &endpoint, &form, Default::default())
        .await?;
    if !reply.ok() {
        return Err(token::rejected(WHAT, &reply));
    }
    let bad = |problem: &str| OAuthError::BadTokenResponse {
        url: endpoint.to_string(),
        problem: problem.to_string(),
    };
    let raw: RawExchange =
        serde_json::from_slice(&reply.body).map_err(|_| bad("it is not a JSON object"))?;
    if raw
        .issued_token_type
        .as_deref()
        .is_some_and(|t| t != ID_JAG)
    {
        return Err(bad("it issued another token type than an ID-JAG").into());
    }
    let jag = raw
        .access_token
        .filter(|t| !t.is_empty() && t.bytes().all(|b| b.is_ascii_graphic()))
        .ok_or_else(|| bad("it has no `access_token`"))?;
    let client =
        identity::identify(ctx.net, ctx.store, ctx.spec, ctx.resolved, &d.server, None).await?;
    let mut form = vec![("grant_type", JWT_BEARER.to_string()), ("assertion", jag)];
    if !scopes.is_empty() {
        form.push(("scope", scopes.join(" ")));
    }
    token_at_server(ctx, d, client, form, scopes).await
}

/// Tells whether `url` may be shown to a person (the agent decides the rest).
pub fn agent_allowed(agent: Option<&dyn UserAgent>, interactive: bool) -> bool {
    match agent.map(|a| a.kind()) {
        Some(AgentKind::Unattended) => true,
        Some(AgentKind::Human) => interactive,
        None => false,
    }
}
