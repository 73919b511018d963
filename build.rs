//! Decides, at build time, which tests cannot run here, so they are reported as
//! *ignored* with the reason instead of passing without running:
//!
//! - `mcph_no_interop`: the pinned third-party servers cannot be installed
//!   here (`npm` or `python3` is not on `PATH`). Otherwise the tests run and
//!   install the pins on first use (`tests/it/common/interop.rs`); an install
//!   that fails is not a skip: the tests fail, saying so.
//! - `mcph_no_tmux`: `tmux -V` does not run.
//!
//! `MCP_HARNESS_INTEROP=required` / `MCP_HARNESS_TMUX=required` (CI) turn the
//! skip off: the tests run and a missing tool fails them.
//!
//! Cargo re-runs this script when an input changes. A watched path that does not
//! exist would make it re-run (and the crate rebuild) on every build, so only
//! existing paths are watched: the tools' own files, and the directories of
//! `PATH` while a tool is missing (installing it changes one of them).

use std::path::{Path, PathBuf};
use std::process::Command;

fn main() {
    println!("cargo::rerun-if-changed=build.rs");
    println!("cargo::rustc-check-cfg=cfg(mcph_no_interop)");
    println!("cargo::rustc-check-cfg=cfg(mcph_no_tmux)");

    if !interop_runnable() {
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

/// Whether the interop tests should run: the install they do on first use can
/// run here (npm and python3), or they are required.
fn interop_runnable() -> bool {
    let required = required("MCP_HARNESS_INTEROP");
    found(&["npm", "python3"]) || required
}

/// Whether the tmux tests should run: tmux runs, or it is required.
fn tmux_runnable() -> bool {
    let required = required("MCP_HARNESS_TMUX");
    let runs = found(&["tmux"]) && which("tmux").is_some_and(|path| runs(&path));
    runs || required
}

/// Whether every tool is on `PATH`. Each one found is watched (an upgrade
/// re-decides); while one is missing, so are `PATH`'s directories.
fn found(tools: &[&str]) -> bool {
    let mut all = true;
    for tool in tools {
        match which(tool) {
            Some(path) => println!("cargo::rerun-if-changed={}", path.display()),
            None => all = false,
        }
    }
    if !all {
        for dir in path_dirs() {
            println!("cargo::rerun-if-changed={}", dir.display());
        }
    }
    all
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
