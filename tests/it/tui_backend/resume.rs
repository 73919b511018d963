//! `--resume` in the TUI: the earlier conversation comes back on screen from the
//! transcript — here one written by the headless `run` — with the servers it
//! had connected, for the operator to reconnect.

use mcp_harness::backend;
use mcp_harness::config::{self, ConfigSource};
use mcp_harness::protocol::{BackendEvent, Decided, HistoryItem, Requester, Target};
use mcp_harness::session::SessionOptions;

use super::{next, stop};
use crate::common::TestEnv;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_headless_run_comes_back_on_screen_with_its_calls_and_servers() {
    let env = TestEnv::new();
    let alpha = env.demo("demo_alpha", "alpha", &[]);
    let beta = env.demo("demo_beta", "beta", &[]);
    let policy = "lookup = \"allow\"\nset = \"confirm\"\nreset = \"confirm\"\nfail = \"allow\"\nslow = \"allow\"\n";
    let text = format!(
        "[model]\nprovider = \"scripted\"\n{alpha}[servers.demo_alpha.tools]\n{policy}{beta}[servers.demo_beta.tools]\n{policy}"
    );
    env.config(&text);
    let out = tokio::task::block_in_place(|| {
        env.run(&["run", "--prompt", "show me the demo", "--approve", "always"])
    });
    assert!(out.status.success(), "{}", crate::common::stderr(&out));
    let config = config::parse(
        &env.fill(&text),
        ConfigSource::File(env.path("config.toml")),
    )
    .expect("config");
    let options = SessionOptions {
        resume: Some(None),
        persist: true,
        workspace: Some(env.dir.path().to_path_buf()),
        data_dir: Some(env.path("xdg-data/mcp-harness")),
    };
    let mut handle = backend::spawn(config, options).expect("backend");
    let BackendEvent::Resumed { history, connected } =
        next(&mut handle, "the earlier conversation", |e| {
            matches!(e, BackendEvent::Resumed { .. })
        })
        .await
    else {
        unreachable!()
    };
    assert_eq!(
        history.first(),
        Some(&HistoryItem::User("show me the demo".into()))
    );
    assert!(
        history.iter().any(|i| matches!(
            i,
            HistoryItem::Assistant { agent: Requester::Lead, text } if text.contains("(replay)")
        )),
        "{history:?}"
    );
    // Calls come back with their target, effect and how they ended.
    let calls: Vec<_> = history
        .iter()
        .filter_map(|i| match i {
            HistoryItem::Call(call) => Some(call),
            _ => None,
        })
        .collect();
    let beta_lookup = calls
        .iter()
        .find(|c| c.0.name == "mcp__demo_beta__lookup")
        .expect("beta's lookup");
    assert!(matches!(&beta_lookup.0.target, Target::Mcp { alias, .. } if alias == "demo_beta"));
    let outcome = beta_lookup.1.as_ref().expect("its result");
    assert!(
        outcome.ok && outcome.text.contains("demo-beta"),
        "{outcome:?}"
    );
    let early = calls
        .iter()
        .find(|c| c.1.as_ref().is_some_and(|o| !o.ok))
        .expect("a failed call");
    assert_eq!(
        early.1.as_ref().unwrap().code.as_deref(),
        Some("mcp_unknown_tool")
    );
    // Each row keeps its decision word (here from the run's own decisions).
    let decided = |name: &str| {
        calls
            .iter()
            .find(|c| c.0.name == name && c.1.as_ref().is_some_and(|o| o.ok))
            .and_then(|c| c.1.as_ref().unwrap().decided)
    };
    assert_eq!(outcome.decided, Some(Decided::AllowedByPolicy));
    assert_eq!(decided("mcp__demo_alpha__set"), Some(Decided::ApprovedOnce));
    assert_eq!(early.1.as_ref().unwrap().decided, Some(Decided::NotRun));
    // The run closed its servers as it ended: they were connected.
    assert_eq!(connected, ["demo_alpha", "demo_beta"]);
    stop(handle).await;
    env.assert_no_leaks();
}
