//! Every authorization scenario of both pinned conformance suites — 0.1.16 and
//! 0.2.0-alpha.12 — graded by the suite, not by us: `mcp-harness
//! conformance-client` signs in unattended (the suite's authorization server
//! redirects at once) with the product's own OAuth code. A scenario that
//! expects the client to refuse (a mismatched resource or issuer, a wrong
//! `iss`) passes when the harness refuses.

use std::process::Command;

use crate::common::BIN;
use crate::common::interop::Interop;

fn run(interop: &Interop, next: bool, name: &str, extra: &[&str]) -> (bool, String) {
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new(interop.node())
        .arg(interop.conformance(next))
        .args(["client", "--command", &format!("{BIN} conformance-client")])
        .args(["--scenario", name])
        .args(extra)
        // The suite writes results/ into its working directory.
        .current_dir(dir.path())
        .env("NO_COLOR", "1")
        // The client logs to a data dir of its own, not the developer's.
        .env("XDG_DATA_HOME", dir.path().join("data"))
        .output()
        .expect("run the conformance suite");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (
        out.status.success() && text.contains("OVERALL: PASSED"),
        text,
    )
}

fn passes(next: bool, name: &str, extra: &[&str]) {
    let interop = Interop::get();
    let (ok, text) = run(&interop, next, name, extra);
    let suite = if next { "0.2.0-alpha.12" } else { "0.1.16" };
    assert!(
        ok,
        "conformance {suite} scenario {name} {extra:?} failed:\n{text}"
    );
}

/// `scenario!(test_name, "auth/…")` in 0.1.16.
macro_rules! v0116 {
    ($($test:ident => $name:literal,)*) => {
        mod v0116 {
            $(
                #[cfg_attr(mcph_no_interop, ignore = "npm or python3 is missing: the interop tests install the pinned servers with them (docs/src/testing.md)")]
                #[test]
                fn $test() { super::passes(false, $name, &[]); }
            )*
        }
    };
}

/// The same in 0.2.0-alpha.12, at the scenario's default wire.
macro_rules! next {
    ($($test:ident => $name:literal,)*) => {
        mod next {
            $(
                #[cfg_attr(mcph_no_interop, ignore = "npm or python3 is missing: the interop tests install the pinned servers with them (docs/src/testing.md)")]
                #[test]
                fn $test() { super::passes(true, $name, &[]); }
            )*
        }
    };
}

v0116! {
    metadata_default => "auth/metadata-default",
    metadata_var1 => "auth/metadata-var1",
    metadata_var2 => "auth/metadata-var2",
    metadata_var3 => "auth/metadata-var3",
    basic_cimd => "auth/basic-cimd",
    scope_from_www_authenticate => "auth/scope-from-www-authenticate",
    scope_from_scopes_supported => "auth/scope-from-scopes-supported",
    scope_omitted_when_undefined => "auth/scope-omitted-when-undefined",
    scope_step_up => "auth/scope-step-up",
    scope_retry_limit => "auth/scope-retry-limit",
    token_endpoint_auth_basic => "auth/token-endpoint-auth-basic",
    token_endpoint_auth_post => "auth/token-endpoint-auth-post",
    token_endpoint_auth_none => "auth/token-endpoint-auth-none",
    pre_registration => "auth/pre-registration",
    backcompat_oauth_metadata => "auth/2025-03-26-oauth-metadata-backcompat",
    backcompat_endpoint_fallback => "auth/2025-03-26-oauth-endpoint-fallback",
    resource_mismatch => "auth/resource-mismatch",
    offline_access_scope => "auth/offline-access-scope",
    offline_access_not_supported => "auth/offline-access-not-supported",
    client_credentials_jwt => "auth/client-credentials-jwt",
    client_credentials_basic => "auth/client-credentials-basic",
    cross_app_access_complete_flow => "auth/cross-app-access-complete-flow",
}

next! {
    metadata_default => "auth/metadata-default",
    metadata_var1 => "auth/metadata-var1",
    metadata_var2 => "auth/metadata-var2",
    metadata_var3 => "auth/metadata-var3",
    basic_cimd => "auth/basic-cimd",
    scope_from_www_authenticate => "auth/scope-from-www-authenticate",
    scope_from_scopes_supported => "auth/scope-from-scopes-supported",
    scope_omitted_when_undefined => "auth/scope-omitted-when-undefined",
    scope_step_up => "auth/scope-step-up",
    scope_retry_limit => "auth/scope-retry-limit",
    token_endpoint_auth_basic => "auth/token-endpoint-auth-basic",
    token_endpoint_auth_post => "auth/token-endpoint-auth-post",
    token_endpoint_auth_none => "auth/token-endpoint-auth-none",
    pre_registration => "auth/pre-registration",
    backcompat_oauth_metadata => "auth/2025-03-26-oauth-metadata-backcompat",
    backcompat_endpoint_fallback => "auth/2025-03-26-oauth-endpoint-fallback",
    resource_mismatch => "auth/resource-mismatch",
    iss_supported_missing => "auth/iss-supported-missing",
    iss_wrong_issuer => "auth/iss-wrong-issuer",
    iss_unexpected => "auth/iss-unexpected",
    iss_normalized => "auth/iss-normalized",
    metadata_issuer_mismatch => "auth/metadata-issuer-mismatch",
    client_credentials_jwt => "auth/client-credentials-jwt",
    client_credentials_basic => "auth/client-credentials-basic",
    enterprise_managed_authorization => "auth/enterprise-managed-authorization",
    dpop => "auth/dpop",
    dpop_nonce => "auth/dpop-nonce",
    wif_jwt_bearer => "auth/wif-jwt-bearer",
}

/// Scenarios whose default wire is the 2026-07-28 revision (stateless, no
/// `initialize`), graded at the 2025-11-25 wire; the `iss-*` and
/// `metadata-issuer-mismatch` scenarios run at both wires.
mod next_at_2025_11_25 {
    const WIRE: &[&str] = &["--spec-version", "2025-11-25", "--force"];

    macro_rules! at_2025 {
        ($($test:ident => $name:literal,)*) => {
            $(
                #[cfg_attr(mcph_no_interop, ignore = "npm or python3 is missing: the interop tests install the pinned servers with them (docs/src/testing.md)")]
                #[test]
                fn $test() { super::passes(true, $name, WIRE); }
            )*
        };
    }

    at_2025! {
        offline_access_scope => "auth/offline-access-scope",
        offline_access_not_supported => "auth/offline-access-not-supported",
        authorization_server_migration => "auth/authorization-server-migration",
        iss_supported => "auth/iss-supported",
        iss_not_advertised => "auth/iss-not-advertised",
        iss_supported_missing => "auth/iss-supported-missing",
        iss_wrong_issuer => "auth/iss-wrong-issuer",
        iss_unexpected => "auth/iss-unexpected",
        iss_normalized => "auth/iss-normalized",
        metadata_issuer_mismatch => "auth/metadata-issuer-mismatch",
    }
}

/// These sign in and then use the session at the suite's default wire
/// (2026-07-28); their sign-in alone is also graded at 2025-11-25 above.
mod next_at_2026_wire {
    macro_rules! at_2026 {
        ($($test:ident => $name:literal,)*) => {
            $(
                #[cfg_attr(mcph_no_interop, ignore = "npm or python3 is missing: the interop tests install the pinned servers with them (docs/src/testing.md)")]
                #[test]
                fn $test() { super::passes(true, $name, &[]); }
            )*
        };
    }

    at_2026! {
        offline_access_scope => "auth/offline-access-scope",
        offline_access_not_supported => "auth/offline-access-not-supported",
        authorization_server_migration => "auth/authorization-server-migration",
        iss_supported => "auth/iss-supported",
        iss_not_advertised => "auth/iss-not-advertised",
    }
}
