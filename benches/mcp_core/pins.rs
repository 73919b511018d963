//! What pinning definitions (rule 14) adds to the whole connect of a large
//! server: `Hub::connect` with every tool pinned (the steady state) vs the same
//! server with `pin = "off"`, alternating in one run. Two pinned cases: the
//! lock file already read by this process (a TUI reconnecting: it is re-read
//! only when it changed), and read afresh on every connect (a headless command,
//! one connect per process). The first connect, which writes every pin, is
//! reported on its own.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use mcp_harness::mcp::{EventSink, Hub, Limits, PinBook, PinMode, ServerSpec, Vars};

use super::large::big_server;
use super::{BIN, ms, stats};

const ROUNDS: usize = 22;
const WARM_UP: usize = 2;

pub async fn pin_overhead(tools: usize, distinct: bool) {
    let (spec, limits) = big_server(tools, distinct);
    let dir = tempfile::tempdir().expect("temp dir");
    let lock = dir.path().join("mcp-harness.lock");
    let off = hub(&spec, &limits, PinMode::Off, None);
    let pinned = hub(&spec, &limits, PinMode::Tofu, Some(&lock));
    // The first connect pins every tool (trust on first use) and writes the file.
    let first = connect(&pinned, tools, tools).await;
    let size = std::fs::metadata(&lock).map(|m| m.len()).unwrap_or(0);
    let (mut base, mut cached, mut fresh) = (Vec::new(), Vec::new(), Vec::new());
    for round in 0..ROUNDS {
        let a = connect(&off, tools, 0).await;
        let b = connect(&pinned, tools, 0).await;
        // A file changed on disk is read and parsed again, as a headless
        // command reads it once per process (the hub's book is fixed, so the
        // bench changes the file's stamp rather than the book).
        touch(&lock, round);
        let c = connect(&pinned, tools, 0).await;
        if round >= WARM_UP {
            base.push(a);
            cached.push(b);
            fresh.push(c);
        }
    }
    off.shutdown().await;
    pinned.shutdown().await;
    let kind = if distinct {
        "all schemas distinct"
    } else {
        "one shared schema"
    };
    // The fastest round of each kind is the one least disturbed by other
    // work on the machine: its ratio is printed next to the medians'.
    let fastest = |v: &[Duration]| v.iter().min().copied().unwrap_or_default();
    let (base_min, cached_min, fresh_min) = (fastest(&base), fastest(&cached), fastest(&fresh));
    let (base, cached, fresh) = (stats(base), stats(cached), stats(fresh));
    let ratio = |x: Duration| x.as_secs_f64() / base.median.as_secs_f64();
    let ratio_min = |x: Duration| x.as_secs_f64() / base_min.as_secs_f64();
    println!("{tools} tools, {kind}: pinned definitions on the whole connect");
    println!(
        "  (e) pin = \"off\" median {:>10}   (f) every tool pinned, lock file read before median {:>10}   ratio {:.3}  (target ≤ 1.05)",
        ms(base.median),
        ms(cached.median),
        ratio(cached.median)
    );
    println!(
        "      fastest rounds: (e) {:>10}   (f) {:>10}   ratio {:.3}   (g) {:>10}   ratio {:.3}",
        ms(base_min),
        ms(cached_min),
        ratio_min(cached_min),
        ms(fresh_min),
        ratio_min(fresh_min)
    );
    println!(
        "  (g) every tool pinned, lock file read and parsed in this connect median {:>10}   ratio {:.3}",
        ms(fresh.median),
        ratio(fresh.median)
    );
    println!(
        "  first connect, pinning every tool and writing the lock file ({:.1} MiB): {}",
        size as f64 / 1048576.0,
        ms(first)
    );
}

fn hub(spec: &ServerSpec, limits: &Limits, pin: PinMode, lock: Option<&Path>) -> Hub {
    let spec = ServerSpec {
        pin,
        ..spec.clone()
    };
    let hub = Hub::builder(
        vec![spec],
        limits.clone(),
        Vars::new(PathBuf::from(BIN)),
        EventSink::discard(),
    );
    match lock {
        Some(lock) => hub.pin_book(PinBook::file(lock.to_path_buf())),
        None => hub,
    }
    .build()
}

/// Gives the lock file a modification time of its own for `round`, so the
/// next load finds it changed.
fn touch(lock: &Path, round: usize) {
    let at = std::time::SystemTime::UNIX_EPOCH + Duration::from_secs(1_000_000 + round as u64);
    std::fs::OpenOptions::new()
        .write(true)
        .open(lock)
        .and_then(|f| f.set_modified(at))
        .expect("touch the lock file");
}

/// One whole connect (until the tools are registered), then disconnect and
/// wait for the server to be gone, so rounds do not overlap.
async fn connect(hub: &Hub, tools: usize, created: usize) -> Duration {
    let t = Instant::now();
    let report = hub.connect("big").await.expect("connect");
    let elapsed = t.elapsed();
    assert_eq!(
        report.outcome.as_ref().map(Vec::len).ok(),
        Some(tools),
        "{:?}",
        report.outcome.err()
    );
    assert_eq!(report.pins.created.len(), created);
    let conn = mcp_harness::mcp::bench::connection_of(
        hub.snapshot()
            .resolve("mcp__big__tool_00000")
            .expect("tool"),
    );
    hub.disconnect("big").expect("disconnect");
    conn.finished().await;
    elapsed
}
