//! `mcp-harness import` of 50 servers in each source format: reading the file
//! (lenient JSON or TOML, variable translation) and writing the config with
//! `toml_edit` (which re-parses the result to check it). Target: < 50 ms each.
//!
//! `cargo bench --bench import`
#![allow(clippy::unwrap_used, clippy::expect_used)] // a benchmark: a panic is the report

use std::path::{Path, PathBuf};

use divan::{Bencher, black_box};
use mcp_harness::config::import::{self, Format, write};

fn main() {
    divan::main();
}

const SERVERS: usize = 50;

/// A source file of `format` with 50 servers (stdio and HTTP, env and headers).
fn source(dir: &Path, format: Format) -> PathBuf {
    let json_entry = |i: usize| {
        if i.is_multiple_of(2) {
            format!(
                r#""server-{i}": {{"command": "npx", "args": ["-y", "@scope/server-{i}", "--root", "/srv/{i}"], "env": {{"TOKEN_{i}": "secret-{i}", "HOME_DIR": "/home/u"}}}}"#
            )
        } else {
            format!(
                r#""remote-{i}": {{"type": "http", "url": "https://mcp{i}.example.com/mcp", "headers": {{"Authorization": "Bearer secret-{i}"}}}}"#
            )
        }
    };
    let entries: Vec<String> = (0..SERVERS).map(json_entry).collect();
    let (rel, text) = match format {
        Format::Codex => {
            let mut text = String::from("model = \"x\"\n");
            for i in 0..SERVERS {
                text.push_str(&format!(
                    "\n[mcp_servers.server-{i}]\ncommand = \"npx\"\nargs = [\"-y\", \"@scope/server-{i}\"]\nenv = {{ TOKEN_{i} = \"secret-{i}\" }}\nstartup_timeout_sec = 20\n"
                ));
            }
            ("codex/config.toml", text)
        }
        Format::Vscode => (
            "vscode/.vscode/mcp.json",
            format!(
                "{{\n  // servers\n  \"servers\": {{ {} }},\n}}",
                entries.join(",\n")
            ),
        ),
        Format::ClaudeDesktop => (
            "claude_desktop_config.json",
            format!("{{\"mcpServers\": {{ {} }}}}", entries.join(",\n")),
        ),
        Format::ClaudeCode => (
            "cc/.mcp.json",
            format!("{{\"mcpServers\": {{ {} }}}}", entries.join(",\n")),
        ),
        Format::Cursor => (
            "cursor/.cursor/mcp.json",
            format!("{{\"mcpServers\": {{ {} }}}}", entries.join(",\n")),
        ),
        Format::Gemini => (
            "gemini/.gemini/settings.json",
            format!(
                "{{\"mcpServers\": {{ {} }}}}",
                entries
                    .join(",\n")
                    .replace("\"type\": \"http\", \"url\"", "\"httpUrl\"")
            ),
        ),
    };
    let path = dir.join(rel);
    std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
    std::fs::write(&path, text).expect("write source");
    path
}

#[divan::bench(args = Format::ALL.map(Format::name), sample_count = 30)]
fn import_50_servers(bencher: Bencher, format: &str) {
    let format = Format::from_name(format).expect("format");
    let dir = tempfile::tempdir().expect("tempdir");
    let path = source(dir.path(), format);
    let config = dir.path().join("config.toml");
    bencher.bench_local(|| {
        let _ = std::fs::remove_file(&config);
        let imported = import::read(&path, Some(format)).expect("read");
        assert_eq!(imported.servers.len(), SERVERS);
        black_box(write::write_servers(&config, &imported, false).expect("write"));
    });
}
