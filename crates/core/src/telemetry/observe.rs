//! The MCP layer's calls and events as OpenTelemetry data: a `tool_call` span
//! per call, and a log record per connect, revocation and approval. Local
//! facts only: names, effects, decisions, codes, times — never a server's own
//! text, never a header, and arguments only when the operator asked for them.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::SystemTime;

use opentelemetry::KeyValue;
use opentelemetry::logs::{AnyValue, LogRecord as _, Logger as _, Severity};
use opentelemetry::trace::{Span as _, SpanContext, SpanKind, Status, Tracer as _};
use opentelemetry_sdk::logs::SdkLogger;
use opentelemetry_sdk::trace::SdkTracer;

use super::export::Counters;
use crate::mcp::gateway::ClientCallRecord;
use crate::mcp::{AliasState, CallRecord, Decision, McpEvent, Observer, Requester};

pub struct OtelObserver {
    pub tracer: SdkTracer,
    pub logger: SdkLogger,
    pub include_arguments: bool,
    pub counters: Arc<Counters>,
}

impl Observer for OtelObserver {
    fn wants_arguments(&self) -> bool {
        self.include_arguments
    }

    fn call(&self, r: &CallRecord<'_>) {
        let outcome = match r.outcome {
            Ok(()) => "ok".to_string(),
            Err(code) => code.to_string(),
        };
        let mut attributes = vec![
            KeyValue::new("mcp.tool", r.remote_name.unwrap_or(r.tool).to_string()),
            KeyValue::new("mcp.exposed_name", r.tool.to_string()),
            KeyValue::new("mcp.decision", r.decision.label()),
            KeyValue::new("mcp.outcome", outcome.clone()),
            KeyValue::new("mcp.latency_ms", r.latency.as_secs_f64() * 1000.0),
            KeyValue::new("mcp.requested_by", r.requester.record_label()),
            KeyValue::new("mcp.call_id", r.id.to_string()),
        ];
        // An outside client's call through the gateway: by its configured name.
        if let Requester::Client(client) = r.requester {
            attributes.push(KeyValue::new("mcp.client", client.clone()));
        }
        if let Some(alias) = r.alias {
            attributes.push(KeyValue::new("mcp.alias", alias.to_string()));
        }
        if let Some(effect) = r.effect {
            attributes.push(KeyValue::new("mcp.effect", effect.to_string()));
        }
        if let Decision::Approved { decider } | Decision::Denied { decider } = r.decision {
            attributes.push(KeyValue::new("mcp.decider", decider));
        }
        if let Some(arguments) = r.arguments {
            attributes.push(KeyValue::new("mcp.arguments", arguments.to_string()));
        }
        let mut span = self
            .tracer
            .span_builder("tool_call")
            .with_kind(SpanKind::Client)
            .with_start_time(r.started)
            .with_attributes(attributes)
            .start(&self.tracer);
        if r.outcome.is_err() {
            span.set_status(Status::error(outcome.clone()));
        }
        let context = span.span_context().clone();
        span.end_with_timestamp(r.started + r.latency);
        self.counters.spans_ended.fetch_add(1, Ordering::Relaxed);

        if let Decision::Approved { decider } | Decision::Denied { decider } = r.decision {
            let verb = r.decision.label();
            let mut event = Event::new("mcp.approval", format!("{} {verb} by {decider}", r.tool));
            event.attribute("mcp.tool", r.remote_name.unwrap_or(r.tool).to_string());
            event.attribute("mcp.exposed_name", r.tool.to_string());
            event.attribute("mcp.decision", verb);
            event.attribute("mcp.decider", decider);
            event.attribute("mcp.requested_by", r.requester.record_label());
            if let Some(alias) = r.alias {
                event.attribute("mcp.alias", alias.to_string());
            }
            event.context = Some(context);
            self.emit(event);
        }
    }

    /// The gateway's own span of an outside client's request, beside the
    /// `tool_call` span of the call it made (the same `mcp.call_id`): who
    /// asked and where the time went, the gateway's added latency apart.
    fn client_call(&self, r: &ClientCallRecord<'_>) {
        let outcome = match r.outcome {
            None => "ok".to_string(),
            Some(error) => error.code.to_string(),
        };
        let ms = |d: std::time::Duration| d.as_secs_f64() * 1000.0;
        let mut attributes = vec![
            KeyValue::new("mcp.client", r.client.to_string()),
            KeyValue::new("mcp.call_id", r.call.to_string()),
            KeyValue::new("mcp.method", r.method.as_str()),
            KeyValue::new("mcp.outside_name", r.tool.to_string()),
            KeyValue::new("mcp.decision", r.decision.label()),
            KeyValue::new("mcp.outcome", outcome.clone()),
            KeyValue::new("mcp.latency_ms", ms(r.timing.total)),
            KeyValue::new("mcp.upstream_ms", ms(r.timing.upstream)),
            KeyValue::new("mcp.approval_ms", ms(r.timing.approval)),
            KeyValue::new("mcp.gateway.added_ms", ms(r.timing.added())),
        ];
        if let Some(alias) = r.alias {
            attributes.push(KeyValue::new("mcp.alias", alias.to_string()));
        }
        let mut span = self
            .tracer
            .span_builder("client_call")
            .with_kind(SpanKind::Server)
            .with_start_time(r.timing.started)
            .with_attributes(attributes)
            .start(&self.tracer);
        if r.outcome.is_some() {
            span.set_status(Status::error(outcome));
        }
        span.end_with_timestamp(r.timing.started + r.timing.total);
        self.counters.spans_ended.fetch_add(1, Ordering::Relaxed);
    }

    fn event(&self, event: &McpEvent) {
        let event = match event {
            McpEvent::AliasState { alias, state } => match state {
                AliasState::Ready { exposed, .. } => {
                    let mut e = Event::new(
                        "mcp.connect",
                        format!("{alias} connected: {exposed} tools exposed"),
                    );
                    e.attribute("mcp.alias", alias.to_string());
                    e.attribute("mcp.state", state.label());
                    e.attribute("mcp.exposed_tools", *exposed as i64);
                    e
                }
                AliasState::Rejected { code, .. } | AliasState::Failed { code, .. } => {
                    let mut e =
                        Event::new("mcp.connect", format!("{alias} {}: {code}", state.label()));
                    e.severity = Severity::Warn;
                    e.attribute("mcp.alias", alias.to_string());
                    e.attribute("mcp.state", state.label());
                    e.attribute("mcp.code", code.to_string());
                    e
                }
                _ => return,
            },
            McpEvent::Revoked {
                alias,
                tools,
                cause,
                version,
                ..
            } => {
                let kind = serde_json::to_value(cause)
                    .ok()
                    .and_then(|v| v["kind"].as_str().map(str::to_string))
                    .unwrap_or_default();
                let mut e = Event::new(
                    "mcp.revocation",
                    format!("{alias}: {} tools revoked ({kind})", tools.len()),
                );
                if !matches!(kind.as_str(), "disconnected" | "shutdown") {
                    e.severity = Severity::Warn;
                }
                e.attribute("mcp.alias", alias.to_string());
                e.attribute("mcp.cause", kind);
                e.attribute("mcp.revoked_tools", tools.len() as i64);
                e.attribute("mcp.registry_version", *version as i64);
                e
            }
            _ => return,
        };
        self.emit(event);
    }
}

/// One log record before it is handed to the SDK.
struct Event {
    name: &'static str,
    body: String,
    severity: Severity,
    attributes: Vec<(&'static str, AnyValue)>,
    context: Option<SpanContext>,
}

impl Event {
    fn new(name: &'static str, body: String) -> Self {
        Self {
            name,
            body,
            severity: Severity::Info,
            attributes: Vec::new(),
            context: None,
        }
    }

    fn attribute(&mut self, key: &'static str, value: impl Into<AnyValue>) {
        self.attributes.push((key, value.into()));
    }
}

impl OtelObserver {
    fn emit(&self, event: Event) {
        let mut record = self.logger.create_log_record();
        let now = SystemTime::now();
        record.set_event_name(event.name);
        record.set_timestamp(now);
        record.set_observed_timestamp(now);
        record.set_severity_number(event.severity);
        record.set_severity_text(event.severity.name());
        record.set_body(AnyValue::String(
            crate::sanitize::inert_line(&event.body, 500).into(),
        ));
        record.add_attribute("event.name", event.name);
        for (key, value) in event.attributes {
            record.add_attribute(key, value);
        }
        if let Some(context) = &event.context {
            record.set_trace_context(
                context.trace_id(),
                context.span_id(),
                Some(context.trace_flags()),
            );
        }
        self.logger.emit(record);
        self.counters.events_emitted.fetch_add(1, Ordering::Relaxed);
    }
}
