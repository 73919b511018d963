//! `--json` output: one terminal-safe line (see `crate::sanitize::json`).

pub use crate::sanitize::json::to_line;
