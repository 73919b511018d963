//! Decides, at build time, which tests cannot run here, so they are reported as
//! *ignored* with the reason instead of passing without running:
//!
//! - `mcph_no_interop`: the pinned third-party servers are not installed
//!   (`.cache/interop/status` is missing). A status that says `failed` is not a
//!   skip: the tests run and fail, saying so.
//! - `mcph_no_tmux`: `tmux -V` does not run.
//!
//! `MCP_HARNESS_INTEROP=required` / `MCP_HARNESS_TMUX=required` (CI) turn the
//! skip off: the tests run and a missing tool fails them.
//!
//! Cargo re-runs this script when an input changes. A watched path that does not
//! exist would make it re-run (and the crate rebuild) on every build, so only
//! existing paths are watched: the status file once it exists, `interop/` (which
//! `interop/install.sh` touches when it finishes), and the directories of `PATH`
//! while tmux is missing (installing it changes one of them).

use std::path::{Path, PathBuf};
use std::process::Command;

fn main() {
    println!("cargo::rerun-if-changed=build.rs");
    println!("cargo::rustc-check-cfg=cfg(mcph_no_interop)");
    println!("cargo::rustc-check-cfg=cfg(mcph_no_tmux)");

    let root = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").unwrap_or_default());
    if !interop_runnable(&root) {
        println!("cargo::rustc-cfg=mcph_no_interop");
    }
    if !tmux_runnable() {
        println!("cargo::rustc-cfg=mcph_no_tmux");
    }
}

fn required(var: &str) -> bool {
    println!("cargo::rerun-if-env-changed={var}");
    std::env::var(var).is_ok_and(|v| v == "required")
}

/// Whether the interop tests should run: installed (or an install was attempted,
/// whose failure the tests report), or required.
fn interop_runnable(root: &Path) -> bool {
    let required = required("MCP_HARNESS_INTEROP");
    let interop = root.join("interop");
    if interop.is_dir() {
        println!("cargo::rerun-if-changed={}", interop.display());
    }
    let status = root.join(".cache/interop/status");
    let attempted = status.is_file();
    if attempted {
        println!("cargo::rerun-if-changed={}", status.display());
    }
    attempted || required
}

/// Whether the tmux tests should run: tmux runs, or it is required.
fn tmux_runnable() -> bool {
    let required = required("MCP_HARNESS_TMUX");
    match which("tmux") {
        Some(path) if runs(&path) => {
            println!("cargo::rerun-if-changed={}", path.display());
            true
        }
        _ => {
            for dir in path_dirs() {
                println!("cargo::rerun-if-changed={}", dir.display());
            }
            required
        }
    }
}

fn runs(tmux: &Path) -> bool {
    Command::new(tmux)
        .arg("-V")
        .output()
        .is_ok_and(|o| o.status.success())
}

fn path_dirs() -> Vec<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    let mut dirs: Vec<PathBuf> = std::env::split_paths(&path)
        .filter(|d| d.is_absolute() && d.is_dir())
        .collect();
    dirs.dedup();
    dirs
}

fn which(name: &str) -> Option<PathBuf> {
    path_dirs()
        .into_iter()
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}
