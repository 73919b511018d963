//! The standalone shim: the supervisor the harness puts between itself and each
//! stdio server (`crates/shim`), as a binary of its own. The harness could run
//! itself as `mcp-harness __shim` (and does when this binary is missing or from
//! another build), but a small binary starts ~2 ms sooner: every stdio connect
//! pays that exec.

use std::process::ExitCode;

fn main() -> ExitCode {
    mcp_harness_shim::standalone(std::env::args_os().skip(1).collect())
}
