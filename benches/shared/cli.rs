//! What the benchmarks that drive the real binary share: its own dirs, the
//! config with the policy `mcp-harness policy` prints, knobs and ranges.

use std::path::{Path, PathBuf};
use std::process::Command;

/// `cmd` with its home, config and data dirs inside `dir`, so a developer's
/// own config and sessions are never touched.
pub fn isolated(mut cmd: Command, dir: &Path) -> Command {
    cmd.env("HOME", dir)
        .env("XDG_CONFIG_HOME", dir.join("xdg-config"))
        .env("XDG_DATA_HOME", dir.join("xdg-data"));
    cmd
}

/// Writes `dir/config.toml`: `server` (the `[servers.ALIAS]` table), the
/// policy `bin policy ALIAS` prints for what it publishes, then `extra`.
pub fn config_with_policy(
    bin: &str,
    dir: &Path,
    server: &str,
    alias: &str,
    extra: &str,
) -> PathBuf {
    let config = dir.join("config.toml");
    std::fs::write(&config, server).unwrap();
    let policy = isolated(Command::new(bin), dir)
        .args(["--config", &config.to_string_lossy(), "policy", alias])
        .output()
        .unwrap();
    assert!(
        policy.status.success(),
        "{}",
        String::from_utf8_lossy(&policy.stderr)
    );
    let policy = String::from_utf8_lossy(&policy.stdout);
    std::fs::write(&config, format!("{server}{policy}{extra}")).unwrap();
    config
}

/// The number in variable `name`, else `default`.
pub fn env_or(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// The smallest and the largest of `values`.
pub fn range(values: impl Iterator<Item = f64>) -> (f64, f64) {
    values.fold((f64::MAX, f64::MIN), |(lo, hi), v| (lo.min(v), hi.max(v)))
}
