//! One call, one identity (issue 20, deliverable 1) and a reply's calls run
//! together (issue 22, deliverable 4), as `run --json` and the session's audit
//! log tell it, with the scripted model and real demo server processes: two
//! calls of one task tool in flight at once keep their own task statuses and
//! results (both revisions), two calls of one tool keep their own progress,
//! five slow calls overlap, and `max_concurrent_calls` holds the rest back.

use std::collections::HashMap;

use serde_json::Value;

use crate::common::TestEnv;
use crate::common::headless::{of, run};

const POLICY: &str = "[servers.s.tools]\nlookup = \"allow\"\nset = \"allow\"\nreset = \"allow\"\nfail = \"allow\"\nslow = \"allow\"\nresearch = \"allow\"\nguarded_set = \"allow\"\n";

/// `run --json` with a scenario that connects `s` and then makes `calls`
/// (TOML inline tables) in one reply; `server` is more of `[servers.s]`.
fn run_reply(env: &TestEnv, mode: &str, server: &str, calls: &[&str]) -> Vec<Value> {
    let scenario = format!(
        "delay_ms = 1\n[[act]]\n\
         [[act.turn]]\ntext = \"connect\"\ntool_calls = [{{ name = \"connect_mcp\", arguments = {{ alias = \"s\" }} }}]\n\
         [[act.turn]]\ntext = \"together\"\ntool_calls = [{}]\n\
         [[act.turn]]\ntext = \"done\"\n",
        calls.join(", ")
    );
    std::fs::write(env.path("scenario.toml"), scenario).unwrap();
    let demo = env.demo("s", "alpha", &["--protocol", mode, "--extras"]);
    env.config(&format!(
        "[model]\nprovider = \"scripted\"\nscenario = \"{{DIR}}/scenario.toml\"\n{demo}{server}{POLICY}"
    ));
    let (out, events) = run(env, &["--prompt", "go", "--json"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        crate::common::stderr(&out)
    );
    events
}

fn index(events: &[Value], event: &str, id: &Value) -> usize {
    events
        .iter()
        .position(|e| e["event"] == event && e["id"] == *id)
        .unwrap_or_else(|| panic!("no {event} of {id}: {events:#?}"))
}

/// The calls of `name` in the order they were made: their ids.
fn ids(events: &[Value], name: &str) -> Vec<Value> {
    of(events, "tool_call")
        .into_iter()
        .filter(|c| c["name"] == name)
        .map(|c| c["id"].clone())
        .collect()
}

fn audit(env: &TestEnv, events: &[Value]) -> Vec<Value> {
    let session = events.last().unwrap()["session"].as_str().unwrap();
    std::fs::read_to_string(
        env.path("xdg-data/mcp-harness/sessions")
            .join(session)
            .join("audit.jsonl"),
    )
    .unwrap()
    .lines()
    .map(|l| serde_json::from_str(l).expect("a JSON line"))
    .collect()
}

/// Each call's task records (`id_field` names the call): one task per call,
/// `working` first and `completed` last; the two calls' tasks differ.
fn assert_own_tasks(records: &[&Value], id_field: &str, calls: &[Value], what: &str) {
    let mut tasks: HashMap<String, Vec<&Value>> = HashMap::new();
    for r in records {
        assert!(
            calls.contains(&r[id_field]),
            "{what}: a task of no call: {r}"
        );
        tasks.entry(r[id_field].to_string()).or_default().push(r);
    }
    let mut task_ids = Vec::new();
    for call in calls {
        let own = tasks
            .get(&call.to_string())
            .unwrap_or_else(|| panic!("{what}: no task of {call}: {records:#?}"));
        assert_eq!(own.first().unwrap()["state"], "working", "{what}: {own:#?}");
        assert_eq!(
            own.last().unwrap()["state"],
            "completed",
            "{what}: {own:#?}"
        );
        let task = &own[0]["task"];
        assert!(own.iter().all(|r| r["task"] == *task), "{what}: {own:#?}");
        task_ids.push(task.clone());
    }
    assert_ne!(task_ids[0], task_ids[1], "{what}: two calls, two tasks");
}

#[test]
fn two_task_calls_in_one_reply_keep_their_own_statuses_and_results() {
    for mode in ["2026-07-28", "2025-11-25"] {
        let env = TestEnv::new();
        let events = run_reply(
            &env,
            mode,
            "",
            &[
                "{ name = \"mcp__s__research\", arguments = { topic = \"tides\", seconds = 2.0 } }",
                "{ name = \"mcp__s__research\", arguments = { topic = \"winds\", seconds = 0.4 } }",
            ],
        );
        let calls = ids(&events, "mcp__s__research");
        assert_eq!(calls.len(), 2, "{mode}: {events:#?}");
        let (tides, winds) = (&calls[0], &calls[1]);
        // Both in flight: the second started before the first ended, and
        // (shorter) ended first.
        assert!(index(&events, "tool_call", winds) < index(&events, "tool_result", tides));
        assert!(index(&events, "tool_result", winds) < index(&events, "tool_result", tides));
        for (id, topic) in [(tides, "tides"), (winds, "winds")] {
            let result = &events[index(&events, "tool_result", id)];
            assert_eq!(result["ok"], true, "{mode}: {result}");
            let content = result["content"].as_str().unwrap_or("");
            assert!(
                content.contains(&format!("research on {topic}")),
                "{mode}: {result}"
            );
            // Its statuses come before its result.
            let last_status = events
                .iter()
                .rposition(|e| e["event"] == "task" && e["id"] == *id)
                .unwrap_or_else(|| panic!("{mode}: no task event of {id}"));
            assert!(last_status < index(&events, "tool_result", id), "{mode}");
        }
        assert_own_tasks(
            &of(&events, "task"),
            "id",
            &calls,
            &format!("{mode} run --json"),
        );
        let audit = audit(&env, &events);
        let tasks: Vec<&Value> = audit.iter().filter(|r| r["event"] == "task").collect();
        assert_own_tasks(&tasks, "call", &calls, &format!("{mode} audit log"));
        env.assert_no_leaks();
    }
}

/// Two calls of `slow` (it reports progress) in one reply, with different
/// step counts: each call's progress events carry its own total.
#[test]
fn two_calls_of_one_tool_keep_their_own_progress() {
    let env = TestEnv::new();
    let events = run_reply(
        &env,
        "2025-11-25",
        "",
        &[
            "{ name = \"mcp__s__slow\", arguments = { seconds = 1.2, steps = 3 } }",
            "{ name = \"mcp__s__slow\", arguments = { seconds = 0.6, steps = 5 } }",
        ],
    );
    let calls = ids(&events, "mcp__s__slow");
    assert_eq!(calls.len(), 2, "{events:#?}");
    for (id, steps) in [(&calls[0], 3.0), (&calls[1], 5.0)] {
        let own: Vec<&Value> = of(&events, "progress")
            .into_iter()
            .filter(|p| p["id"] == *id)
            .collect();
        assert!(!own.is_empty(), "no progress of {id}: {events:#?}");
        assert!(own.iter().all(|p| p["total"] == steps), "{id}: {own:#?}");
        // Its own steps, in order. (Whether the last one arrives before the
        // result is a race in rmcp: each notification is handled in a task of
        // its own, the response is not; so nothing is asserted of the last step.)
        let seen: Vec<f64> = own.iter().filter_map(|p| p["progress"].as_f64()).collect();
        assert!(seen.windows(2).all(|w| w[0] < w[1]), "{id}: {own:#?}");
        assert!(seen.iter().all(|s| *s <= steps), "{id}: {own:#?}");
    }
    assert!(
        of(&events, "progress")
            .iter()
            .all(|p| calls.contains(&p["id"])),
        "{events:#?}"
    );
    env.assert_no_leaks();
}

/// Five 1-second calls in one reply all start before the first ends (the
/// reply takes about a second, not five; speed itself is not asserted here).
#[test]
fn a_replys_calls_run_together() {
    let env = TestEnv::new();
    let call = "{ name = \"mcp__s__slow\", arguments = { seconds = 1.0, steps = 1 } }";
    let events = run_reply(&env, "2025-11-25", "", &[call; 5]);
    let calls = ids(&events, "mcp__s__slow");
    assert_eq!(calls.len(), 5);
    let first_end = calls
        .iter()
        .map(|id| index(&events, "tool_result", id))
        .min()
        .unwrap();
    for id in &calls {
        assert!(index(&events, "tool_call", id) < first_end, "{events:#?}");
        assert_eq!(events[index(&events, "tool_result", id)]["ok"], true);
    }
    env.assert_no_leaks();
}

/// `max_concurrent_calls = 2`: of four calls in one reply, the third starts
/// only after one of the first two ended; all four run.
#[test]
fn max_concurrent_calls_holds_the_rest_back() {
    let env = TestEnv::new();
    let call = "{ name = \"mcp__s__slow\", arguments = { seconds = 0.5, steps = 1 } }";
    let events = run_reply(&env, "2025-11-25", "max_concurrent_calls = 2\n", &[call; 4]);
    let calls = ids(&events, "mcp__s__slow");
    assert_eq!(calls.len(), 4);
    let first_end = calls
        .iter()
        .map(|id| index(&events, "tool_result", id))
        .min()
        .unwrap();
    assert!(
        index(&events, "tool_call", &calls[1]) < first_end,
        "{events:#?}"
    );
    assert!(
        index(&events, "tool_call", &calls[2]) > first_end,
        "{events:#?}"
    );
    for id in &calls {
        assert_eq!(events[index(&events, "tool_result", id)]["ok"], true);
    }
    env.assert_no_leaks();
}
