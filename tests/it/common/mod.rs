//! Shared helpers of the integration tests: the real binary, temp configs, and a
//! leak detector that finds every process a test started by a unique tag in its
//! command line (servers and the grandchildren they spawn carry it).
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

pub const BIN: &str = env!("CARGO_BIN_EXE_mcp-harness");

/// Demo-server faults of a server that is hard to get rid of: it ignores
/// SIGTERM and leaves a grandchild in its group and one that called setsid().
pub const STUBBORN: [&str; 6] = [
    "--fault",
    "ignore-term",
    "--fault",
    "grandchild",
    "--fault",
    "grandchild-setsid",
];

/// A temp dir with isolated config/data dirs and a unique tag for this test.
pub struct TestEnv {
    pub dir: tempfile::TempDir,
    pub tag: String,
}

impl TestEnv {
    pub fn new() -> Self {
        // Library-level tests run the MCP layer in the test process: servers go
        // under the built binary's `__shim`, as they do under the real binary.
        mcp_harness::mcp::process::use_supervisor(PathBuf::from(BIN));
        static N: AtomicU32 = AtomicU32::new(0);
        let tag = format!(
            "mcph-test-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        );
        Self {
            dir: tempfile::tempdir().expect("tempdir"),
            tag,
        }
    }

    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// Writes `config.toml`; `{BIN}` and `{TAG}` are substituted.
    pub fn config(&self, text: &str) -> PathBuf {
        let path = self.path("config.toml");
        std::fs::write(&path, self.fill(text)).expect("write config");
        path
    }

    pub fn fill(&self, text: &str) -> String {
        text.replace("{BIN}", BIN)
            .replace("{TAG}", &self.tag)
            .replace("{DIR}", &self.dir.path().to_string_lossy())
    }

    /// `[servers.NAME]` for a demo server with extra args (tagged).
    pub fn demo(&self, alias: &str, server: &str, extra: &[&str]) -> String {
        let mut args = vec![
            format!("\"demo-server\""),
            format!("\"{server}\""),
            "\"--tag\"".into(),
            "\"{TAG}\"".into(),
        ];
        args.extend(extra.iter().map(|a| format!("{a:?}")));
        format!(
            "[servers.{alias}]\ncommand = \"{{BIN}}\"\nargs = [{}]\n",
            args.join(", ")
        )
    }

    /// Runs the harness with this env's config and isolated XDG dirs.
    pub fn run(&self, args: &[&str]) -> Output {
        self.command(args).output().expect("run mcp-harness")
    }

    pub fn command(&self, args: &[&str]) -> Command {
        let mut cmd = Command::new(BIN);
        cmd.arg("--config").arg(self.path("config.toml")).args(args);
        isolate(&mut cmd, self.dir.path());
        cmd
    }

    /// Every live process whose command line carries this test's tag.
    pub fn tagged_processes(&self) -> Vec<u32> {
        tagged_processes(&self.tag)
    }

    /// Waits (generously) until no tagged process is left; panics with the survivors.
    pub fn assert_no_leaks(&self) {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let alive = self.tagged_processes();
            if alive.is_empty() {
                return;
            }
            if Instant::now() > deadline {
                panic!("processes of test {} still alive: {alive:?}", self.tag);
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for TestEnv {
    fn drop(&mut self) {
        // Never leave processes behind, even when the test failed.
        for pid in self.tagged_processes() {
            let _ = Command::new("kill").args(["-9", &pid.to_string()]).status();
        }
    }
}

/// Config and data dirs inside the test dir, so a developer's own config and
/// logs are never touched.
pub fn isolate(cmd: &mut Command, dir: &Path) {
    cmd.env("XDG_CONFIG_HOME", dir.join("xdg-config"))
        .env("XDG_DATA_HOME", dir.join("xdg-data"))
        .env("HOME", dir);
}

pub fn tagged_processes(tag: &str) -> Vec<u32> {
    let mut found = Vec::new();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return found;
    };
    for entry in entries.flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(cmdline) = std::fs::read(entry.path().join("cmdline")) else {
            continue;
        };
        // Servers that take no extra argument carry the tag in their environment
        // (`MCPH_TEST_TAG`), which their own children inherit too.
        let environ = std::fs::read(entry.path().join("environ")).unwrap_or_default();
        let env_tag = format!("MCPH_TEST_TAG={tag}");
        let tagged = cmdline.split(|b| *b == 0).any(|arg| arg == tag.as_bytes())
            || environ
                .split(|b| *b == 0)
                .any(|var| var == env_tag.as_bytes());
        if tagged && !is_zombie(pid) {
            found.push(pid);
        }
    }
    found
}

fn is_zombie(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| {
            s.rsplit(')')
                .next()
                .map(|rest| rest.trim_start().starts_with('Z'))
        })
        .unwrap_or(false)
}

pub fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

pub fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// The single JSON line a `--json` command printed.
pub fn json(out: &Output) -> serde_json::Value {
    let text = stdout(out);
    serde_json::from_str(text.trim())
        .unwrap_or_else(|e| panic!("not JSON ({e}): {text}\nstderr: {}", stderr(out)))
}

/// Calls and cancellations in a `--record` file.
pub fn records(path: &Path) -> Vec<serde_json::Value> {
    all_records(path)
        .into_iter()
        .filter(|r| r["event"] != "list")
        .collect()
}

/// Every line of a `--record` file, `tools/list` requests included.
pub fn all_records(path: &Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}
pub mod headless;
pub mod hubs;
pub mod interop;
pub mod lead_session;
pub mod model_run;
pub mod model_stub;
pub mod oauth_as;
pub mod otlp;
pub mod tmux;
