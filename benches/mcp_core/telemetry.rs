//! What telemetry costs the call path: the same sequential `lookup` calls
//! through three hubs — telemetry off, on with a collector that answers (an
//! OTLP/HTTP endpoint on loopback), on with a collector that is down (a closed
//! port) — interleaved in blocks, so drift hits all three alike.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use mcp_harness::config::{self, ConfigSource, TelemetryConfig};
use mcp_harness::mcp::{EventSink, FlagApprover, Hub, Vars};
use mcp_harness::telemetry::Telemetry;
use serde_json::json;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};

use super::{BIN, stats, us};

pub async fn telemetry_overhead() {
    let collector = collector().await;
    let closed = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port();
    let telemetry = |endpoint: String| {
        let config = TelemetryConfig {
            otlp_endpoint: endpoint,
            include_arguments: false,
            headers: Default::default(),
        };
        Telemetry::start(&config, &Vars::new(PathBuf::from(BIN))).expect("telemetry")
    };
    let up = telemetry(format!("http://127.0.0.1:{collector}"));
    let down = telemetry(format!("http://127.0.0.1:{closed}"));
    let hubs = [
        ("off", hub(EventSink::discard())),
        (
            "collector up",
            hub(EventSink::discard().observed_by(Some(up.observer()))),
        ),
        (
            "collector down",
            hub(EventSink::discard().observed_by(Some(down.observer()))),
        ),
    ];
    for (_, hub) in &hubs {
        hub.connect("a")
            .await
            .expect("connect")
            .outcome
            .expect("exposed");
    }
    let approver = FlagApprover { approve: false };
    let args = json!({"key": "apple"});
    let mut samples: [Vec<Duration>; 3] = Default::default();
    for (i, (_, hub)) in hubs.iter().enumerate() {
        let snapshot = hub.snapshot();
        for _ in 0..200 {
            let outcome = hub.call(&snapshot, "mcp__a__lookup", args.clone(), &approver);
            outcome.await.result.expect("warm-up");
        }
        samples[i].reserve(2000);
    }
    for _block in 0..40 {
        for (i, (_, hub)) in hubs.iter().enumerate() {
            let snapshot = hub.snapshot();
            for _ in 0..50 {
                let t = Instant::now();
                let outcome = hub.call(&snapshot, "mcp__a__lookup", args.clone(), &approver);
                outcome.await.result.expect("call");
                samples[i].push(t.elapsed());
            }
        }
    }
    let [off, on_up, on_down] = samples.map(stats);
    println!(
        "telemetry on the call path, sequential, 2000 calls each (stdio, demo server `lookup`)"
    );
    for ((name, _), s) in hubs.iter().zip([&off, &on_up, &on_down]) {
        println!(
            "  {name:<16} median {:>10}  p99 {:>10}",
            us(s.median),
            us(s.p99)
        );
    }
    let ratio = |s: &super::Stats| s.median.as_secs_f64() / off.median.as_secs_f64();
    println!(
        "  ratio on/off at the median: collector up {:.3}, collector down {:.3}  (target ≤ 1.03)",
        ratio(&on_up),
        ratio(&on_down)
    );
    for (_, hub) in &hubs {
        hub.shutdown().await;
    }
    let (up, down) = (up.flush().await, down.flush().await);
    println!(
        "  delivered: up {} of {} spans, down {} of {} spans ({} dropped and counted)",
        up.spans_sent,
        up.spans,
        down.spans_sent,
        down.spans,
        down.dropped()
    );
}

fn hub(events: EventSink) -> Hub {
    let text = format!(
        "[servers.a]\ncommand = \"{BIN}\"\nargs = [\"demo-server\", \"alpha\"]\n\
         [servers.a.tools]\nlookup = \"allow\"\nset = \"confirm\"\nreset = \"confirm\"\nfail = \"allow\"\nslow = \"allow\"\n"
    );
    let config = config::parse(&text, ConfigSource::Embedded).expect("bench config");
    Hub::builder(
        config.servers,
        config.limits,
        Vars::new(PathBuf::from(BIN)),
        events,
    )
    .build()
}

/// A collector that takes every OTLP/HTTP request and answers 200 (keep-alive).
async fn collector() -> u16 {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let port = listener.local_addr().expect("addr").port();
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            tokio::spawn(async move {
                let mut reader = BufReader::new(stream);
                loop {
                    let mut length = 0usize;
                    let mut line = String::new();
                    loop {
                        line.clear();
                        if reader.read_line(&mut line).await.unwrap_or(0) == 0 {
                            return;
                        }
                        if line.trim_end().is_empty() {
                            break;
                        }
                        if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                            length = v.trim().parse().unwrap_or(0);
                        }
                    }
                    let mut body = vec![0; length];
                    if reader.read_exact(&mut body).await.is_err() {
                        return;
                    }
                    let ok = b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n";
                    if reader.get_mut().write_all(ok).await.is_err() {
                        return;
                    }
                }
            });
        }
    });
    port
}
