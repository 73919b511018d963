//! An OTLP/HTTP receiver on loopback: takes `POST /v1/traces` and `/v1/logs`
//! (protobuf), answers 200, and decodes what it got with the OTLP protobuf
//! types, so tests assert on spans and log records as a collector sees them.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use opentelemetry_proto::tonic::collector::logs::v1::ExportLogsServiceRequest;
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::{AnyValue, KeyValue, any_value};
use prost::Message as _;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpListener;

/// One request as received.
#[derive(Debug, Clone)]
pub struct Received {
    pub path: String,
    /// Lower-case header names.
    pub headers: BTreeMap<String, String>,
    pub body: Vec<u8>,
}

/// A span, flattened: name and attributes (values as text).
#[derive(Debug, Clone)]
pub struct Span {
    pub name: String,
    pub attributes: BTreeMap<String, String>,
    pub error: bool,
    pub duration: Duration,
}

/// A log record, flattened.
#[derive(Debug, Clone)]
pub struct Event {
    pub name: String,
    pub body: String,
    pub attributes: BTreeMap<String, String>,
    pub linked_to_span: bool,
}

pub struct Receiver {
    pub port: u16,
    received: Arc<Mutex<Vec<Received>>>,
}

impl Receiver {
    pub async fn start() -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let received = Arc::new(Mutex::new(Vec::new()));
        let sink = Arc::clone(&received);
        tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                tokio::spawn(serve(stream, Arc::clone(&sink)));
            }
        });
        Self { port, received }
    }

    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    pub fn received(&self) -> Vec<Received> {
        self.received.lock().unwrap().clone()
    }

    pub fn spans(&self) -> Vec<Span> {
        let mut spans = Vec::new();
        for r in self.received().iter().filter(|r| r.path == "/v1/traces") {
            let request = ExportTraceServiceRequest::decode(&r.body[..]).expect("OTLP traces");
            for scope in request.resource_spans.iter().flat_map(|r| &r.scope_spans) {
                for s in &scope.spans {
                    spans.push(Span {
                        name: s.name.clone(),
                        attributes: flatten(&s.attributes),
                        error: s.status.as_ref().is_some_and(|st| st.code == 2),
                        duration: Duration::from_nanos(
                            s.end_time_unix_nano.saturating_sub(s.start_time_unix_nano),
                        ),
                    });
                }
            }
        }
        spans
    }

    pub fn events(&self) -> Vec<Event> {
        let mut events = Vec::new();
        for r in self.received().iter().filter(|r| r.path == "/v1/logs") {
            let request = ExportLogsServiceRequest::decode(&r.body[..]).expect("OTLP logs");
            for scope in request.resource_logs.iter().flat_map(|r| &r.scope_logs) {
                for l in &scope.log_records {
                    events.push(Event {
                        name: l.event_name.clone(),
                        body: l.body.as_ref().map(text).unwrap_or_default(),
                        attributes: flatten(&l.attributes),
                        linked_to_span: !l.span_id.is_empty(),
                    });
                }
            }
        }
        events
    }

    /// The resource attributes of the first export (who sent it).
    pub fn resource(&self) -> BTreeMap<String, String> {
        self.received()
            .iter()
            .find(|r| r.path == "/v1/traces")
            .and_then(|r| ExportTraceServiceRequest::decode(&r.body[..]).ok())
            .and_then(|t| t.resource_spans.first().cloned())
            .and_then(|r| r.resource)
            .map(|r| flatten(&r.attributes))
            .unwrap_or_default()
    }

    /// Waits (generously) until `pred` holds for what was received.
    pub async fn wait_for(&self, what: &str, pred: impl Fn(&Self) -> bool) {
        let deadline = Instant::now() + Duration::from_secs(30);
        while !pred(self) {
            assert!(
                Instant::now() < deadline,
                "the receiver never got {what}: {:?} / {:?}",
                self.spans(),
                self.events()
            );
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
    }
}

fn flatten(attributes: &[KeyValue]) -> BTreeMap<String, String> {
    attributes
        .iter()
        .map(|kv| {
            (
                kv.key.clone(),
                kv.value.as_ref().map(text).unwrap_or_default(),
            )
        })
        .collect()
}

fn text(value: &AnyValue) -> String {
    match &value.value {
        Some(any_value::Value::StringValue(s)) => s.clone(),
        Some(any_value::Value::IntValue(i)) => i.to_string(),
        Some(any_value::Value::DoubleValue(d)) => d.to_string(),
        Some(any_value::Value::BoolValue(b)) => b.to_string(),
        other => format!("{other:?}"),
    }
}

/// HTTP/1.1 with keep-alive: requests with a Content-Length body, 200 each.
async fn serve(stream: tokio::net::TcpStream, sink: Arc<Mutex<Vec<Received>>>) {
    let mut reader = BufReader::new(stream);
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).await.unwrap_or(0) == 0 {
            return;
        }
        let path = line
            .split_whitespace()
            .nth(1)
            .unwrap_or_default()
            .to_string();
        let mut headers = BTreeMap::new();
        loop {
            let mut header = String::new();
            if reader.read_line(&mut header).await.unwrap_or(0) == 0 {
                return;
            }
            let header = header.trim_end();
            if header.is_empty() {
                break;
            }
            if let Some((name, value)) = header.split_once(':') {
                headers.insert(name.trim().to_ascii_lowercase(), value.trim().to_string());
            }
        }
        let length: usize = headers
            .get("content-length")
            .and_then(|l| l.parse().ok())
            .unwrap_or(0);
        let mut body = vec![0; length];
        if reader.read_exact(&mut body).await.is_err() {
            return;
        }
        sink.lock().unwrap().push(Received {
            path,
            headers,
            body,
        });
        let answer =
            b"HTTP/1.1 200 OK\r\ncontent-type: application/x-protobuf\r\ncontent-length: 0\r\n\r\n";
        if reader.get_mut().write_all(answer).await.is_err() {
            return;
        }
    }
}
