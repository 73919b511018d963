//! Telemetry for teams: with `[telemetry] otlp_endpoint`, every tool call is
//! exported as a `tool_call` span and every connect, revocation and approval as
//! a log record, over OTLP/HTTP (protobuf) to `/v1/traces` and `/v1/logs`.
//!
//! Nothing here may slow the operator down: spans and records go into bounded
//! queues (full → dropped), batches leave from the SDK's own threads, and every
//! export gives up after a second. What was not delivered is counted and
//! reported at exit. Headless commands flush before they exit, for at most
//! [`FLUSH_BUDGET`].
//!
//! One instance per process, installed when the config is loaded; the MCP hub
//! reaches it through [`observer`] (as a [`crate::mcp::Observer`]).

mod export;
mod observe;

use std::sync::atomic::Ordering;
use std::sync::{Arc, OnceLock, PoisonError};
use std::time::Duration;

use opentelemetry::KeyValue;
use opentelemetry::logs::LoggerProvider as _;
use opentelemetry::trace::TracerProvider as _;
use opentelemetry_otlp::{WithExportConfig as _, WithHttpConfig as _};
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::logs::{
    BatchConfigBuilder as BatchLogConfigBuilder, BatchLogProcessor, SdkLoggerProvider,
};
use opentelemetry_sdk::trace::{BatchConfigBuilder, BatchSpanProcessor, SdkTracerProvider};

use crate::config::TelemetryConfig;
use crate::mcp::{Observer, Vars};
use export::{Counters, CountingLogs, CountingSpans, TokioHttp};

pub use export::EXPORT_TIMEOUT;

/// The longest a command waits at exit for the last batches.
pub const FLUSH_BUDGET: Duration = Duration::from_secs(2);
/// How often batches leave while the harness runs.
const BATCH_EVERY: Duration = Duration::from_secs(1);
/// Spans (or records) waiting for the next batch; beyond this they are dropped.
pub const QUEUE: usize = 4096;

/// One exporter pipeline: its providers, the observer that feeds them and the
/// delivery counters. The process normally has one ([`install`]); benchmarks
/// build several side by side.
pub struct Telemetry {
    endpoint: String,
    traces: SdkTracerProvider,
    logs: SdkLoggerProvider,
    observer: Arc<observe::OtelObserver>,
    counters: Arc<Counters>,
}

static TELEMETRY: OnceLock<Telemetry> = OnceLock::new();

/// What telemetry delivered, reported at exit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Delivery {
    pub endpoint: String,
    pub spans: u64,
    pub spans_sent: u64,
    pub events: u64,
    pub events_sent: u64,
    /// Spans and events in batches the collector did not take.
    pub failed: u64,
    pub last_error: Option<String>,
}

impl Delivery {
    /// Spans and events that never reached the collector.
    pub fn dropped(&self) -> u64 {
        (self.spans - self.spans_sent.min(self.spans))
            + (self.events - self.events_sent.min(self.events))
    }

    /// Dropped before any export was tried: the queue was full (more than
    /// [`QUEUE`] waiting) or the exit flush ran out of time.
    pub fn unsent(&self) -> u64 {
        self.dropped().saturating_sub(self.failed)
    }
}

/// Starts telemetry for this process from the config (once; later calls do
/// nothing). Must run inside the tokio runtime. A header that names an unset
/// variable is an error naming it.
pub fn install(config: &TelemetryConfig, vars: &Vars) -> Result<(), TelemetryError> {
    if TELEMETRY.get().is_none() {
        let _ = TELEMETRY.set(Telemetry::start(config, vars)?);
    }
    Ok(())
}

/// Why telemetry cannot start (the CLI exits with status 2).
#[derive(Debug, thiserror::Error)]
pub enum TelemetryError {
    #[error("{0}")]
    Runtime(#[from] tokio::runtime::TryCurrentError),
    #[error("telemetry.headers.{name}: {problem}")]
    Header {
        name: String,
        problem: crate::mcp::vars::VarError,
    },
    /// The HTTP client (its error carries no URL).
    #[error("{0}")]
    Client(#[from] reqwest::Error),
    #[error("telemetry: {0}")]
    Exporter(#[from] opentelemetry_otlp::ExporterBuildError),
}

/// The observer the MCP hub reports to, when telemetry is on.
pub fn observer() -> Option<Arc<dyn Observer>> {
    TELEMETRY.get().map(Telemetry::observer)
}

/// Exports what is still queued, for at most [`FLUSH_BUDGET`], and says what
/// was delivered. `None` when telemetry is off.
pub async fn flush() -> Option<Delivery> {
    Some(TELEMETRY.get()?.flush().await)
}

impl Telemetry {
    /// Builds the exporters and providers. Must run inside the tokio runtime.
    pub fn start(config: &TelemetryConfig, vars: &Vars) -> Result<Self, TelemetryError> {
        let runtime = tokio::runtime::Handle::try_current()?;
        let mut headers = std::collections::HashMap::new();
        for (name, value) in &config.headers {
            let value = vars
                .expand(value)
                .map_err(|problem| TelemetryError::Header {
                    name: name.clone(),
                    problem,
                })?;
            headers.insert(name.clone(), value);
        }
        let http = TokioHttp::new(runtime)?;
        let counters = Arc::new(Counters::default());
        let base = &config.otlp_endpoint;
        let spans = opentelemetry_otlp::SpanExporter::builder()
            .with_http()
            .with_http_client(http.clone())
            .with_endpoint(format!("{base}/v1/traces"))
            .with_timeout(EXPORT_TIMEOUT)
            .with_retry_policy(retries())
            .with_headers(headers.clone())
            .build()?;
        let logs = opentelemetry_otlp::LogExporter::builder()
            .with_http()
            .with_http_client(http)
            .with_endpoint(format!("{base}/v1/logs"))
            .with_timeout(EXPORT_TIMEOUT)
            .with_retry_policy(retries())
            .with_headers(headers)
            .build()?;
        let resource = Resource::builder()
            .with_service_name("mcp-harness")
            .with_attributes([
                KeyValue::new("service.version", env!("CARGO_PKG_VERSION")),
                KeyValue::new("service.instance.id", instance_id()),
            ])
            .build();
        let traces = SdkTracerProvider::builder()
            .with_resource(resource.clone())
            .with_span_processor(
                BatchSpanProcessor::builder(CountingSpans {
                    inner: spans,
                    counters: Arc::clone(&counters),
                })
                .with_batch_config(
                    BatchConfigBuilder::default()
                        .with_max_queue_size(QUEUE)
                        .with_scheduled_delay(BATCH_EVERY)
                        .build(),
                )
                .build(),
            )
            .build();
        let logs = SdkLoggerProvider::builder()
            .with_resource(resource)
            .with_log_processor(
                BatchLogProcessor::builder(CountingLogs {
                    inner: logs,
                    counters: Arc::clone(&counters),
                })
                .with_batch_config(
                    BatchLogConfigBuilder::default()
                        .with_max_queue_size(QUEUE)
                        .with_scheduled_delay(BATCH_EVERY)
                        .build(),
                )
                .build(),
            )
            .build();
        let observer = Arc::new(observe::OtelObserver {
            tracer: traces.tracer("mcp-harness"),
            logger: logs.logger("mcp-harness"),
            include_arguments: config.include_arguments,
            counters: Arc::clone(&counters),
        });
        tracing::info!(endpoint = %base, "telemetry: exporting to the OTLP collector");
        Ok(Self {
            endpoint: base.clone(),
            traces,
            logs,
            observer,
            counters,
        })
    }

    /// What the MCP hub reports to (via its `EventSink`).
    pub fn observer(&self) -> Arc<dyn Observer> {
        Arc::clone(&self.observer) as Arc<dyn Observer>
    }

    /// Exports what is still queued, for at most [`FLUSH_BUDGET`], then stops
    /// exporting; says what was delivered.
    pub async fn flush(&self) -> Delivery {
        // The SDK's shutdown blocks while its threads export: keep it off the
        // runtime's workers, run both signals at once, and stop waiting in time.
        let traces = self.traces.clone();
        let logs = self.logs.clone();
        let each = FLUSH_BUDGET * 3 / 4;
        let spans = tokio::task::spawn_blocking(move || traces.shutdown_with_timeout(each));
        let events = tokio::task::spawn_blocking(move || logs.shutdown_with_timeout(each));
        let _ = tokio::time::timeout(FLUSH_BUDGET, async { (spans.await, events.await) }).await;
        let c = &self.counters;
        let delivery = Delivery {
            endpoint: self.endpoint.clone(),
            spans: c.spans_ended.load(Ordering::Relaxed),
            spans_sent: c.spans_sent.load(Ordering::Relaxed),
            events: c.events_emitted.load(Ordering::Relaxed),
            events_sent: c.events_sent.load(Ordering::Relaxed),
            failed: c.spans_failed.load(Ordering::Relaxed)
                + c.events_failed.load(Ordering::Relaxed),
            last_error: c
                .last_error
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .clone(),
        };
        if delivery.dropped() > 0 {
            tracing::warn!(?delivery, "telemetry: not everything reached the collector");
        } else {
            tracing::info!(?delivery, "telemetry: flushed");
        }
        delivery
    }
}

/// A blip is retried twice (100 ms, then 200 ms later); a collector that is
/// down costs about 0.3 s of retries, well inside the one-second export budget.
fn retries() -> opentelemetry_otlp::RetryPolicy {
    opentelemetry_otlp::RetryPolicy::recommended()
        .with_max_retries(2)
        .with_initial_delay(Duration::from_millis(100))
        .with_max_delay(Duration::from_millis(200))
}

/// Distinguishes this process's data from other operators' in one collector.
fn instance_id() -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or_default();
    format!("{:x}-{:x}", std::process::id(), nanos)
}
