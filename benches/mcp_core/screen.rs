//! The poisoning screen's cost at connect (issue 24: ≤ 1 ms per 100 tools):
//! the whole connect of a real 100-tool server (the screen included, as it
//! runs in exposure) and the screen alone over the very definitions that
//! connect listed, interleaved in one run; then the screen alone over 100
//! wordy definitions (a long description and four described properties each,
//! the shape of real servers' tools), which the generated ones are not.

use std::time::{Duration, Instant};

use mcp_harness::mcp::published::{Position, PublishedTool};
use mcp_harness::mcp::{EventSink, Hub, Vars, screen};
use serde_json::json;

use super::large::big_server;
use super::{BIN, ms, stats, us};

const ROUNDS: usize = 22;
const WARM_UP: usize = 2;
const SCREENS_PER_ROUND: usize = 20;

pub async fn screen_cost() {
    let tools = 100;
    let (spec, limits) = big_server(tools, true);
    let hub = Hub::builder(
        vec![spec],
        limits,
        Vars::new(std::path::PathBuf::from(BIN)),
        EventSink::discard(),
    )
    .build();
    let (mut connects, mut screens) = (Vec::new(), Vec::new());
    for round in 0..ROUNDS {
        let t = Instant::now();
        let report = hub.connect("big").await.expect("connect");
        let elapsed = t.elapsed();
        assert_eq!(report.outcome.as_ref().map(Vec::len).ok(), Some(tools));
        let listed = report.published.to_vec();
        let conn = mcp_harness::mcp::bench::connection_of(
            hub.snapshot()
                .resolve("mcp__big__tool_00000")
                .expect("tool"),
        );
        hub.disconnect("big").expect("disconnect");
        conn.finished().await;
        let screened = screen_of(&listed);
        if round >= WARM_UP {
            connects.push(elapsed);
            screens.push(screened);
        }
    }
    hub.shutdown().await;
    let (connect, screen) = (stats(connects), stats(screens));
    println!("poisoning screen, {tools} tools (generated definitions, all schemas distinct)");
    println!(
        "  whole connect median {:>10}   screen of its listing median {:>10} (p99 {})   ratio {:.4}  (target ≤ 1 ms per 100 tools)",
        ms(connect.median),
        us(screen.median),
        us(screen.p99),
        screen.median.as_secs_f64() / connect.median.as_secs_f64()
    );
    let wordy = wordy(tools);
    let samples: Vec<Duration> = (0..ROUNDS).map(|_| screen_of(&wordy)).collect();
    let wordy_stats = stats(samples[WARM_UP..].to_vec());
    println!(
        "  screen of {tools} wordy definitions median {:>10} (p99 {})   ratio to that connect {:.4}",
        us(wordy_stats.median),
        us(wordy_stats.p99),
        wordy_stats.median.as_secs_f64() / connect.median.as_secs_f64()
    );
}

/// One screen of `tools`: the mean of a few passes (one is tens of µs).
fn screen_of(tools: &[PublishedTool]) -> Duration {
    let t = Instant::now();
    for _ in 0..SCREENS_PER_ROUND {
        let found = screen::listing(std::hint::black_box(tools));
        assert!(found.iter().all(Vec::is_empty), "nothing to flag here");
    }
    t.elapsed() / SCREENS_PER_ROUND as u32
}

fn wordy(tools: usize) -> Vec<PublishedTool> {
    (0..tools)
        .map(|i| {
            let described = |what: &str| {
                json!({"type": "string", "description": format!(
                    "The {what} to use for this request. Optional; when it is left out the \
                     server picks a sensible default, as described in its documentation.")})
            };
            let definition = json!({
                "name": format!("tool_{i:03}"),
                "title": format!("Tool number {i}"),
                "description": "Fetches a URL from the internet and optionally extracts its \
                    contents as markdown.\n\nAlthough originally you did not have internet access, \
                    and were advised to refuse and tell the user this, this tool now grants you \
                    internet access. Now you can fetch the most up-to-date information and let \
                    the user know that. Read the complete contents of a file as text; only works \
                    within allowed directories.",
                "inputSchema": {"type": "object", "properties": {
                    "url": described("url"), "path": described("path"),
                    "format": described("format"), "locale": described("locale")
                }, "required": ["url"]},
                "annotations": {"readOnlyHint": true, "title": "Fetch"}
            });
            PublishedTool::from_json(&definition, Position { page: 1, index: i }).expect("tool")
        })
        .collect()
}
