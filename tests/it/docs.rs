//! The documentation holds together without mdBook installed: every chapter
//! `docs/src/SUMMARY.md` names exists and every chapter is named there, every
//! `{{#include}}` resolves, and every relative link in the book, README.md and
//! ARCHITECTURE.md points at a file or folder of the repository; and
//! ARCHITECTURE.md is the code map: it names every folder of the code, every
//! path it names exists, and the code imports only what its table allows.

use std::path::{Path, PathBuf};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The text outside code: fenced blocks and inline code spans are left out, so
/// an example such as `[x](y)` in backticks is not taken for a link.
fn prose(markdown: &str) -> String {
    let mut out = String::new();
    let mut fenced = false;
    for line in markdown.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if fenced {
            continue;
        }
        // Inline code: drop what lies between pairs of backticks.
        for (i, part) in line.split('`').enumerate() {
            if i % 2 == 0 {
                out.push_str(part);
            }
        }
        out.push('\n');
    }
    out
}

/// The targets of `[text](target)` links in `markdown`'s prose.
fn link_targets(markdown: &str) -> Vec<String> {
    let text = prose(markdown);
    let mut targets = Vec::new();
    let mut rest = text.as_str();
    while let Some(at) = rest.find("](") {
        rest = &rest[at + 2..];
        if let Some(end) = rest.find(')') {
            targets.push(rest[..end].to_string());
            rest = &rest[end..];
        }
    }
    targets
}

/// Where a relative link points, or `None` for a web address or an anchor of
/// the same page.
fn local_path(from: &Path, target: &str) -> Option<PathBuf> {
    let target = target.split_whitespace().next().unwrap_or("");
    if target.is_empty() || target.starts_with('#') || target.contains("://") {
        return None;
    }
    if target.starts_with("mailto:") {
        return None;
    }
    let path = target.split('#').next().unwrap_or(target);
    Some(from.parent().expect("a file's folder").join(path))
}

fn chapters() -> Vec<PathBuf> {
    let src = root().join("docs/src");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&src)
        .expect("docs/src")
        .map(|e| e.expect("a directory entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .collect();
    files.sort();
    files
}

#[test]
fn every_chapter_of_the_summary_exists_and_every_chapter_is_in_it() {
    let summary_path = root().join("docs/src/SUMMARY.md");
    let summary = read(&summary_path);
    let named: Vec<PathBuf> = link_targets(&summary)
        .iter()
        .filter_map(|t| local_path(&summary_path, t))
        .collect();
    assert!(
        named.len() > 10,
        "SUMMARY.md names too few chapters: {named:?}"
    );
    for chapter in &named {
        assert!(
            chapter.is_file(),
            "SUMMARY.md names {}, which does not exist",
            chapter.display()
        );
    }
    for file in chapters() {
        if file == summary_path {
            continue;
        }
        assert!(
            named.contains(&file),
            "{} is not in SUMMARY.md (mdBook would leave it out)",
            file.display()
        );
    }
}

#[test]
fn every_include_of_the_book_resolves() {
    let mut includes = 0;
    for file in chapters() {
        let text = read(&file);
        let mut rest = text.as_str();
        while let Some(at) = rest.find("{{#include ") {
            // `\{{#include …}}` is mdBook's escape: the text, not an include.
            let escaped = rest[..at].ends_with('\\');
            rest = &rest[at + "{{#include ".len()..];
            let end = rest.find("}}").expect("an include ends with }}");
            let spec = rest[..end].trim();
            rest = &rest[end..];
            if escaped {
                continue;
            }
            // `file:anchor` or `file:10:20` include a part of the file.
            let path = spec.split(':').next().unwrap_or(spec);
            let target = file.parent().expect("docs/src").join(path);
            assert!(
                target.is_file(),
                "{}: {{{{#include {spec}}}}} does not resolve",
                file.display()
            );
            includes += 1;
        }
    }
    assert!(
        includes > 0,
        "the configuration chapter includes config.example.toml"
    );
}

#[test]
fn every_relative_link_of_the_documentation_resolves() {
    let mut files = chapters();
    files.push(root().join("README.md"));
    files.push(root().join("ARCHITECTURE.md"));
    let mut broken = Vec::new();
    let mut checked = 0;
    for file in &files {
        for target in link_targets(&read(file)) {
            if let Some(path) = local_path(file, &target) {
                checked += 1;
                if !path.exists() {
                    broken.push(format!("{}: ({target})", file.display()));
                }
            }
        }
    }
    assert!(checked > 10, "too few links were found to check: {checked}");
    assert!(
        broken.is_empty(),
        "links that point nowhere:\n{}",
        broken.join("\n")
    );
}

// ARCHITECTURE.md against the tree. Nothing here names a folder: the folders
// are listed from disk (`src/`, and `crates/*` with their `src/` once the
// workspace has them), the paths and the rules are read from the page.

fn architecture() -> String {
    read(&root().join("ARCHITECTURE.md"))
}

/// Every `code span` of a markdown text, fenced blocks left out.
fn code_spans(markdown: &str) -> Vec<String> {
    let mut spans = Vec::new();
    let mut fenced = false;
    for line in markdown.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if fenced {
            continue;
        }
        spans.extend(line.split('`').skip(1).step_by(2).map(str::to_string));
    }
    spans
}

/// `dir` and every folder below it, as paths relative to the repository.
fn folders(dir: &Path, out: &mut Vec<String>) {
    let relative = dir.strip_prefix(root()).expect("inside the repository");
    out.push(relative.to_string_lossy().replace('\\', "/"));
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("a directory entry").path())
        .filter(|p| p.is_dir())
        .collect();
    entries.sort();
    for entry in entries {
        folders(&entry, out);
    }
}

/// The code's folders: `src/` and below, and each crate of `crates/` with its
/// `src/` and below.
fn code_folders() -> Vec<String> {
    let mut out = Vec::new();
    folders(&root().join("src"), &mut out);
    if let Ok(crates) = std::fs::read_dir(root().join("crates")) {
        let mut crates: Vec<PathBuf> = crates
            .map(|e| e.expect("a directory entry").path())
            .filter(|p| p.is_dir())
            .collect();
        crates.sort();
        for krate in crates {
            out.push(format!(
                "crates/{}",
                krate.file_name().unwrap().to_string_lossy()
            ));
            if krate.join("src").is_dir() {
                folders(&krate.join("src"), &mut out);
            }
        }
    }
    out
}

#[test]
fn architecture_names_every_folder_of_the_code() {
    let named: Vec<String> = code_spans(&architecture())
        .into_iter()
        .map(|s| s.trim_end_matches('/').to_string())
        .collect();
    let missing: Vec<String> = code_folders()
        .into_iter()
        .filter(|folder| !named.contains(folder))
        .collect();
    assert!(
        missing.is_empty(),
        "ARCHITECTURE.md does not name these folders (write each as `path/`):\n{}",
        missing.join("\n")
    );
}

#[test]
fn every_path_architecture_names_exists() {
    // A span is taken for a path when it starts with an entry of the
    // repository's top level (or `crates`): `src/mcp/`, `build.rs`, `.ci/run`.
    let top: Vec<String> = std::fs::read_dir(root())
        .expect("the repository")
        .map(|e| {
            e.expect("a directory entry")
                .file_name()
                .to_string_lossy()
                .into_owned()
        })
        .filter(|name| name != "target" && name != ".git")
        .chain(["crates".to_string()])
        .collect();
    let mut checked = 0;
    let mut missing = Vec::new();
    for span in code_spans(&architecture()) {
        if span.contains(char::is_whitespace) || span.contains(['*', '{', '<']) {
            continue;
        }
        let first = span.split('/').next().unwrap_or_default();
        if !top.iter().any(|t| t == first) {
            continue;
        }
        checked += 1;
        if !root().join(&span).exists() {
            missing.push(span);
        }
    }
    assert!(
        checked > 50,
        "too few paths were found in ARCHITECTURE.md: {checked}"
    );
    assert!(
        missing.is_empty(),
        "ARCHITECTURE.md names paths that do not exist:\n{}",
        missing.join("\n")
    );
}

/// The code of a Rust file without comments and string literals (a path in a
/// doc comment or a message is not a dependency).
fn code_only(text: &str) -> String {
    let mut out = String::new();
    for line in text.lines() {
        let chars: Vec<char> = line.chars().collect();
        let mut in_string = false;
        let mut i = 0;
        while i < chars.len() {
            let c = chars[i];
            if !in_string && c == '/' && chars.get(i + 1) == Some(&'/') {
                break;
            }
            // A char literal '"' does not open a string.
            let quote_char = i > 0 && chars[i - 1] == '\'' && chars.get(i + 1) == Some(&'\'');
            if c == '"' && !quote_char && (i == 0 || chars[i - 1] != '\\') {
                in_string = !in_string;
            } else if !in_string {
                out.push(c);
            }
            i += 1;
        }
        out.push('\n');
    }
    out
}

/// The top-level modules a file names through `crate::` (`crate::mcp::Hub`,
/// `use crate::{agent::lead, store}`).
fn crate_uses(code: &str, out: &mut std::collections::BTreeSet<String>) {
    let ident = |s: &str| -> String {
        s.chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect()
    };
    let mut rest = code;
    while let Some(at) = rest.find("crate::") {
        rest = &rest[at + "crate::".len()..];
        let after = rest.trim_start();
        if let Some(group) = after.strip_prefix('{') {
            // The names at the group's first level.
            let mut depth = 1;
            let mut start = true;
            for (i, c) in group.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' => {
                        depth -= 1;
                        if depth == 0 {
                            break;
                        }
                    }
                    ',' if depth == 1 => start = true,
                    c if c.is_whitespace() => {}
                    _ if start && depth == 1 => {
                        let name = ident(&group[i..]);
                        if !name.is_empty() && name != "self" {
                            out.insert(name);
                        }
                        start = false;
                    }
                    _ => {}
                }
            }
        } else {
            let name = ident(after);
            if !name.is_empty() {
                out.insert(name);
            }
        }
    }
}

fn rust_files(path: &Path, out: &mut Vec<PathBuf>) {
    if path.is_dir() {
        for entry in std::fs::read_dir(path).expect("a source folder") {
            rust_files(&entry.expect("a directory entry").path(), out);
        }
    } else if path.extension().is_some_and(|e| e == "rs") {
        out.push(path.to_path_buf());
    }
}

/// The tables under "## What may use what": the crates' table (its rows start
/// with a crate's name, `mcp-harness…`) and the core's modules' table, each as
/// row → what it may use.
fn may_use_tables() -> (
    std::collections::BTreeMap<String, std::collections::BTreeSet<String>>,
    std::collections::BTreeMap<String, std::collections::BTreeSet<String>>,
) {
    let page = architecture();
    let section = page
        .split("\n## What may use what")
        .nth(1)
        .expect("ARCHITECTURE.md has a section \"What may use what\"");
    let section = section.split("\n## ").next().unwrap_or(section);
    let (mut crates, mut modules) = (
        std::collections::BTreeMap::new(),
        std::collections::BTreeMap::new(),
    );
    for line in section.lines().filter(|l| l.starts_with("| `")) {
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        let row = cells[1].trim_matches('`').to_string();
        let allowed = cells[2]
            .split(',')
            .map(|m| m.trim().trim_matches('`').to_string())
            .filter(|m| !m.is_empty() && m != "—")
            .collect();
        if row.starts_with("mcp-harness") {
            crates.insert(row, allowed);
        } else {
            modules.insert(row, allowed);
        }
    }
    (crates, modules)
}

/// The workspace's crates (the top-level package and `crates/*`), each with the
/// workspace crates its `[dependencies]` name.
fn workspace_crates() -> std::collections::BTreeMap<String, std::collections::BTreeSet<String>> {
    let mut manifests = vec![root().join("Cargo.toml")];
    let mut members: Vec<PathBuf> = std::fs::read_dir(root().join("crates"))
        .expect("crates/")
        .map(|e| e.expect("a directory entry").path().join("Cargo.toml"))
        .filter(|p| p.is_file())
        .collect();
    members.sort();
    manifests.extend(members);
    manifests
        .iter()
        .map(|path| {
            let manifest: toml::Table = toml::from_str(&read(path)).expect("a Cargo.toml");
            let name = manifest["package"]["name"].as_str().expect("package.name");
            let uses = manifest
                .get("dependencies")
                .and_then(|d| d.as_table())
                .map(|d| {
                    d.keys()
                        .filter(|k| k.starts_with("mcp-harness"))
                        .cloned()
                        .collect()
                })
                .unwrap_or_default();
            (name.to_string(), uses)
        })
        .collect()
}

#[test]
fn the_crates_depend_only_on_what_architecture_allows() {
    let (table, _) = may_use_tables();
    let crates = workspace_crates();
    assert!(crates.len() > 3, "too few crates found: {crates:?}");
    let mut wrong = Vec::new();
    for (name, uses) in &crates {
        match table.get(name) {
            None => wrong.push(format!("the crate `{name}` has no row in the table")),
            Some(allowed) => wrong.extend(
                uses.difference(allowed)
                    .map(|u| format!("`{name}` depends on `{u}`, which its row does not allow")),
            ),
        }
    }
    for name in table.keys().filter(|n| !crates.contains_key(*n)) {
        wrong.push(format!(
            "the table has a row for `{name}`, which is no crate of the workspace"
        ));
    }
    assert!(
        wrong.is_empty(),
        "ARCHITECTURE.md, \"What may use what\":\n{}",
        wrong.join("\n")
    );
}

#[test]
fn the_code_imports_only_what_architecture_allows() {
    let (_, table) = may_use_tables();
    // The top-level modules of the core (`crates/core/src/`) and of the binary
    // (`src/`, its `cli`): a folder or a file (a module `x.rs` with its folder
    // `x/` is one), less the crate roots.
    let mut modules = std::collections::BTreeMap::<String, Vec<PathBuf>>::new();
    let entries = ["crates/core/src", "src"]
        .iter()
        .flat_map(|dir| std::fs::read_dir(root().join(dir)).expect("a source folder"));
    for entry in entries {
        let path = entry.expect("a directory entry").path();
        let name = path.file_stem().unwrap().to_string_lossy().into_owned();
        if name == "lib" || name == "main" {
            continue;
        }
        // `src/bin/`: cargo's folder of other binaries, each a crate root.
        if path.is_dir() && name == "bin" {
            continue;
        }
        if path.is_dir() || path.extension().is_some_and(|e| e == "rs") {
            rust_files(&path, modules.entry(name).or_default());
        }
    }
    let mut wrong = Vec::new();
    for (module, files) in &modules {
        let Some(allowed) = table.get(module) else {
            wrong.push(format!("`{module}` has no row in the table"));
            continue;
        };
        let mut uses = std::collections::BTreeSet::new();
        for file in files {
            crate_uses(&code_only(&read(file)), &mut uses);
        }
        for used in uses
            .iter()
            .filter(|u| *u != module && !allowed.contains(*u))
        {
            wrong.push(format!(
                "`{module}` uses `{used}`, which its row does not allow"
            ));
        }
    }
    for module in table.keys().filter(|m| !modules.contains_key(*m)) {
        wrong.push(format!(
            "the table has a row for `{module}`, which is no module of the core or the binary"
        ));
    }
    assert!(modules.len() > 5, "too few modules found: {modules:?}");
    assert!(
        wrong.is_empty(),
        "ARCHITECTURE.md, \"What may use what\":\n{}",
        wrong.join("\n")
    );
}
