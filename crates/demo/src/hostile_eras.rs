//! The `hostile` scenarios about protocol eras: servers that claim one
//! revision and answer like another, or stay silent on the probe.

use serde_json::{Value, json};

use super::hostile::Scenario;
use super::log;

/// What the era scenarios do with one request.
pub enum Intercept {
    /// Answer nothing.
    Silent,
    /// Answer this (a whole JSON-RPC message).
    Reply(Value),
    /// Not an era matter: the ordinary hostile answer.
    Pass,
}

fn result(id: Value, result: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "result": result})
}

fn initialize(id: Value, version: &str, name: &str) -> Value {
    result(
        id,
        json!({
            "protocolVersion": version,
            "capabilities": {"tools": {}},
            "serverInfo": {"name": name, "version": "0"}
        }),
    )
}

/// `saw_discover` remembers a `server/discover` the server ignored.
pub fn intercept(
    scenario: Scenario,
    method: &str,
    id: Value,
    saw_discover: &mut bool,
) -> Intercept {
    use Scenario as S;
    match (scenario, method) {
        (S::SilentDiscover, "server/discover") => {
            *saw_discover = true;
            log("server/discover: ignored");
            Intercept::Silent
        }
        (S::SilentDiscover, "initialize") => {
            // Proves the handshake came over the pipes the probe used.
            let name = if *saw_discover {
                "hostile (saw server/discover)"
            } else {
                "hostile"
            };
            Intercept::Reply(initialize(id, "2025-11-25", name))
        }
        (S::HandshakeClaimsStateless, "initialize") => {
            Intercept::Reply(initialize(id, "2026-07-28", "hostile"))
        }
        (S::DiscoverWithoutVersions, "server/discover") => Intercept::Reply(result(
            id,
            json!({"capabilities": {"tools": {}}, "serverInfo": {"name": "hostile", "version": "0"}}),
        )),
        (S::OldTaskOnStateless, "server/discover") => Intercept::Reply(result(
            id,
            json!({
                "resultType": "complete", "ttlMs": 0, "cacheScope": "private",
                "supportedVersions": ["2026-07-28"], "capabilities": {"tools": {}},
                "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "hostile", "version": "0"}}
            }),
        )),
        (S::OldTaskOnStateless, "tools/call") => Intercept::Reply(result(
            id,
            json!({"task": {"taskId": "t-1", "status": "working", "createdAt": "2026-01-01T00:00:00Z",
                            "lastUpdatedAt": "2026-01-01T00:00:00Z", "ttl": 60000, "pollInterval": 100}}),
        )),
        (S::InputOnHandshake, "tools/call") => Intercept::Reply(result(
            id,
            json!({
                "resultType": "input_required",
                "inputRequests": {"q": {"method": "elicitation/create", "params": {
                    "mode": "form", "message": "Sure?",
                    "requestedSchema": {"type": "object", "properties": {"ok": {"type": "boolean"}}}
                }}},
                "requestState": "s"
            }),
        )),
        _ => Intercept::Pass,
    }
}
