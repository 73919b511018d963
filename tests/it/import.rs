//! `mcp-harness import`: every source format read from a fixture, secrets never
//! copied, malformed files refused with their position, aliases never replaced
//! without `--force`, and `--with-policy` against real demo servers.

use std::path::{Path, PathBuf};

use crate::common::{TestEnv, stderr, stdout};

fn fixture(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/it/fixtures/import")
        .join(rel)
}

/// Runs `import` with `--config {DIR}/config.toml`.
fn import(env: &TestEnv, args: &[&str]) -> std::process::Output {
    let mut all = vec!["import"];
    all.extend_from_slice(args);
    env.run(&all)
}

fn config_text(env: &TestEnv) -> String {
    std::fs::read_to_string(env.path("config.toml")).unwrap_or_default()
}

#[test]
fn every_format_imports_without_its_secrets() {
    let cases: &[(&str, &str, &[&str])] = &[
        (
            "claude-desktop/claude_desktop_config.json",
            "claude-desktop",
            &["filesystem", "github", "brave_search"],
        ),
        (
            "claude-code/.mcp.json",
            "claude-code",
            &["time", "sentry", "api_server"],
        ),
        (
            "cursor/.cursor/mcp.json",
            "cursor",
            &["memory", "linear", "notes"],
        ),
        (
            "vscode/.vscode/mcp.json",
            "vscode",
            &["Perplexity", "github", "fetch"],
        ),
        (
            "codex/config.toml",
            "codex",
            &["context7", "figma", "shell"],
        ),
        (
            "gemini/.gemini/settings.json",
            "gemini",
            &["pythonTools", "github"],
        ),
    ];
    for (file, format, aliases) in cases {
        let env = TestEnv::new();
        let out = import(&env, &[fixture(file).to_str().unwrap()]);
        assert!(
            out.status.success(),
            "{file}: {}{}",
            stdout(&out),
            stderr(&out)
        );
        assert!(
            stdout(&out).contains(&format!("({format})")),
            "{file} detected as {format}: {}",
            stdout(&out)
        );
        let text = config_text(&env);
        assert!(
            !text.contains("FIXTURESECRET"),
            "{file}: a secret was copied:\n{text}"
        );
        let config = mcp_harness::config::load(mcp_harness::config::ConfigSource::File(
            env.path("config.toml"),
        ))
        .unwrap_or_else(|e| panic!("{file}: {e}\n{text}"));
        let got: Vec<&str> = config.servers.iter().map(|s| s.alias.as_str()).collect();
        assert_eq!(&got, aliases, "{file}:\n{text}");
        // Named explicitly, the format gives the same result.
        let again = TestEnv::new();
        let out = import(&again, &[fixture(file).to_str().unwrap(), "--from", format]);
        assert!(
            out.status.success(),
            "{file} --from {format}: {}",
            stderr(&out)
        );
        assert_eq!(config_text(&again), text);
    }
}

#[test]
fn secrets_become_variables_the_command_names() {
    let env = TestEnv::new();
    let out = import(
        &env,
        &[fixture("claude-desktop/claude_desktop_config.json")
            .to_str()
            .unwrap()],
    );
    let text = config_text(&env);
    assert!(
        text.contains("GITHUB_PERSONAL_ACCESS_TOKEN = \"${GITHUB_PERSONAL_ACCESS_TOKEN}\""),
        "{text}"
    );
    assert!(
        stdout(&out).contains(
            "GITHUB_PERSONAL_ACCESS_TOKEN  servers.github.env.GITHUB_PERSONAL_ACCESS_TOKEN"
        ),
        "{}",
        stdout(&out)
    );

    // Headers: a literal becomes ${ALIAS_HEADER}; a reference is translated, not replaced.
    let env = TestEnv::new();
    let out = import(&env, &[fixture("claude-code/.mcp.json").to_str().unwrap()]);
    let text = config_text(&env);
    assert!(
        text.contains("Authorization = \"${SENTRY_AUTHORIZATION}\""),
        "{text}"
    );
    assert!(text.contains("X-API-Key = \"${API_KEY}\""), "{text}");
    assert!(
        stdout(&out).contains("legacy-sse: uses the SSE transport"),
        "{}",
        stdout(&out)
    );
    assert!(
        stdout(&out).contains("SENTRY_AUTHORIZATION"),
        "{}",
        stdout(&out)
    );

    // VS Code: an input prompt becomes a variable named after the alias and the input.
    let env = TestEnv::new();
    let out = import(
        &env,
        &[fixture("vscode/.vscode/mcp.json").to_str().unwrap()],
    );
    assert!(config_text(&env).contains("PERPLEXITY_API_KEY = \"${PERPLEXITY_PERPLEXITY_KEY}\""));
    assert!(
        stdout(&out).contains("Perplexity API Key"),
        "{}",
        stdout(&out)
    );

    // Codex: bearer_token_env_var and env_http_headers name variables already.
    let env = TestEnv::new();
    import(&env, &[fixture("codex/config.toml").to_str().unwrap()]);
    let text = config_text(&env);
    assert!(
        text.contains("Authorization = \"Bearer ${FIGMA_OAUTH_TOKEN}\""),
        "{text}"
    );
    assert!(text.contains("X-Trace = \"${TRACE_ID}\""), "{text}");
    assert!(text.contains("connect_timeout_ms = 20000"), "{text}");
    assert!(text.contains("call_timeout_ms = 120500"), "{text}");
}

#[test]
fn malformed_files_name_the_position_and_write_nothing() {
    let cases: &[(&str, &str)] = &[
        (
            "malformed/claude_desktop_config.json",
            ":4:5: expected `,` or `}`",
        ),
        (
            "malformed/cc/.mcp.json",
            ":6:28 at `mcpServers.a.args`: invalid type",
        ),
        (
            "malformed/cursor/.cursor/mcp.json",
            ":4:5 at `mcpServers.nothing`: has neither `command`",
        ),
        (
            "malformed/vscode/.vscode/mcp.json",
            ":7:44 at `servers.a.env.A`: expected a string, found an array",
        ),
        ("malformed/config.toml", ":5:1: "),
        (
            "malformed/gemini/.gemini/settings.json",
            ":3:44 at `mcpServers.a.timeout`",
        ),
    ];
    for (file, expected) in cases {
        let env = TestEnv::new();
        let out = import(&env, &[fixture(file).to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(2), "{file}: {}", stderr(&out));
        let err = stderr(&out);
        assert!(
            err.contains(&format!("{}{expected}", fixture(file).display())),
            "{file}: {err}"
        );
        assert!(
            !env.path("config.toml").exists(),
            "{file}: a config was written"
        );
    }
}

#[test]
fn an_existing_alias_stops_the_import_unless_forced() {
    let env = TestEnv::new();
    let before = "# my servers, by hand\n[servers.github]\ncommand = \"my-github\" # keep me\n\n[servers.github.tools]\nsearch = \"allow\"\n";
    std::fs::write(env.path("config.toml"), before).unwrap();
    let source = fixture("claude-desktop/claude_desktop_config.json");
    let out = import(&env, &[source.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("already has [servers.github]"),
        "{}",
        stderr(&out)
    );
    assert!(stderr(&out).contains("--force"), "{}", stderr(&out));
    assert_eq!(config_text(&env), before, "nothing may be written");

    // Another spelling of the same alias is the same alias.
    std::fs::write(
        env.path("config.toml"),
        "[servers.brave-search]\ncommand = \"b\"\n",
    )
    .unwrap();
    let out = import(&env, &[source.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));

    std::fs::write(env.path("config.toml"), before).unwrap();
    let out = import(&env, &[source.to_str().unwrap(), "--force"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let after = config_text(&env);
    assert!(after.starts_with("# my servers, by hand\n"), "{after}");
    assert!(
        !after.contains("my-github") && !after.contains("search = "),
        "{after}"
    );
    assert!(
        stdout(&out).contains("(replaced the existing one)"),
        "{}",
        stdout(&out)
    );
    assert!(
        mcp_harness::config::parse(&after, mcp_harness::config::ConfigSource::Embedded).is_ok()
    );
}

#[test]
fn an_unwritable_config_is_a_clear_error_and_nothing_changes() {
    let env = TestEnv::new();
    std::fs::write(env.path("not-a-dir"), "").unwrap();
    let mut cmd = std::process::Command::new(crate::common::BIN);
    crate::common::isolate(&mut cmd, env.dir.path());
    let out = cmd
        .args([
            "--config",
            env.path("not-a-dir/config.toml").to_str().unwrap(),
            "import",
        ])
        .arg(fixture("codex/config.toml"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("nothing was imported: cannot read")
            && stderr(&out).contains("Not a directory"),
        "{}",
        stderr(&out)
    );
    assert_eq!(std::fs::read_to_string(env.path("not-a-dir")).unwrap(), "");
}

#[test]
fn with_policy_connects_each_server_and_writes_its_block_after_confirmation() {
    let env = TestEnv::new();
    let source = env.path("claude_desktop_config.json");
    std::fs::write(
        &source,
        env.fill(
            r#"{"mcpServers": {
            "demo-alpha": {"command": "{BIN}", "args": ["demo-server", "alpha", "--tag", "{TAG}"]},
            "broken": {"command": "/nonexistent/server"}
        }}"#,
        ),
    )
    .unwrap();
    // Without a terminal and without --yes, nothing is confirmed: servers only.
    let out = import(&env, &[source.to_str().unwrap(), "--with-policy"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stdout(&out).contains("[servers.demo_alpha.tools]\nlookup = \"confirm\""),
        "{}",
        stdout(&out)
    );
    assert!(stderr(&out).contains("pass --yes"), "{}", stderr(&out));
    assert!(!config_text(&env).contains("[servers.demo_alpha.tools]"));
    env.assert_no_leaks();

    let out = import(
        &env,
        &[
            source.to_str().unwrap(),
            "--with-policy",
            "--yes",
            "--force",
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stdout(&out).contains("no policy for `broken`"),
        "{}",
        stdout(&out)
    );
    assert!(
        stdout(&out).contains("wrote the policy of `demo_alpha`"),
        "{}",
        stdout(&out)
    );
    let check = env.run(&["check", "--json"]);
    let report = crate::common::json(&check);
    let alpha = report["servers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["alias"] == "demo_alpha")
        .unwrap();
    assert_eq!(alpha["status"], "ready", "{alpha}");
    assert!(
        alpha["exposed"]
            .as_array()
            .unwrap()
            .iter()
            .all(|t| t["effect"] == "confirm")
    );
    env.assert_no_leaks();
}

/// Issue 21, item 13: `--copy-env KEY` keeps a literal env value the operator
/// vouches for (a path, a log level) and says so; a key whose name looks like a
/// secret is not copied even when asked, and other literals stay variables.
#[test]
fn copy_env_keeps_the_literals_asked_for_and_never_a_secret() {
    let env = TestEnv::new();
    let source = env.path("claude_desktop_config.json");
    std::fs::write(
        &source,
        r#"{"mcpServers": {"files": {"command": "npx", "args": ["server-filesystem"],
            "env": {"ROOT_DIR": "/home/me/projects", "LOG_LEVEL": "debug", "API_TOKEN": "tok-123"}}}}"#,
    )
    .unwrap();
    let out = import(
        &env,
        &[
            source.to_str().unwrap(),
            "--from",
            "claude-desktop",
            "--copy-env",
            "ROOT_DIR",
            "--copy-env",
            "API_TOKEN",
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let said = stdout(&out);
    let text = config_text(&env);
    assert!(text.contains(r#"ROOT_DIR = "/home/me/projects""#), "{text}");
    assert!(said.contains("copied as asked (--copy-env)"), "{said}");
    assert!(said.contains("servers.files.env.ROOT_DIR"), "{said}");
    // Not asked for: a variable, as before; asked for but secret-looking: too.
    assert!(text.contains("LOG_LEVEL = \"${LOG_LEVEL}\""), "{text}");
    assert!(!text.contains("tok-123"), "{text}");
    assert!(said.contains("looks like a secret"), "{said}");
}
