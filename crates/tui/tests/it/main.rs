//! The UI's tests, one binary: the reducer on whole states without a terminal,
//! and a snapshot of every pane (ratatui's `TestBackend` + insta). They link the
//! UI crate and its two leaves only: no server, no backend, no rmcp.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report

// The modules name the crate `mcp_harness` (they were written against the
// harness's re-exports): one alias instead of a rename in every file.
extern crate mcp_harness_tui as mcp_harness;

mod fixtures;
mod ui_reducer;
mod ui_snapshots;
