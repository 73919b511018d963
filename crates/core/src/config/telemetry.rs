//! `[telemetry]`: where tool-call spans and connect / revocation / approval
//! events go (OTLP over HTTP), and whether call arguments go with them.

use std::collections::BTreeMap;

use serde::Deserialize;

use crate::mcp::vars;

/// The `[telemetry]` table as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawTelemetry {
    otlp_endpoint: Option<String>,
    #[serde(default)]
    include_arguments: bool,
    #[serde(default)]
    headers: BTreeMap<String, String>,
}

/// Telemetry, when configured.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TelemetryConfig {
    /// The collector's base URL, without a trailing slash; `/v1/traces` and
    /// `/v1/logs` are appended.
    pub otlp_endpoint: String,
    /// Whether spans carry the call's arguments (off: arguments may hold data
    /// that must not leave the machine).
    pub include_arguments: bool,
    /// Sent with every export (e.g. `Authorization`); values may use `${VAR}`,
    /// read from the environment when telemetry starts.
    pub headers: BTreeMap<String, String>,
}

/// Validates the table: `Err((key, message))` with the key under `telemetry.`.
pub(super) fn telemetry(raw: RawTelemetry) -> Result<TelemetryConfig, (String, String)> {
    let key = |k: &str| format!("telemetry.{k}");
    let Some(endpoint) = raw.otlp_endpoint else {
        return Err((
            key("otlp_endpoint"),
            "missing: the collector's OTLP/HTTP base URL, e.g. \"http://localhost:4318\"".into(),
        ));
    };
    let endpoint = endpoint.trim().trim_end_matches('/').to_string();
    let scheme_ok = ["http://", "https://"]
        .iter()
        .any(|s| endpoint.starts_with(s) && endpoint.len() > s.len());
    if !scheme_ok {
        return Err((
            key("otlp_endpoint"),
            format!(
                "`{endpoint}` is not an http:// or https:// URL (e.g. \"http://localhost:4318\")"
            ),
        ));
    }
    if let Some(path) = ["/v1/traces", "/v1/logs"]
        .into_iter()
        .find(|p| endpoint.ends_with(p))
    {
        return Err((
            key("otlp_endpoint"),
            format!(
                "give the base URL, without `{path}`: `/v1/traces` and `/v1/logs` are appended"
            ),
        ));
    }
    if endpoint.parse::<http::Uri>().is_err() {
        return Err((
            key("otlp_endpoint"),
            format!("`{endpoint}` is not a valid URL"),
        ));
    }
    for (name, value) in &raw.headers {
        if http::HeaderName::from_bytes(name.as_bytes()).is_err() {
            return Err((
                key("headers"),
                format!("`{name}` is not a valid header name"),
            ));
        }
        vars::check_syntax(value).map_err(|e| (key(&format!("headers.{name}")), e.to_string()))?;
    }
    Ok(TelemetryConfig {
        otlp_endpoint: endpoint,
        include_arguments: raw.include_arguments,
        headers: raw.headers,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<TelemetryConfig, (String, String)> {
        telemetry(toml::from_str(text).unwrap())
    }

    #[test]
    fn a_base_url_is_kept_without_its_trailing_slash() {
        let t = parse("otlp_endpoint = \"http://collector:4318/\"").unwrap();
        assert_eq!(t.otlp_endpoint, "http://collector:4318");
        assert!(!t.include_arguments);
        let t = parse(
            "otlp_endpoint = \"https://otlp.example.com/otlp\"\ninclude_arguments = true\n\
             headers = { Authorization = \"Basic ${OTLP_AUTH}\" }",
        )
        .unwrap();
        assert_eq!(t.otlp_endpoint, "https://otlp.example.com/otlp");
        assert!(t.include_arguments);
        assert_eq!(t.headers["Authorization"], "Basic ${OTLP_AUTH}");
    }

    #[test]
    fn bad_endpoints_say_what_to_write() {
        let (key, message) = parse("include_arguments = true").unwrap_err();
        assert_eq!(key, "telemetry.otlp_endpoint");
        assert!(message.contains("http://localhost:4318"), "{message}");
        let (_, message) = parse("otlp_endpoint = \"localhost:4318\"").unwrap_err();
        assert!(
            message.contains("not an http:// or https:// URL"),
            "{message}"
        );
        let (_, message) = parse("otlp_endpoint = \"http://c:4318/v1/traces\"").unwrap_err();
        assert!(message.contains("without `/v1/traces`"), "{message}");
        let (key, _) =
            parse("otlp_endpoint = \"http://c:4318\"\nheaders = { A = \"${\" }").unwrap_err();
        assert_eq!(key, "telemetry.headers.A");
    }
}
