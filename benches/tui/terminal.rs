//! The real binary in a terminal (tmux) with two demo servers: idle cost over
//! 10 s (CPU, resident memory) and start-up (process start to the first frame
//! drawn, vs `mcp-harness --version`).

use std::process::Command;
use std::time::{Duration, Instant, SystemTime};

use super::{BIN, demo_config, median, ms};

struct Tmux(String);

impl Tmux {
    fn run(&self, args: &[&str]) -> String {
        let out = Command::new("tmux")
            .arg("-L")
            .arg(&self.0)
            .args(args)
            .output()
            .expect("tmux");
        String::from_utf8_lossy(&out.stdout).into_owned()
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        self.run(&["kill-server"]);
    }
}

fn cpu_ns(pid: u32) -> u64 {
    std::fs::read_dir(format!("/proc/{pid}/task"))
        .map(|tasks| {
            tasks
                .flatten()
                .filter_map(|t| std::fs::read_to_string(t.path().join("schedstat")).ok())
                .filter_map(|s| {
                    s.split_whitespace()
                        .next()
                        .and_then(|n| n.parse::<u64>().ok())
                })
                .sum()
        })
        .unwrap_or(0)
}

fn rss_kb(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmRSS"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        })
        .unwrap_or(0)
}

fn harness_pid() -> Option<u32> {
    std::fs::read_dir("/proc").ok()?.flatten().find_map(|e| {
        let pid: u32 = e.file_name().to_string_lossy().parse().ok()?;
        let cmdline = std::fs::read(e.path().join("cmdline")).ok()?;
        let args: Vec<&[u8]> = cmdline
            .split(|b| *b == 0)
            .filter(|a| !a.is_empty())
            .collect();
        (args.len() == 3 && args[0] == BIN.as_bytes() && args[1] == b"--config").then_some(pid)
    })
}

/// The real binary in tmux: start-up to the first frame, then idle cost.
pub fn real_terminal() {
    let dir = tempfile::tempdir().expect("tempdir");
    let config = dir.path().join("config.toml");
    std::fs::write(&config, demo_config()).expect("config");
    let data = dir.path().join("data");
    let log = data.join("mcp-harness/mcp-harness.log");
    // Baseline: the same binary doing the least it can (print its version).
    let mut versions = Vec::new();
    for _ in 0..10 {
        let t = Instant::now();
        Command::new(BIN)
            .arg("--version")
            .output()
            .expect("version");
        versions.push(t.elapsed());
    }
    let tmux = Tmux(format!("bench-{}", std::process::id()));
    let command = format!(
        "env XDG_DATA_HOME={} XDG_CONFIG_HOME={} {BIN} --config {}",
        data.display(),
        dir.path().display(),
        config.display()
    );
    let spawned = SystemTime::now();
    tmux.run(&[
        "new-session",
        "-d",
        "-s",
        "b",
        "-x",
        "120",
        "-y",
        "40",
        &command,
    ]);
    let deadline = Instant::now() + Duration::from_secs(30);
    let first_frame = loop {
        let text = std::fs::read_to_string(&log).unwrap_or_default();
        if let Some(line) = text.lines().find(|l| l.contains("first frame drawn")) {
            let stamp = line.split_whitespace().next().unwrap_or_default();
            break chrono::DateTime::parse_from_rfc3339(stamp).ok();
        }
        assert!(Instant::now() < deadline, "no first frame logged");
        std::thread::sleep(Duration::from_millis(5));
    };
    let started = first_frame
        .and_then(|t| SystemTime::from(t).duration_since(spawned).ok())
        .unwrap_or_default();
    println!("start-up: process start to the first frame drawn (tmux, 120×40)");
    println!(
        "  {}  vs `mcp-harness --version` start to exit (median of 10): {}  (target < 100 ms)",
        ms(started),
        ms(median(versions))
    );
    // Connect both servers from the side panel, then stay idle.
    tmux.run(&["send-keys", "-t", "b", "Tab", "Tab", "c", "j", "c"]);
    let deadline = Instant::now() + Duration::from_secs(30);
    while !tmux
        .run(&["capture-pane", "-p", "-t", "b"])
        .contains("servers 2/2 ready")
    {
        assert!(Instant::now() < deadline, "servers did not connect");
        std::thread::sleep(Duration::from_millis(50));
    }
    // Past every status message and arming moment: really idle.
    std::thread::sleep(Duration::from_secs(8));
    let pid = harness_pid().expect("harness pid");
    let before = cpu_ns(pid);
    std::thread::sleep(Duration::from_secs(10));
    let used = cpu_ns(pid) - before;
    println!(
        "idle cost with two connected servers, 10 s (real binary in tmux, the Servers pane focused)"
    );
    println!(
        "  CPU {:.3} ms (target < 50 ms) · resident {} KiB (target < 40 MiB)",
        used as f64 / 1e6,
        rss_kb(pid)
    );
    tmux.run(&["send-keys", "-t", "b", "C-q"]);
    std::thread::sleep(Duration::from_secs(2));
}
