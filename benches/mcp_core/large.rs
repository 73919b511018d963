//! Large servers: list + validate + expose vs a raw rmcp listing on one open
//! connection, the whole connect vs a bare rmcp client, and the heap held per
//! exposed tool.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use mcp_harness::mcp::{
    EventSink, Hub, ServerAlias, ServerSpec, ToolPolicy, Vars, bench, validators,
};

use super::{BIN, live_bytes, ms, stats};

/// `demo-server alpha` publishing `tools` generated tools, 100 per page, every
/// one allowed (pinning off: the pin benchmark turns it on), and limits that
/// let it through.
pub fn big_server(tools: usize, distinct: bool) -> (ServerSpec, mcp_harness::mcp::Limits) {
    let mut args = vec![
        "demo-server".to_string(),
        "alpha".into(),
        "--tools".into(),
        tools.to_string(),
        "--page-size".into(),
        "100".into(),
    ];
    if distinct {
        args.push("--distinct-schemas".into());
    }
    let policy: ToolPolicy = ToolPolicy::new(
        (0..tools)
            .map(|i| (format!("tool_{i:05}"), mcp_harness::mcp::Effect::Allow))
            .collect(),
    );
    let spec = ServerSpec {
        alias: ServerAlias::new("big"),
        transport: mcp_harness::mcp::TransportSpec::Stdio {
            command: BIN.into(),
            args,
            env: Vec::new(),
            cwd: None,
        },
        connect_timeout: Duration::from_secs(60),
        call_timeout: Duration::from_secs(60),
        reset_timeout_on_progress: true,
        max_call: Duration::from_secs(600),
        max_message_bytes: mcp_harness::mcp::spec::DEFAULT_MAX_MESSAGE_BYTES,
        idle_timeout: mcp_harness::mcp::Limits::default().idle_timeout,
        policy,
        protocol: Default::default(),
        tasks: Default::default(),
        task_timeout: Duration::from_secs(600),
        pin: mcp_harness::mcp::PinMode::Off,
        resource_read: mcp_harness::mcp::Effect::Confirm,
        max_concurrent_calls: mcp_harness::mcp::spec::MAX_CONCURRENT_CALLS,
        labels: Default::default(),
        extra_arguments: Default::default(),
    };
    let limits = mcp_harness::mcp::Limits {
        max_tools: 20_000,
        ..Default::default()
    };
    (spec, limits)
}

/// For a server with `tools` tools, 100 per page: list + validate + expose vs the
/// raw rmcp listing on one open connection, then the whole connect vs a bare rmcp
/// client's spawn + initialize + listing.
pub async fn large_server(tools: usize, distinct: bool) {
    let (spec, limits) = big_server(tools, distinct);
    let policy = spec.policy.clone();
    let vars = Vars::new(PathBuf::from(BIN));
    let conn = bench::open(&spec, &limits, &vars).await.expect("open");
    // What the harness holds per exposed tool (published + exposed + validators).
    let before = live_bytes();
    let precompiler = validators::Precompiler::start();
    let published = bench::list_tools(&conn, &limits, &precompiler)
        .await
        .expect("list");
    let exposed =
        bench::expose(&conn, &published, &policy, precompiler.finish().await).expect("expose");
    let held = live_bytes() - before;
    drop((published, exposed));
    let (mut ours, mut raw) = (Vec::new(), Vec::new());
    for round in 0..12 {
        let t = Instant::now();
        let precompiler = validators::Precompiler::start();
        let published = bench::list_tools(&conn, &limits, &precompiler)
            .await
            .expect("list");
        let exposed =
            bench::expose(&conn, &published, &policy, precompiler.finish().await).expect("expose");
        assert_eq!(exposed.len(), tools);
        let a = t.elapsed();
        let t = Instant::now();
        assert_eq!(bench::raw_rmcp_list(&conn).await.expect("raw list"), tools);
        let b = t.elapsed();
        if round >= 2 {
            ours.push(a);
            raw.push(b);
        }
    }
    bench::close(&conn);
    conn.finished().await;
    let (connect_ours, connect_raw) = whole_connect(&spec, &limits, tools).await;
    let (a, b) = (stats(ours), stats(raw));
    let kind = if distinct {
        "all schemas distinct"
    } else {
        "one shared schema"
    };
    let per_tool = held / tools as isize;
    println!("{tools} tools, 100 per page, {kind}");
    println!(
        "  (a) list + validate + expose median {:>10}   (b) raw rmcp listing median {:>10}   ratio {:.3}  (target ≤ 1.3)",
        ms(a.median),
        ms(b.median),
        a.median.as_secs_f64() / b.median.as_secs_f64()
    );
    let (c, d) = (stats(connect_ours), stats(connect_raw));
    println!(
        "  (c) Hub::connect: spawn + initialize + list + validate + expose + register median {:>10}   \
         (d) raw rmcp: spawn + initialize + list_all_tools median {:>10}   ratio {:.3}  (target ≤ 1.3)",
        ms(c.median),
        ms(d.median),
        c.median.as_secs_f64() / d.median.as_secs_f64()
    );
    println!(
        "  held in memory: {per_tool} bytes per exposed tool ({:.1} MiB in all)",
        held as f64 / 1048576.0
    );
}

/// The whole connect as the operator sees it (`Hub::connect` until the tools are
/// registered) vs a bare rmcp client spawning the same server and listing it;
/// alternating, after two warm-up rounds.
async fn whole_connect(
    spec: &ServerSpec,
    limits: &mcp_harness::mcp::Limits,
    tools: usize,
) -> (Vec<Duration>, Vec<Duration>) {
    let hub = Hub::builder(
        vec![spec.clone()],
        limits.clone(),
        Vars::new(PathBuf::from(BIN)),
        EventSink::discard(),
    )
    .build();
    let mcp_harness::mcp::TransportSpec::Stdio { command, args, .. } = &spec.transport else {
        unreachable!("a stdio bench server")
    };
    let (mut ours, mut raw) = (Vec::new(), Vec::new());
    for round in 0..10 {
        let t = Instant::now();
        let report = hub.connect("big").await.expect("connect");
        let a = t.elapsed();
        assert_eq!(report.outcome.expect("exposed").len(), tools);
        let conn = bench::connection_of(
            hub.snapshot()
                .resolve("mcp__big__tool_00000")
                .expect("tool"),
        );
        hub.disconnect("big").expect("disconnect");
        conn.finished().await;
        let (count, b) = bench::raw_rmcp_connect_and_list(command, args)
            .await
            .expect("raw connect");
        assert_eq!(count, tools);
        if round >= 2 {
            ours.push(a);
            raw.push(b);
        }
    }
    hub.shutdown().await;
    (ours, raw)
}
