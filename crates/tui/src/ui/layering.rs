//! Holds `src/ui/` to its layering by reading the source: every path into
//! another UI module (`use` lines and paths written in code alike) is an edge.
//! The reducer (`update/`) and the renderer (`panes/`) never reach each other;
//! the shared modules below them reach neither, nor the loop (`ui/mod.rs`);
//! and no two UI files depend on each other, directly or round a loop.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// `ui::update::keys` for `src/ui/update/keys.rs`, `ui::update` for its `mod.rs`.
fn module_of(path: &Path, root: &Path) -> Vec<String> {
    let relative = path.strip_prefix(root).expect("under src/");
    let mut parts: Vec<String> = relative
        .with_extension("")
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if parts.last().is_some_and(|p| p == "mod") {
        parts.pop();
    }
    parts
}

fn sources(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("read src/ui") {
        let path = entry.expect("entry").path();
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The code without comments and string literals (a path in a doc comment is
/// not a dependency).
fn code(text: &str) -> String {
    let mut out = String::new();
    for line in text.lines() {
        let mut in_string = false;
        let mut prev = ' ';
        let mut kept = String::new();
        let chars: Vec<char> = line.chars().collect();
        let mut i = 0;
        while i < chars.len() {
            let c = chars[i];
            if !in_string && c == '/' && chars.get(i + 1) == Some(&'/') {
                break;
            }
            if c == '"' && prev != '\\' && !(prev == '\'' && chars.get(i + 1) == Some(&'\'')) {
                in_string = !in_string;
            } else if !in_string {
                kept.push(c);
            }
            prev = c;
            i += 1;
        }
        out.push_str(&kept);
        out.push('\n');
    }
    out
}

/// Every path in `text` that starts at `crate::ui`, `super`, `self` or one of
/// this module's `children`, as the module path it names (before resolution
/// against the known modules): for a group `a::{b, c::d}` each member.
fn paths(text: &str, here: &[String], children: &[String]) -> Vec<Vec<String>> {
    let tokens: Vec<String> = tokenize(text);
    let mut found = Vec::new();
    let mut i = 0;
    while i < tokens.len() {
        let after_path = i > 0 && tokens[i - 1] == "::";
        let start: Option<Vec<String>> = if !after_path
            && children.contains(&tokens[i])
            && tokens.get(i + 1).is_some_and(|t| t == "::")
        {
            let mut child = here.to_vec();
            child.push(tokens[i].clone());
            i += 1;
            Some(child)
        } else if tokens[i] == "crate"
            && tokens.get(i + 1).is_some_and(|t| t == "::")
            && tokens.get(i + 2).is_some_and(|t| t == "ui")
        {
            i += 3;
            Some(vec!["ui".to_string()])
        } else if (tokens[i] == "super" || tokens[i] == "self")
            && !(i >= 2 && tokens[i - 1] == "(" && tokens[i - 2] == "pub")
        {
            let mut base = here.to_vec();
            while tokens.get(i).is_some_and(|t| t == "super" || t == "self") {
                if tokens[i] == "super" {
                    base.pop();
                }
                i += 1;
                if tokens.get(i).is_some_and(|t| t == "::") {
                    i += 1;
                } else {
                    break;
                }
            }
            Some(base)
        } else {
            None
        };
        let Some(base) = start else {
            i += 1;
            continue;
        };
        collect(&tokens, &mut i, base, &mut found);
    }
    found
}

/// Reads `::seg::seg` or `::{…}` after `base`, pushing each full path.
fn collect(tokens: &[String], i: &mut usize, mut base: Vec<String>, found: &mut Vec<Vec<String>>) {
    loop {
        if tokens.get(*i).is_some_and(|t| t == "::") {
            *i += 1;
        }
        match tokens.get(*i).map(String::as_str) {
            Some("{") => {
                *i += 1;
                loop {
                    match tokens.get(*i).map(String::as_str) {
                        Some("}") | None => {
                            *i += 1;
                            return;
                        }
                        Some(",") => *i += 1,
                        _ => {
                            let before = *i;
                            collect(tokens, i, base.clone(), found);
                            // `*`, `as x`: nothing more to read here.
                            if *i == before {
                                *i += 1;
                            }
                        }
                    }
                }
            }
            Some(t)
                if t.chars()
                    .next()
                    .is_some_and(|c| c.is_alphanumeric() || c == '_') =>
            {
                base.push(t.to_string());
                *i += 1;
                if tokens.get(*i).is_none_or(|t| t != "::") {
                    found.push(base);
                    return;
                }
            }
            _ => {
                found.push(base);
                return;
            }
        }
    }
}

fn tokenize(text: &str) -> Vec<String> {
    let mut tokens = Vec::new();
    let chars: Vec<char> = text.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c.is_alphanumeric() || c == '_' {
            let start = i;
            while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            tokens.push(chars[start..i].iter().collect());
        } else if c == ':' && chars.get(i + 1) == Some(&':') {
            tokens.push("::".into());
            i += 2;
        } else if !c.is_whitespace() {
            tokens.push(c.to_string());
            i += 1;
        } else {
            i += 1;
        }
    }
    tokens
}

/// The longest known module a path points into.
fn resolve(path: &[String], modules: &BTreeSet<Vec<String>>) -> Option<Vec<String>> {
    (1..=path.len())
        .rev()
        .map(|n| path[..n].to_vec())
        .find(|p| modules.contains(p))
}

fn layer(module: &[String]) -> &'static str {
    match module.get(1).map(String::as_str) {
        None => "loop",
        Some("update") => "update",
        Some("panes") => "panes",
        Some(_) => "shared",
    }
}

fn graph() -> BTreeMap<Vec<String>, BTreeSet<Vec<String>>> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&root.join("ui"), &mut files);
    let modules: BTreeSet<Vec<String>> = files.iter().map(|f| module_of(f, &root)).collect();
    let mut edges = BTreeMap::new();
    for file in &files {
        let here = module_of(file, &root);
        let text = code(&std::fs::read_to_string(file).expect("read"));
        // A file's own tests (at its end, by convention) are not its dependencies.
        let text = text
            .split("#[cfg(test)]\nmod tests")
            .next()
            .unwrap_or_default()
            .to_string();
        // A `mod x;` line declares a child: ownership, not a dependency.
        let text: String = text
            .lines()
            .filter(|l| {
                let l = l.trim_start();
                !(l.starts_with("mod ") || l.starts_with("pub mod "))
            })
            .collect::<Vec<_>>()
            .join("\n");
        let children: Vec<String> = modules
            .iter()
            .filter(|m| m.len() == here.len() + 1 && m.starts_with(&here))
            .filter_map(|m| m.last().cloned())
            .collect();
        let targets: BTreeSet<Vec<String>> = paths(&text, &here, &children)
            .iter()
            .filter_map(|p| resolve(p, &modules))
            .filter(|t| *t != here)
            .collect();
        edges.insert(here, targets);
    }
    edges
}

#[test]
fn the_reducer_and_the_renderer_never_reach_each_other_and_nothing_loops() {
    let edges = graph();
    assert!(
        edges.len() > 20,
        "the UI's files were not found: {:?}",
        edges.keys()
    );
    let mut wrong = Vec::new();
    for (from, targets) in &edges {
        for to in targets {
            let allowed = match (layer(from), layer(to)) {
                ("loop", _) => true,
                ("update", "panes") | ("panes", "update") => false,
                (_, "loop") => false,
                ("shared", "shared") => true,
                ("shared", _) => false,
                _ => true,
            };
            if !allowed {
                wrong.push(format!("{} → {}", from.join("::"), to.join("::")));
            }
        }
    }
    assert!(wrong.is_empty(), "imports against the layering: {wrong:#?}");
    // No cycle: a depth-first walk never meets a module it is still inside.
    fn visit(
        at: &Vec<String>,
        edges: &BTreeMap<Vec<String>, BTreeSet<Vec<String>>>,
        path: &mut Vec<Vec<String>>,
        done: &mut BTreeSet<Vec<String>>,
    ) {
        if done.contains(at) {
            return;
        }
        if let Some(i) = path.iter().position(|p| p == at) {
            let cycle: Vec<String> = path[i..].iter().map(|m| m.join("::")).collect();
            panic!("an import cycle: {} → {}", cycle.join(" → "), at.join("::"));
        }
        path.push(at.clone());
        for next in edges.get(at).into_iter().flatten() {
            visit(next, edges, path, done);
        }
        path.pop();
        done.insert(at.clone());
    }
    let mut done = BTreeSet::new();
    for module in edges.keys() {
        visit(module, &edges, &mut Vec::new(), &mut done);
    }
}

#[test]
fn the_reader_sees_every_form_of_path() {
    let here = vec!["ui".to_string(), "update".to_string(), "keys".to_string()];
    let text = "use crate::ui::{layout::{layout, Areas}, panes};\nlet x = super::scroll::by(s);\nuse super::super::state::AppState;\npub(super) fn f() {}";
    let found = paths(&code(text), &here, &[]);
    let names: Vec<String> = found.iter().map(|p| p.join("::")).collect();
    for wanted in [
        "ui::layout::layout",
        "ui::layout::Areas",
        "ui::panes",
        "ui::update::scroll::by",
        "ui::state::AppState",
    ] {
        assert!(names.contains(&wanted.to_string()), "{wanted} in {names:?}");
    }
    assert_eq!(found.len(), 5, "`pub(super)` is not a path: {names:?}");
}
