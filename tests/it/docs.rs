//! The documentation holds together without mdBook installed: every chapter
//! `docs/src/SUMMARY.md` names exists and every chapter is named there, every
//! `{{#include}}` resolves, and every relative link in the book, README.md and
//! ARCHITECTURE.md points at a file or folder of the repository.

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
