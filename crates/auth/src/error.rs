//! Why signing in to a server did not work, in the operator's words. Every
//! message is built locally; what an authorization server said about itself
//! (`error_description`) is kept apart as its output, shown inert. No variant
//! carries a token, a secret or a response body that could hold one.

use std::time::Duration;

use thiserror::Error;

/// One OAuth failure. `Display` says what happened; [`OAuthError::hint`] what to do.
#[derive(Debug, Clone, Error, PartialEq, Eq)]
pub enum OAuthError {
    #[error(
        "the {what} {url} is plain http on a host that is not loopback; OAuth needs https \
         (http is allowed only for 127.0.0.0/8, ::1 and localhost)"
    )]
    InsecureEndpoint { what: &'static str, url: String },
    #[error("the {what} {url} is not a usable URL ({problem})")]
    BadUrl {
        what: &'static str,
        url: String,
        problem: String,
    },
    #[error("could not reach the {what} at {url}: {detail}")]
    Unreachable {
        what: &'static str,
        url: String,
        detail: String,
    },
    #[error("the {what} at {url} did not answer within {} ms", after.as_millis())]
    TimedOut {
        what: &'static str,
        url: String,
        after: Duration,
    },
    #[error("the {what} at {url} answered HTTP {status}")]
    HttpStatus {
        what: &'static str,
        url: String,
        status: u16,
    },
    #[error("the {what} at {url} sent more than {limit} bytes; refused")]
    TooLarge {
        what: &'static str,
        url: String,
        limit: usize,
    },
    #[error("the {what} at {url} is unusable: {problem}")]
    BadDocument {
        what: &'static str,
        url: String,
        problem: String,
    },
    #[error(
        "{url} asks for authorization but publishes no protected-resource metadata \
         (RFC 9728), so the harness cannot tell which authorization server to trust"
    )]
    NoResourceMetadata { url: String },
    #[error(
        "the protected-resource metadata at {metadata_url} describes the resource {resource}, \
         not this server ({server}); refusing to sign in for it"
    )]
    ResourceMismatch {
        metadata_url: String,
        resource: String,
        server: String,
    },
    #[error(
        "the authorization-server metadata at {metadata_url} names the issuer {found}, \
         but it was fetched for {expected}; refusing to use it"
    )]
    IssuerMismatch {
        metadata_url: String,
        expected: String,
        found: String,
    },
    #[error(
        "the authorization-server metadata of {issuer} points its {what} at another origin \
         ({url}); refusing to send the browser or credentials there"
    )]
    ForeignEndpoint {
        issuer: String,
        what: &'static str,
        url: String,
    },
    #[error("{server} points at protected-resource metadata on another origin ({url}); refused")]
    ForeignMetadata { server: String, url: String },
    #[error(
        "none of the authorization servers named by {metadata_url} ({servers}) published \
         usable metadata"
    )]
    NoAuthorizationServer {
        metadata_url: String,
        servers: String,
    },
    #[error(
        "the authorization server {issuer} does not advertise PKCE with S256 \
         (code_challenge_methods_supported); signing in without it is refused"
    )]
    NoPkce { issuer: String },
    #[error(
        "the authorization server {issuer} offers no way to identify this client: no \
         registration endpoint and no client ID metadata document support"
    )]
    NoClientIdentity { issuer: String },
    #[error("registering this client with {issuer} failed: {problem}")]
    RegistrationFailed { issuer: String, problem: String },
    #[error(
        "the sign-in redirect carried a different `state` than the harness sent; \
         it was refused (it may not come from this sign-in)"
    )]
    StateMismatch,
    #[error(
        "the sign-in redirect names the issuer {found}, but the sign-in was started with \
         {expected}; refused (RFC 9207: compared exactly, without normalization)"
    )]
    IssMismatch { expected: String, found: String },
    #[error(
        "the authorization server {expected} promises an `iss` parameter on its redirects \
         (RFC 9207) but this redirect has none; refused"
    )]
    IssMissing { expected: String },
    #[error("the authorization server refused the sign-in ({error})")]
    AuthorizationDenied { error: String },
    #[error("the redirect carries neither an authorization code nor an error")]
    NoCode,
    #[error("that URL is not the redirect this sign-in waits for: {problem}")]
    NotOurRedirect { problem: String },
    #[error("the {what} at {url} refused the request ({error})")]
    TokenRejected {
        what: &'static str,
        url: String,
        error: String,
    },
    #[error("the token endpoint at {url} sent an unusable token response: {problem}")]
    BadTokenResponse { url: String, problem: String },
    #[error("the authorization server refused the stored refresh token ({error})")]
    RefreshRefused { error: String },
    #[error("{reason}")]
    NeedsSignIn {
        reason: String,
        /// The server wants more scope for one operation (a 403), not a first sign-in.
        step_up: bool,
    },
    #[error(
        "the server still refuses access after {attempts} authorizations (it asks for the \
         scope \"{scope}\"); giving up"
    )]
    StepUpLimit { attempts: u32, scope: String },
    #[error("the sign-in was cancelled")]
    Cancelled,
    #[error(
        "signing in did not finish within {} ms: {step} had not answered",
        after.as_millis()
    )]
    SignInTimedOut { step: String, after: Duration },
    #[error("{key}: {problem}")]
    Config { key: String, problem: String },
    #[error("the private key {path}: {problem}")]
    Key { path: String, problem: String },
    #[error("the token store {path}: {problem}")]
    Store { path: String, problem: String },
    #[error("the redirect listener: {problem}")]
    Listener { problem: String },
    #[error("{problem}")]
    Crypto { problem: String },
}

impl OAuthError {
    /// What the operator can do about it. `alias` names the server in commands.
    pub fn hint(&self, alias: &str) -> String {
        use OAuthError::*;
        let sign_in = format!(
            "sign in again: `mcp-harness login {alias}`, or `s` on {alias} in the Servers panel"
        );
        match self {
            InsecureEndpoint { .. } => {
                "ask the server's operator for https endpoints; OAuth over plain http is refused"
                    .into()
            }
            BadUrl { .. } | BadDocument { .. } | NoResourceMetadata { .. } => format!(
                "the server's OAuth setup is broken; give {alias} a token in `headers` instead, \
                 or ask its operator"
            ),
            Unreachable { .. } | HttpStatus { .. } => {
                "check the network and that the authorization server is up, then try again".into()
            }
            TimedOut { .. } | SignInTimedOut { .. } => {
                "the authorization server is slow or down; try again, or raise connect_timeout_ms"
                    .into()
            }
            TooLarge { .. } => "the server misbehaves; ask its operator".into(),
            ResourceMismatch { .. }
            | IssuerMismatch { .. }
            | ForeignEndpoint { .. }
            | ForeignMetadata { .. } => {
                "this may be a misconfiguration or an attack; do not sign in until the server's \
                 operator fixes its metadata"
                    .into()
            }
            NoAuthorizationServer { .. } => {
                "the authorization server is down or misconfigured; try again later".into()
            }
            NoPkce { .. } => "ask the server's operator to enable PKCE (S256)".into(),
            NoClientIdentity { .. } => format!(
                "register a client with the authorization server and set `client_id` \
                 (and `client_secret_env`) under [servers.{alias}]"
            ),
            RegistrationFailed { .. } => format!(
                "set a pre-registered `client_id` under [servers.{alias}], or ask the server's \
                 operator"
            ),
            StateMismatch | IssMismatch { .. } | IssMissing { .. } | NoCode => {
                format!("start a new sign-in; if it happens again, do not sign in. {sign_in}")
            }
            // The current token stays valid: only a new sign-in that asks for
            // the scope (configured `scopes` are always asked for) helps.
            NeedsSignIn { step_up: true, .. } => format!(
                "add the scope it asks for to `scopes` under [servers.{alias}], then sign out and \
                 in again: `mcp-harness logout {alias}` and `mcp-harness login {alias}`, or `o` \
                 then `s` on {alias} in the Servers panel"
            ),
            AuthorizationDenied { .. } | Cancelled | NeedsSignIn { .. } | RefreshRefused { .. } => {
                sign_in
            }
            NotOurRedirect { .. } => "paste the whole address the browser was sent to after you \
                 approved (it starts with the redirect address shown)"
                .into(),
            TokenRejected { .. } | BadTokenResponse { .. } => format!(
                "check `client_id`, `client_secret_env` and `scopes` of {alias}; then {sign_in}"
            ),
            StepUpLimit { .. } => {
                "your account may lack that permission; ask the server's operator".into()
            }
            Config { .. } | Key { .. } => format!("fix [servers.{alias}] in the config"),
            Crypto { .. } => "this machine's random number generator failed; try again".into(),
            Store { .. } => "check the permissions of the harness's data directory".into(),
            Listener { .. } => {
                "set `callback_port` to a free port, or use the paste-the-URL fallback".into()
            }
        }
    }

    /// Whether the failure comes from the server side refusing (the alias needs
    /// a new sign-in) rather than from the network or the config.
    pub fn wants_sign_in(&self) -> bool {
        matches!(
            self,
            OAuthError::NeedsSignIn { .. }
                | OAuthError::RefreshRefused { .. }
                | OAuthError::Cancelled
                | OAuthError::AuthorizationDenied { .. }
        )
    }
}

/// A failure and what the authorization server said about it
/// (`error_description`): its words, untrusted, for the operator only.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    pub error: OAuthError,
    pub server_output: Vec<String>,
}

impl From<OAuthError> for Failure {
    fn from(error: OAuthError) -> Self {
        Self {
            error,
            server_output: Vec::new(),
        }
    }
}

/// "outer: cause: root cause", each message once. The core's connect errors
/// have the same helper; this crate does not depend on the core.
pub(crate) fn error_chain(error: &(dyn std::error::Error + 'static)) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut next = Some(error);
    while let Some(current) = next {
        let text = current.to_string();
        if !parts.iter().any(|p| p.contains(&text)) {
            parts.push(text);
        }
        next = current.source();
    }
    parts.join(": ")
}
