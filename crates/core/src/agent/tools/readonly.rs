//! `read_file`, `list_dir`, `search_text`: read-only, confined to the working
//! directory (a path that escapes it — `..`, an absolute path, a symlink — is refused).

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::str_arg;
use crate::mcp::{ToolError, ToolErrorCode};

const DEFAULT_READ_BYTES: u64 = 64 * 1024;
/// The most `read_file` returns, whatever `max_bytes` the model asks for (its
/// schema says so too).
pub const MAX_READ_BYTES: u64 = 1024 * 1024;
const MAX_LIST_ENTRIES: usize = 1000;
const DEFAULT_MATCHES: usize = 100;
/// The most matches `search_text` returns, whatever `max_results` says.
pub const MAX_MATCHES: usize = 500;
/// Files larger than this are skipped by `search_text`.
const MAX_SEARCH_FILE: u64 = 2 * 1024 * 1024;

/// The directory the read-only tools may see.
#[derive(Debug, Clone)]
pub struct Workspace {
    root: PathBuf,
}

impl Workspace {
    pub fn new(root: &Path) -> std::io::Result<Self> {
        Ok(Self {
            root: root.canonicalize()?,
        })
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Resolves `path` (relative to the root) and refuses anything outside it,
    /// after following symlinks. A path outside gets the same refusal whether
    /// or not it exists, so the tools cannot be used to probe the rest of the
    /// file system.
    fn resolve(&self, path: &str, tool: &str) -> Result<PathBuf, ToolError> {
        let joined = self.root.join(if path.is_empty() { "." } else { path });
        let outside = || {
            failed(
                tool,
                format!(
                    "`{path}` is outside the working directory; only paths inside it are allowed"
                ),
            )
        };
        match joined.canonicalize() {
            Ok(real) if real.starts_with(&self.root) => Ok(real),
            Ok(_) => Err(outside()),
            Err(_) if !probable_target(&joined).starts_with(&self.root) => Err(outside()),
            Err(e) => Err(failed(tool, format!("`{path}`: {e}"))),
        }
    }

    fn display(&self, path: &Path) -> String {
        let relative = path.strip_prefix(&self.root).unwrap_or(path);
        let text = relative.to_string_lossy();
        if text.is_empty() {
            ".".into()
        } else {
            text.into_owned()
        }
    }

    pub fn read_file(&self, arguments: &Value) -> Result<String, ToolError> {
        let path = self.resolve(str_arg(arguments, "path"), "read_file")?;
        // The schema refuses more; the cap holds even without it.
        let limit = arguments
            .get("max_bytes")
            .and_then(Value::as_u64)
            .unwrap_or(DEFAULT_READ_BYTES)
            .min(MAX_READ_BYTES);
        let file = std::fs::File::open(&path).map_err(|e| failed("read_file", e.to_string()))?;
        let size = file.metadata().map(|m| m.len()).unwrap_or(0);
        let mut bytes = Vec::new();
        file.take(limit)
            .read_to_end(&mut bytes)
            .map_err(|e| failed("read_file", e.to_string()))?;
        let mut text = String::from_utf8_lossy(&bytes).into_owned();
        if size > limit {
            text.push_str(&format!(
                "\n[read_file: showed the first {limit} of {size} bytes]"
            ));
        }
        Ok(text)
    }

    pub fn list_dir(&self, arguments: &Value) -> Result<String, ToolError> {
        let path = self.resolve(str_arg(arguments, "path"), "list_dir")?;
        let entries = std::fs::read_dir(&path).map_err(|e| failed("list_dir", e.to_string()))?;
        let mut names: Vec<String> = entries
            .flatten()
            .map(|e| {
                let name = e.file_name().to_string_lossy().into_owned();
                if e.file_type().is_ok_and(|t| t.is_dir()) {
                    format!("{name}/")
                } else {
                    name
                }
            })
            .collect();
        names.sort();
        let total = names.len();
        names.truncate(MAX_LIST_ENTRIES);
        let mut out = format!(
            "{} ({total} entries)\n{}",
            self.display(&path),
            names.join("\n")
        );
        if total > MAX_LIST_ENTRIES {
            out.push_str(&format!(
                "\n[list_dir: showed {MAX_LIST_ENTRIES} of {total} entries]"
            ));
        }
        Ok(out)
    }

    pub fn search_text(&self, arguments: &Value) -> Result<String, ToolError> {
        let needle = str_arg(arguments, "text");
        if needle.is_empty() {
            return Err(failed("search_text", "`text` must not be empty".into()));
        }
        let start = self.resolve(
            arguments.get("path").and_then(Value::as_str).unwrap_or(""),
            "search_text",
        )?;
        let limit = arguments
            .get("max_results")
            .and_then(Value::as_u64)
            .map_or(DEFAULT_MATCHES, |n| {
                usize::try_from(n).unwrap_or(usize::MAX)
            })
            .min(MAX_MATCHES);
        let mut matches = Vec::new();
        'files: for entry in ignore::WalkBuilder::new(&start).build().flatten() {
            let path = entry.path();
            // The walker follows no symlinks by default; stay inside anyway.
            if !entry.file_type().is_some_and(|t| t.is_file())
                || !path.starts_with(&self.root)
                || entry.metadata().is_ok_and(|m| m.len() > MAX_SEARCH_FILE)
            {
                continue;
            }
            let Ok(file) = std::fs::File::open(path) else {
                continue;
            };
            for (number, line) in BufReader::new(file).lines().enumerate() {
                let Ok(line) = line else { continue 'files }; // not text
                if line.contains(needle) {
                    let shown: String = line.chars().take(300).collect();
                    matches.push(format!(
                        "{}:{}: {}",
                        self.display(path),
                        number + 1,
                        shown.trim_end()
                    ));
                    if matches.len() >= limit {
                        matches.push(format!("[search_text: stopped at {limit} matches]"));
                        break 'files;
                    }
                }
            }
        }
        if matches.is_empty() {
            return Ok(format!("no match for {needle:?}"));
        }
        Ok(matches.join("\n"))
    }
}

/// Where a path that cannot be canonicalized would lead: its nearest existing
/// ancestor, symlinks followed, plus the rest taken literally (`..` pops).
fn probable_target(path: &Path) -> PathBuf {
    let mut rest = Vec::new();
    let mut base = path;
    let mut real = loop {
        if let Ok(real) = base.canonicalize() {
            break real;
        }
        match (base.parent(), base.components().next_back()) {
            (Some(parent), Some(last)) => {
                rest.push(last);
                base = parent;
            }
            // Nothing of it exists (cannot happen below an existing root).
            _ => break PathBuf::from("/"),
        }
    };
    for component in rest.into_iter().rev() {
        match component {
            std::path::Component::ParentDir => {
                real.pop();
            }
            std::path::Component::Normal(name) => real.push(name),
            _ => {}
        }
    }
    real
}

fn failed(tool: &str, message: String) -> ToolError {
    let mut error = ToolError::new(ToolErrorCode::ToolFailed, message);
    error.tool = Some(tool.to_string());
    error
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn workspace() -> (tempfile::TempDir, Workspace) {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("src")).unwrap();
        std::fs::write(
            dir.path().join("src/lib.rs"),
            "fn alpha() {}\nfn beta() {}\n",
        )
        .unwrap();
        std::fs::write(dir.path().join("README.md"), "alpha and beta\n").unwrap();
        let ws = Workspace::new(dir.path()).unwrap();
        (dir, ws)
    }

    #[test]
    fn reads_lists_and_searches_inside_the_workspace() {
        let (_dir, ws) = workspace();
        assert_eq!(
            ws.read_file(&json!({"path": "README.md"})).unwrap(),
            "alpha and beta\n"
        );
        let listing = ws.list_dir(&json!({})).unwrap();
        assert!(
            listing.contains("README.md") && listing.contains("src/"),
            "{listing}"
        );
        let found = ws.search_text(&json!({"text": "beta"})).unwrap();
        assert!(found.contains("src/lib.rs:2: fn beta() {}"), "{found}");
        assert!(found.contains("README.md:1: alpha and beta"), "{found}");
    }

    #[test]
    fn paths_that_escape_are_refused() {
        let (dir, ws) = workspace();
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("secret"), "s3cret").unwrap();
        std::os::unix::fs::symlink(outside.path().join("secret"), dir.path().join("link")).unwrap();
        let absolute = outside.path().join("secret").to_string_lossy().into_owned();
        for path in ["../../../../etc/passwd", absolute.as_str(), "link"] {
            let err = ws.read_file(&json!({"path": path})).unwrap_err();
            assert_eq!(err.code, ToolErrorCode::ToolFailed, "{path}");
            assert!(!err.message.contains("s3cret"));
        }
        assert!(
            ws.read_file(&json!({"path": "link"}))
                .unwrap_err()
                .message
                .contains("outside the working directory")
        );
    }

    #[test]
    fn outside_paths_get_one_answer_whether_or_not_they_exist() {
        let (dir, ws) = workspace();
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("there"), "x").unwrap();
        std::os::unix::fs::symlink(outside.path(), dir.path().join("out")).unwrap();
        let o = outside.path().to_string_lossy().into_owned();
        let pairs = [
            (format!("{o}/there"), format!("{o}/missing")),
            ("out/there".into(), "out/missing".into()),
            ("out/there".into(), "out/missing/deeper".into()),
            (
                "../../../../etc/passwd".into(),
                "../../../../etc/no_such".into(),
            ),
            (
                "src/../../../../etc".into(),
                "nope/../../../../../etc".into(),
            ),
        ];
        let answer = |path: &str| {
            let err = ws.read_file(&json!({ "path": path })).unwrap_err();
            err.message.replace(path, "P")
        };
        for (exists, missing) in &pairs {
            assert_eq!(answer(exists), answer(missing), "{exists} vs {missing}");
            assert!(answer(missing).contains("outside the working directory"));
        }
        // Inside, a missing file is simply reported missing.
        let inside = ws.read_file(&json!({"path": "src/missing"})).unwrap_err();
        assert!(!inside.message.contains("outside"), "{}", inside.message);
    }

    #[test]
    fn model_chosen_sizes_are_capped_even_past_the_schema() {
        let (dir, ws) = workspace();
        let big = MAX_READ_BYTES as usize + 10;
        std::fs::write(dir.path().join("big"), "x".repeat(big)).unwrap();
        let text = ws
            .read_file(&json!({"path": "big", "max_bytes": u64::MAX}))
            .unwrap();
        assert!(
            text.ends_with(&format!(
                "[read_file: showed the first {MAX_READ_BYTES} of {big} bytes]"
            )),
            "{}",
            &text[text.len() - 80..]
        );
        let lines = "needle\n".repeat(MAX_MATCHES + 50);
        std::fs::write(dir.path().join("many"), lines).unwrap();
        let found = ws
            .search_text(&json!({"text": "needle", "max_results": u64::MAX}))
            .unwrap();
        assert_eq!(
            found.lines().count(),
            MAX_MATCHES + 1,
            "the matches and the notice"
        );
        assert!(found.ends_with(&format!("[search_text: stopped at {MAX_MATCHES} matches]")));
    }

    #[test]
    fn large_reads_are_cut_with_a_notice() {
        let (dir, ws) = workspace();
        std::fs::write(dir.path().join("big"), "x".repeat(100)).unwrap();
        let text = ws
            .read_file(&json!({"path": "big", "max_bytes": 10}))
            .unwrap();
        assert!(
            text.starts_with("xxxxxxxxxx\n[read_file: showed the first 10 of 100 bytes]"),
            "{text}"
        );
    }
}
