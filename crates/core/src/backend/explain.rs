//! "Explain": which local rule decided a call — the policy entry with its file
//! line, the schema's verdict, the approval or grant, and how it ended. Every
//! line is the harness's own words (names quoted inert).

use crate::config::{Config, ConfigSource, EMBEDDED_DEFAULT, lines};
use crate::mcp::names::exposed_name;
use crate::mcp::{Effect, ToolErrorCode};
use crate::protocol::{CallId, Decided, ExplainView, GrantView, Rule};
use crate::sanitize::inert_line;

use super::records::CallRecord;

/// The explanation of call `id`, or why there is none.
pub fn explain(
    id: &CallId,
    record: Option<&CallRecord>,
    config: &Config,
    grants: &[GrantView],
    pin: Option<String>,
) -> ExplainView {
    let Some(record) = record else {
        return ExplainView {
            call_id: id.clone(),
            tool: String::new(),
            lines: vec![(
                Rule::Outcome,
                "this call is not in the backend's memory (it remembers the last 2,000 calls, of this session only)"
                    .into(),
            )],
        };
    };
    let mut lines = vec![(Rule::Policy, policy(record, config))];
    lines.push((Rule::Schema, schema(record)));
    if let Some(approval) = approval(record, grants) {
        lines.push((Rule::Approval, approval));
    }
    if let Some(pin) = pin {
        lines.push((Rule::Pin, pin));
    }
    // The poisoning screen's hits on the definition the call was made to:
    // what it read as addressed to the model, and that the operator let it in.
    if !record.suspicious.is_empty() {
        lines.push((
            Rule::Screen,
            "flagged suspicious by the poisoning screen, which never trusts it on first use: it \
             runs because its pin was accepted by hand (or pins are off)"
                .into(),
        ));
    }
    for hit in record.suspicious.iter() {
        lines.push((
            Rule::Screen,
            format!(
                "rule {} ({}) in {}: \"{}\"",
                hit.rule,
                hit.reason,
                inert_line(&hit.field, 80),
                inert_line(&hit.phrase, 160)
            ),
        ));
    }
    if let Some((escalated, reason)) = &record.flow {
        let verdict = if *escalated {
            "escalated to your approval whatever its policy says"
        } else {
            "refused (mcp_flow_denied), nothing was sent"
        };
        lines.push((Rule::Flow, inert_line(&format!("{verdict}: {reason}"), 600)));
    }
    if !record.redacted.is_empty() {
        let kinds: Vec<&str> = record.redacted.iter().map(|k| k.as_str()).collect();
        lines.push((
            Rule::Redaction,
            format!(
                "credentials in the result were replaced for the model by [redacted: KIND] ({}); \
                 you see them as server output, the audit log names their kinds only",
                kinds.join(", ")
            ),
        ));
    }
    lines.push((Rule::Outcome, outcome(record)));
    ExplainView {
        call_id: id.clone(),
        tool: record.name.clone(),
        lines,
    }
}

fn policy(record: &CallRecord, config: &Config) -> String {
    let text = match &config.source {
        ConfigSource::File(path) => std::fs::read_to_string(path).ok(),
        ConfigSource::Embedded => Some(EMBEDDED_DEFAULT.to_string()),
    };
    let place = |line: Option<usize>| -> String {
        match (&config.source, line) {
            (ConfigSource::File(path), Some(n)) => format!("{}:{n}", path.display()),
            (ConfigSource::Embedded, Some(n)) => format!("the embedded default config, line {n}"),
            (_, None) => "not found in the config file as it is now".into(),
        }
    };
    let effect = record.effect.map_or("none".to_string(), |e| e.to_string());
    match (&record.alias, &record.remote_name) {
        (Some(alias), Some(remote)) => {
            let line = text
                .as_deref()
                .and_then(|t| lines::policy_line(t, alias, remote));
            format!(
                "[servers.{alias}.tools] {} = \"{effect}\" — {}",
                quoted(remote),
                place(line)
            )
        }
        // A tool the policy denies is never offered, so the call path knows its
        // alias only: its entry is the one whose exposed name is the call's.
        (Some(alias), None)
            if let Some((remote, effect)) = entry_for(config, alias, &record.name) =>
        {
            let line = text
                .as_deref()
                .and_then(|t| lines::policy_line(t, alias, &remote));
            format!(
                "[servers.{alias}.tools] {} = \"{effect}\" — {}{}",
                quoted(&remote),
                place(line),
                if effect == Effect::Deny {
                    " (so it was never offered to the model)"
                } else {
                    ""
                }
            )
        }
        _ if record.builtin => {
            let line = text
                .as_deref()
                .and_then(|t| lines::builtin_line(t, &record.name));
            match line {
                Some(_) => format!(
                    "[builtin_tools] {} = \"{effect}\" — {}",
                    record.name,
                    place(line)
                ),
                None => format!(
                    "built-in tool `{}`: its default effect, {effect}",
                    record.name
                ),
            }
        }
        _ => format!(
            "`{}` was not in the tool set of the request it came from: no policy applied",
            inert_line(&record.name, 80)
        ),
    }
}

/// The policy entry of `alias` whose exposed name is `name`.
fn entry_for(config: &Config, alias: &str, name: &str) -> Option<(String, Effect)> {
    let spec = config.servers.iter().find(|s| s.alias.as_str() == alias)?;
    spec.policy
        .entries()
        .find(|(remote, _)| exposed_name(&spec.alias, remote) == name)
        .map(|(remote, effect)| (remote.to_string(), effect))
}

fn quoted(name: &str) -> String {
    let clean = inert_line(name, 80);
    if !clean.is_empty()
        && clean
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    {
        clean
    } else {
        format!("\"{clean}\"")
    }
}

fn schema(record: &CallRecord) -> String {
    match record.code {
        Some(ToolErrorCode::McpInvalidArguments | ToolErrorCode::InvalidArguments) => {
            let errors = if record.schema_errors.is_empty() {
                record.message.clone().unwrap_or_default()
            } else {
                record.schema_errors.join("; ")
            };
            format!("refused before anything was sent: {errors}")
        }
        // Only a refusal by the policy comes before the schema; an operator's
        // denial (a prompt, an escalated sink) comes after it.
        Some(ToolErrorCode::McpPermissionDenied | ToolErrorCode::PermissionDenied)
            if record.decided == Some(Decided::DeniedByPolicy) =>
        {
            "not checked: the policy refused the call first".into()
        }
        _ if record.effect.is_none() => "not checked (no such tool)".into(),
        _ => "the arguments satisfied the tool's input schema (checked before anything was sent)"
            .into(),
    }
}

fn approval(record: &CallRecord, grants: &[GrantView]) -> Option<String> {
    let grant = |id: u64| {
        grants.iter().find(|g| g.id == id).map_or_else(
            || format!("grant #{id} (revoked since, or its connection ended)"),
            |g| format!("grant #{id}, given {}", g.given_at),
        )
    };
    Some(match record.decided? {
        Decided::AllowedByPolicy if record.effect == Some(Effect::Allow) => {
            "not asked: the policy allows it".into()
        }
        Decided::ApprovedOnce => "you approved this call once".into(),
        Decided::ApprovedAlways(id) => {
            format!(
                "you approved it and granted the tool for the session ({})",
                grant(id)
            )
        }
        Decided::SessionGrant(id) => format!(
            "not asked: a session grant covers this exact definition on this connection ({})",
            grant(id)
        ),
        Decided::DeniedByOperator => "you denied it".into(),
        Decided::NotApproved => {
            "never approved: the prompt was withdrawn (interrupted, revoked or unanswered)".into()
        }
        Decided::DeniedByFlow => {
            "not asked: flow control refused it ([flows] on_trifecta = \"deny\"), whatever its \
             policy says"
                .into()
        }
        Decided::DeniedByPolicy => "not asked: the policy denies it".into(),
        Decided::HeldByPin => "held: the tool's definition differs from its pin".into(),
        Decided::RefusedBySchema | Decided::NotRun | Decided::AllowedByPolicy => return None,
    })
}

fn outcome(record: &CallRecord) -> String {
    let when = format!("called at {}", record.at);
    match (record.code, record.elapsed_ms) {
        (None, Some(ms)) => format!("{when}; ok in {ms} ms"),
        (Some(code), _) => format!(
            "{when}; {code}: {}",
            inert_line(record.message.as_deref().unwrap_or_default(), 200)
        ),
        (None, None) => format!("{when}; still running"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mcp::flows::{FlowReason, FlowRule, Tainter};

    fn record(decided: Decided, code: Option<ToolErrorCode>, escalated: bool) -> CallRecord {
        CallRecord {
            name: "mcp__web__post".into(),
            alias: Some("web".into()),
            remote_name: Some("post".into()),
            builtin: false,
            effect: Some(Effect::Allow),
            at: "12:00:00 UTC".into(),
            decided: Some(decided),
            code,
            message: code.map(|_| "refused".into()),
            schema_errors: Vec::new(),
            elapsed_ms: Some(1),
            suspicious: Vec::new().into(),
            redacted: vec![crate::mcp::secrets::SecretKind::AwsAccessKey],
            flow: Some((
                escalated,
                FlowReason {
                    rule: FlowRule::Trifecta,
                    tainted_by: vec![Tainter {
                        call: "c1".into(),
                        tool: "mcp__web__fetch".into(),
                    }],
                },
            )),
        }
    }

    fn line(view: &ExplainView, rule: Rule) -> String {
        view.lines
            .iter()
            .find(|(r, _)| *r == rule)
            .map(|(_, t)| t.clone())
            .unwrap_or_default()
    }

    #[test]
    fn a_flow_verdict_and_a_redaction_are_explained() {
        let config = crate::config::parse("", ConfigSource::Embedded).unwrap();
        let id = CallId::from("c2");
        let denied = record(
            Decided::DeniedByFlow,
            Some(ToolErrorCode::McpFlowDenied),
            false,
        );
        let view = explain(&id, Some(&denied), &config, &[], None);
        let flow = line(&view, Rule::Flow);
        assert!(flow.starts_with("refused (mcp_flow_denied)"), "{flow}");
        assert!(flow.contains("c1 (mcp__web__fetch)"), "{flow}");
        assert!(line(&view, Rule::Approval).contains("flow control refused it"));
        // The schema was checked before flow control refused it.
        assert!(line(&view, Rule::Schema).contains("satisfied"));
        assert!(line(&view, Rule::Redaction).contains("aws_access_key"));
        // Escalated, then denied by the operator: the schema was checked too.
        let asked = record(
            Decided::DeniedByOperator,
            Some(ToolErrorCode::McpPermissionDenied),
            true,
        );
        let view = explain(&id, Some(&asked), &config, &[], None);
        assert!(line(&view, Rule::Flow).starts_with("escalated to your approval"));
        assert!(line(&view, Rule::Schema).contains("satisfied"));
        assert_eq!(line(&view, Rule::Approval), "you denied it");
        assert_eq!(line(&view, Rule::Screen), "", "no hit, no screen line");
    }

    #[test]
    fn a_suspicious_tool_names_the_screens_hit() {
        use crate::mcp::screen::{Class, Suspicion};
        let config = crate::config::parse("", ConfigSource::Embedded).unwrap();
        let mut called = record(Decided::ApprovedOnce, None, true);
        called.flow = None;
        called.suspicious = vec![Suspicion {
            rule: "secret_file",
            class: Class::Secrets,
            reason: "it names a file that holds secrets",
            field: "description".into(),
            phrase: "read ~/.ssh/id_rsa".into(),
        }]
        .into();
        let view = explain(&CallId::from("c9"), Some(&called), &config, &[], None);
        let screen: Vec<&str> = view
            .lines
            .iter()
            .filter(|(r, _)| *r == Rule::Screen)
            .map(|(_, t)| t.as_str())
            .collect();
        assert_eq!(screen.len(), 2, "{screen:?}");
        assert!(screen[0].contains("accepted by hand"), "{screen:?}");
        let screen = screen[1];
        assert!(screen.contains("rule secret_file"), "{screen}");
        assert!(
            screen.contains("it names a file that holds secrets"),
            "{screen}"
        );
        assert!(screen.contains("in description"), "{screen}");
        assert!(screen.contains("\"read ~/.ssh/id_rsa\""), "{screen}");
    }
}
