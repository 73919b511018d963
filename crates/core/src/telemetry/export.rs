//! The wire under the OTLP exporters: our own reqwest client driven on the
//! tokio runtime (the SDK's batch threads only wait for it), with a short
//! timeout so a collector that is down costs at most a second; and exporters
//! that count what was delivered, so what was not is known at exit.

use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use bytes::Bytes;
use opentelemetry_http::{HttpClient, HttpError, Request, Response};
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::error::OTelSdkResult;
use opentelemetry_sdk::logs::{LogBatch, LogExporter};
use opentelemetry_sdk::trace::{SpanData, SpanExporter};

/// Every export request: a collector that does not answer in this long is
/// treated as down (the batch is dropped and counted).
pub const EXPORT_TIMEOUT: Duration = Duration::from_secs(1);
/// A collector's answer is a few bytes; never read more than this.
const MAX_RESPONSE_BYTES: usize = 64 * 1024;

/// What was handed to the exporters and what the collector took.
#[derive(Debug, Default)]
pub struct Counters {
    pub spans_ended: AtomicU64,
    pub spans_sent: AtomicU64,
    /// In batches the collector did not take (down, timed out, refused them).
    pub spans_failed: AtomicU64,
    pub events_emitted: AtomicU64,
    pub events_sent: AtomicU64,
    pub events_failed: AtomicU64,
    /// The last export failure, in our words (no URL, no header).
    pub last_error: Mutex<Option<String>>,
}

impl Counters {
    fn failed(&self, error: String) {
        *self
            .last_error
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = Some(error);
    }
}

/// reqwest on the harness's tokio runtime, callable from any thread.
#[derive(Clone)]
pub struct TokioHttp {
    client: reqwest::Client,
    runtime: tokio::runtime::Handle,
}

impl fmt::Debug for TokioHttp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("TokioHttp")
    }
}

impl TokioHttp {
    pub fn new(runtime: tokio::runtime::Handle) -> Result<Self, reqwest::Error> {
        // reqwest is built without a default TLS provider; install ring once per process.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let client = reqwest::Client::builder()
            .timeout(EXPORT_TIMEOUT)
            .connect_timeout(EXPORT_TIMEOUT)
            .build()
            .map_err(reqwest::Error::without_url)?;
        Ok(Self { client, runtime })
    }
}

#[async_trait::async_trait]
impl HttpClient for TokioHttp {
    async fn send_bytes(&self, request: Request<Bytes>) -> Result<Response<Bytes>, HttpError> {
        let client = self.client.clone();
        let request = reqwest::Request::try_from(request)?;
        let task = self.runtime.spawn(async move {
            let mut response = client.execute(request).await?;
            let status = response.status();
            let mut body = Vec::new();
            while let Some(chunk) = response.chunk().await? {
                if body.len() + chunk.len() > MAX_RESPONSE_BYTES {
                    break;
                }
                body.extend_from_slice(&chunk);
            }
            Ok::<_, reqwest::Error>((status, body))
        });
        let (status, body) = task.await?.map_err(|e| e.without_url())?;
        Ok(Response::builder().status(status).body(Bytes::from(body))?)
    }
}

/// Counts the spans the collector accepted.
#[derive(Debug)]
pub struct CountingSpans<E> {
    pub inner: E,
    pub counters: Arc<Counters>,
}

impl<E: SpanExporter> SpanExporter for CountingSpans<E> {
    async fn export(&self, batch: Vec<SpanData>) -> OTelSdkResult {
        let n = batch.len() as u64;
        let result = self.inner.export(batch).await;
        match &result {
            Ok(()) => drop(self.counters.spans_sent.fetch_add(n, Ordering::Relaxed)),
            Err(e) => {
                self.counters.spans_failed.fetch_add(n, Ordering::Relaxed);
                self.counters.failed(e.to_string());
            }
        }
        result
    }

    fn shutdown_with_timeout(&self, timeout: Duration) -> OTelSdkResult {
        self.inner.shutdown_with_timeout(timeout)
    }

    fn force_flush(&self) -> OTelSdkResult {
        self.inner.force_flush()
    }

    fn set_resource(&mut self, resource: &Resource) {
        self.inner.set_resource(resource);
    }
}

/// Counts the events (log records) the collector accepted.
#[derive(Debug)]
pub struct CountingLogs<E> {
    pub inner: E,
    pub counters: Arc<Counters>,
}

impl<E: LogExporter> LogExporter for CountingLogs<E> {
    async fn export(&self, batch: LogBatch<'_>) -> OTelSdkResult {
        let n = batch.iter().count() as u64;
        let result = self.inner.export(batch).await;
        match &result {
            Ok(()) => drop(self.counters.events_sent.fetch_add(n, Ordering::Relaxed)),
            Err(e) => {
                self.counters.events_failed.fetch_add(n, Ordering::Relaxed);
                self.counters.failed(e.to_string());
            }
        }
        result
    }

    fn shutdown_with_timeout(&self, timeout: Duration) -> OTelSdkResult {
        self.inner.shutdown_with_timeout(timeout)
    }

    fn set_resource(&mut self, resource: &Resource) {
        self.inner.set_resource(resource);
    }
}
