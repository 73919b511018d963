//! A 2026-07-28 client of `serve --http` learns of tool-list changes the way
//! that revision says: it has no session, so it opens `subscriptions/listen`
//! and the gateway sends `notifications/tools/list_changed` on that stream
//! (after the new set is validated, and only to a client whose own set
//! changed). The client is the official Python SDK's (`mcp` 2.3, pinned in
//! `interop/`) at `mode="2026-07-28"`, `fixtures/listen_client.py`.

use std::process::{Child, Command, Stdio};
use std::sync::mpsc::Receiver;
use std::time::Duration;

use serde_json::Value;

use crate::common::interop::Interop;
use crate::common::{TestEnv, tagged_processes};
use crate::serve::{Gateway, TOKEN_A, TOKEN_B, config, lines_of};

const WAIT: Duration = Duration::from_secs(90);

/// A Python SDK client script, one JSON line per step.
pub(crate) struct Listener {
    child: Child,
    lines: Receiver<String>,
}

impl Listener {
    fn start(interop: &Interop, url: &str, token: &str) -> Self {
        Self::spawn(interop, "listen_client.py", &[url, token])
    }

    /// `fixtures/SCRIPT ARGS…` under the pinned Python SDK.
    pub(crate) fn spawn(interop: &Interop, script: &str, args: &[&str]) -> Self {
        let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/it/fixtures")
            .join(script);
        let mut child = Command::new(interop.python())
            .arg(script)
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("spawn python");
        let lines = lines_of(child.stdout.take().unwrap());
        Self { child, lines }
    }

    pub(crate) fn next(&self, what: &str) -> Value {
        let line = self
            .lines
            .recv_timeout(WAIT)
            .unwrap_or_else(|_| panic!("the Python client did not print {what}"));
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"))
    }
}

impl Drop for Listener {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn names(value: &Value) -> Vec<&str> {
    value["tools"]
        .as_array()
        .unwrap_or_else(|| panic!("no tools: {value}"))
        .iter()
        .filter_map(Value::as_str)
        .collect()
}

/// Kills the demo server (not its supervisor) whose arguments hold `which`.
fn kill_demo(env: &TestEnv, which: &str) {
    let pids: Vec<u32> = tagged_processes(&env.tag)
        .into_iter()
        .filter(|pid| {
            let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
            let args: Vec<&[u8]> = cmdline.split(|b| *b == 0).collect();
            args.contains(&which.as_bytes())
                && args.contains(&b"demo-server".as_slice())
                && !args.contains(&b"__shim".as_slice())
        })
        .collect();
    assert_eq!(pids.len(), 1, "one {which} server: {pids:?}");
    Command::new("kill")
        .args(["-9", &pids[0].to_string()])
        .status()
        .unwrap();
}

#[cfg_attr(
    mcph_no_interop,
    ignore = "npm or python3 is missing: the interop tests install the pinned servers with them (docs/src/testing.md)"
)]
#[test]
fn a_2026_07_28_client_hears_of_tool_list_changes_on_its_listen_stream() {
    let interop = Interop::get();
    let env = TestEnv::new();
    config(&env);
    let gateway = Gateway::start(&env);
    let claude = Listener::start(&interop, &gateway.url, TOKEN_A);
    let ci = Listener::start(&interop, &gateway.url, TOKEN_B);
    for (who, listener) in [("claude", &claude), ("ci", &ci)] {
        let ready = listener.next("its acknowledged subscription");
        assert_eq!(ready["protocol"], "2026-07-28", "{who}: {ready}");
        assert_eq!(ready["honored"]["toolsListChanged"], true, "{who}: {ready}");
        assert!(names(&ready).contains(&"demo_alpha__lookup"), "{ready}");
    }

    // demo_beta dies: claude's set changes, ci's (demo_alpha only) does not.
    kill_demo(&env, "beta");
    let changed = claude.next("a change event");
    assert_eq!(changed["event"], "ToolsListChanged", "{changed}");
    let now = names(&changed);
    assert!(
        now.iter().all(|n| !n.starts_with("demo_beta__")),
        "{changed}"
    );
    assert!(now.contains(&"demo_alpha__lookup"), "{changed}");

    // claude's client has left (its listen stream ended; both clients' listen
    // requests had the id `listen-1`). demo_alpha dies: now ci's set
    // changes. Its first event is this one (it lists no demo_alpha tool):
    // the earlier change was not sent to it.
    kill_demo(&env, "alpha");
    let changed = ci.next("a change event");
    assert_eq!(changed["event"], "ToolsListChanged", "{changed}");
    assert!(names(&changed).is_empty(), "{changed}");
    gateway.stop();
}
