//! The whole connect beside a bare rmcp client, with and without pins, in one
//! run (`BENCH_ONLY=connect`): for 1,000 and 10,000 tools (one shared schema,
//! then every schema distinct), each round connects three ways — `Hub::connect`
//! with `pin = "off"`, `Hub::connect` with every tool pinned (lock file read
//! before, as in a TUI reconnect), and a bare rmcp client (spawn, `initialize`,
//! `list_all_tools`) — rotating which goes first. Wall time and this process's
//! CPU (user + system, `getrusage(RUSAGE_SELF)`: the servers and the shim are
//! other processes) per connect.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use mcp_harness::mcp::{EventSink, Hub, PinBook, PinMode, ServerSpec, Vars, bench};

use super::large::big_server;
use super::{BIN, ms, stats};

const ROUNDS: usize = 12;
const WARM_UP: usize = 2;

/// CPU time of this process so far (every thread).
fn cpu() -> Duration {
    use nix::sys::resource::{UsageWho, getrusage};
    let Ok(usage) = getrusage(UsageWho::RUSAGE_SELF) else {
        return Duration::ZERO;
    };
    let micros = |t: nix::sys::time::TimeVal| {
        Duration::from_secs(t.tv_sec().max(0) as u64)
            + Duration::from_micros(t.tv_usec().max(0) as u64)
    };
    micros(usage.user_time()) + micros(usage.system_time())
}

#[derive(Default)]
struct Samples {
    wall: Vec<Duration>,
    cpu: Vec<Duration>,
}

impl Samples {
    fn push(&mut self, (wall, cpu): (Duration, Duration)) {
        self.wall.push(wall);
        self.cpu.push(cpu);
    }
}

pub async fn connect_ratios(tools: usize, distinct: bool) {
    let (spec, limits) = big_server(tools, distinct);
    let dir = tempfile::tempdir().expect("temp dir");
    let lock = dir.path().join("mcp-harness.lock");
    let hub = |pin: PinMode| {
        let hub = Hub::builder(
            vec![ServerSpec {
                pin,
                ..spec.clone()
            }],
            limits.clone(),
            Vars::new(PathBuf::from(BIN)),
            EventSink::discard(),
        );
        if pin != PinMode::Off {
            hub.pin_book(PinBook::file(lock.clone())).build()
        } else {
            hub.build()
        }
    };
    let (off, pinned) = (hub(PinMode::Off), hub(PinMode::Tofu));
    let mcp_harness::mcp::TransportSpec::Stdio { command, args, .. } = &spec.transport else {
        unreachable!("a stdio bench server")
    };
    // The first pinned connect writes every pin (trust on first use).
    connect(&pinned, tools).await;
    let (mut ours, mut with_pins, mut raw) =
        (Samples::default(), Samples::default(), Samples::default());
    for round in 0..ROUNDS {
        let mut three = [None, None, None];
        for k in 0..3 {
            let which = (round + k) % 3;
            three[which] = Some(match which {
                0 => connect(&off, tools).await,
                1 => connect(&pinned, tools).await,
                _ => {
                    let before = cpu();
                    let (count, took) = bench::raw_rmcp_connect_and_list(command, args)
                        .await
                        .expect("raw connect");
                    assert_eq!(count, tools);
                    (took, cpu().saturating_sub(before))
                }
            });
        }
        if round >= WARM_UP {
            let [a, b, c] = three.map(|s| s.expect("measured"));
            ours.push(a);
            with_pins.push(b);
            raw.push(c);
        }
    }
    off.shutdown().await;
    pinned.shutdown().await;
    let kind = if distinct {
        "every schema distinct"
    } else {
        "one shared schema"
    };
    let median = |v: &[Duration]| stats(v.to_vec()).median;
    let (a, b, c) = (
        median(&ours.wall),
        median(&with_pins.wall),
        median(&raw.wall),
    );
    let r = |x: Duration, y: Duration| x.as_secs_f64() / y.as_secs_f64();
    println!(
        "{tools} tools, 100 per page, {kind}: the whole connect, {ROUNDS} rounds after {WARM_UP} warm-ups"
    );
    println!(
        "  (h) Hub::connect pin=off median {:>10}  (p) pinned median {:>10}  (r) bare rmcp median {:>10}",
        ms(a),
        ms(b),
        ms(c)
    );
    println!(
        "  ratio (h)/(r) {:.3} (target ≤ 1.3)   (p)/(h) {:.3} (target ≤ 1.05)   (p)/(r) {:.3}",
        r(a, c),
        r(b, a),
        r(b, c)
    );
    let fastest = |v: &[Duration]| v.iter().min().copied().unwrap_or_default();
    let (fa, fb, fc) = (
        fastest(&ours.wall),
        fastest(&with_pins.wall),
        fastest(&raw.wall),
    );
    println!(
        "  fastest rounds: (h) {:>10} (p) {:>10} (r) {:>10}   (h)/(r) {:.3}   (p)/(h) {:.3}",
        ms(fa),
        ms(fb),
        ms(fc),
        r(fa, fc),
        r(fb, fa)
    );
    println!(
        "  CPU of this process per connect (median): (h) {:>10} (p) {:>10} (r) {:>10}   (h)/(r) {:.2}",
        ms(median(&ours.cpu)),
        ms(median(&with_pins.cpu)),
        ms(median(&raw.cpu)),
        r(median(&ours.cpu), median(&raw.cpu))
    );
}

/// One whole connect (until the tools are registered), then disconnect and
/// wait for the server to be gone, so rounds do not overlap.
async fn connect(hub: &Hub, tools: usize) -> (Duration, Duration) {
    let before = cpu();
    let t = Instant::now();
    let report = hub.connect("big").await.expect("connect");
    let elapsed = t.elapsed();
    let spent = cpu().saturating_sub(before);
    assert_eq!(
        report.outcome.as_ref().map(Vec::len).ok(),
        Some(tools),
        "{:?}",
        report.outcome.err()
    );
    let conn = bench::connection_of(
        hub.snapshot()
            .resolve("mcp__big__tool_00000")
            .expect("tool"),
    );
    hub.disconnect("big").expect("disconnect");
    conn.finished().await;
    (elapsed, spent)
}
