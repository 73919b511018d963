//! The OAuth side of `conformance-client`: the sign-in settings a scenario's
//! context (`MCP_CONFORMANCE_CONTEXT`) asks for, written as an operator would
//! write them in `[servers.ALIAS]`, and an unattended agent in place of the
//! person at the browser (the suite's authorization server redirects at once).

use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;

use mcp_harness::mcp::HubBuilder;
use mcp_harness::mcp::auth::{
    AuthMode, AuthSpec, EndpointAuth, Grant, JwtAlg, KeySource, Secret, SecretSource, Store,
    Unattended,
};

/// The variable the suite sets to the scenario's context (JSON).
pub const CONTEXT_VAR: &str = "MCP_CONFORMANCE_CONTEXT";

/// This client's metadata document URL (a client ID metadata document); the
/// suite's server does not fetch it.
const CLIENT_METADATA_URL: &str = "https://conformance-test.local/client-metadata.json";

/// How long the unattended agent waits for the redirect to come back.
const REDIRECT_WAIT: Duration = Duration::from_secs(10);

/// The scenario's context, if the suite gave one.
pub fn context() -> Value {
    std::env::var(CONTEXT_VAR)
        .ok()
        .and_then(|text| serde_json::from_str(&text).ok())
        .unwrap_or(Value::Null)
}

/// What the operator would configure for the scenario's server.
pub fn auth_spec(scenario: &str, context: &Value) -> AuthSpec {
    let text = |key: &str| context.get(key).and_then(Value::as_str).map(str::to_string);
    let secret = |key: &str| text(key).map(|v| SecretSource::Value(Secret::new(v)));
    let mut spec = AuthSpec {
        mode: AuthMode::OAuth,
        client_metadata_url: Some(CLIENT_METADATA_URL.into()),
        ..AuthSpec::default()
    };
    if !scenario.starts_with("auth/") {
        spec.mode = AuthMode::Auto;
        spec.client_metadata_url = None;
        return spec;
    }
    spec.client_id = text("client_id");
    spec.client_secret = secret("client_secret");
    match scenario {
        "auth/client-credentials-basic" => {
            spec.grant = Grant::ClientCredentials;
            spec.endpoint_auth = Some(EndpointAuth::ClientSecretBasic);
        }
        "auth/client-credentials-jwt" => {
            spec.grant = Grant::ClientCredentials;
            spec.endpoint_auth = Some(EndpointAuth::PrivateKeyJwt);
            let alg = match text("signing_algorithm").as_deref() {
                Some("RS256") => JwtAlg::Rs256,
                _ => JwtAlg::Es256,
            };
            spec.private_key =
                text("private_key_pem").map(|pem| (KeySource::Pem(Secret::new(pem)), alg));
        }
        "auth/cross-app-access-complete-flow" | "auth/enterprise-managed-authorization" => {
            spec.grant = Grant::CrossAppAccess {
                idp_token_endpoint: text("idp_token_endpoint").unwrap_or_default(),
                idp_client_id: text("idp_client_id").unwrap_or_default(),
                idp_client_secret: None,
                id_token: secret("idp_id_token")
                    .unwrap_or(SecretSource::Env("IDP_ID_TOKEN".into())),
            };
            spec.endpoint_auth = Some(EndpointAuth::ClientSecretBasic);
        }
        "auth/wif-jwt-bearer" => {
            spec.grant = Grant::JwtBearer {
                assertion: secret("valid_jwt").unwrap_or(SecretSource::Env("WIF_JWT".into())),
            };
            spec.endpoint_auth = Some(EndpointAuth::None);
        }
        _ => {}
    }
    spec
}

/// A hub set up like the harness's, with tokens in memory (`store`) and the
/// unattended agent for sign-ins.
pub fn prepare(hub: HubBuilder, store: &Arc<Store>) -> HubBuilder {
    hub.token_store(Arc::clone(store))
        .sign_in_agent(Arc::new(Unattended::new(REDIRECT_WAIT)))
}
