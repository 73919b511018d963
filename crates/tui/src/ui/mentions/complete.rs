//! What completes the token before the cursor: resources after `@`, prompts
//! after a `/` that starts the message, a prompt's arguments after
//! `/alias:prompt `. Only what can be typed back is offered: a URI or a name
//! with a space, a control or an invisible character in it is left out.

use super::catalog::{Catalog, Listed, Picker, Token, split_alias, token};
use crate::protocol::{AliasStatus, PromptRow, ResourceRow, ServerView};

/// At most this many candidates are kept (the popup scrolls through them);
/// the search stops there, so a broad word costs the same at any listing size.
pub const MAX_CANDIDATES: usize = 500;

/// What is being completed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Kind {
    /// `@alias:uri`.
    Resources,
    /// `/alias:prompt`.
    Prompts,
    /// `key=` of `/alias:prompt`.
    Arguments { alias: String, prompt: String },
}

/// One way to complete the token (`label` and `detail` hold the server's
/// words: the renderer shows them inert).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Candidate {
    /// What replaces the token.
    pub insert: String,
    pub label: String,
    pub detail: String,
}

/// The completion popup's content.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Completion {
    pub kind: Kind,
    pub token: Token,
    pub candidates: Vec<Candidate>,
    /// Connected servers whose listing is on its way.
    pub waiting: Vec<String>,
    /// Connected servers not asked for a listing yet (the reducer asks).
    pub unasked: Vec<String>,
}

/// The completion for the input box (its `lines` and `cursor`) now: `None`
/// when there is nothing to complete, or the operator closed it for this word.
pub fn completion(
    lines: &[String],
    cursor: (usize, usize),
    servers: &[ServerView],
    catalog: &Catalog,
    picker: &Picker,
) -> Option<Completion> {
    // After a space only a prompt's arguments complete (all that are left).
    let token = token(lines, cursor).unwrap_or(Token {
        row: cursor.0,
        start: cursor.1,
        text: String::new(),
    });
    if picker.dismissed.as_ref() == Some(&token) {
        return None;
    }
    let (kind, query) = if let Some(query) = token.text.strip_prefix('@') {
        (Kind::Resources, query.to_string())
    } else if (token.row, token.start) == (0, 0) {
        (Kind::Prompts, token.text.strip_prefix('/')?.to_string())
    } else {
        let first = lines.first()?.split_whitespace().next()?;
        let (alias, prompt) = split_alias(first.strip_prefix('/')?)?;
        let past_name = token.row > 0 || token.start > first.chars().count();
        if token.text.contains('=') || prompt.is_empty() || !past_name {
            return None;
        }
        let kind = Kind::Arguments {
            alias: alias.to_string(),
            prompt: prompt.to_string(),
        };
        (kind, token.text.clone())
    };
    let mut found = Completion {
        kind,
        token,
        candidates: Vec::new(),
        waiting: Vec::new(),
        unasked: Vec::new(),
    };
    let query = query.to_lowercase();
    let kind = found.kind.clone();
    let ready = servers.iter().filter(|s| s.state == AliasStatus::Ready);
    for server in ready {
        match &kind {
            Kind::Resources => {
                if let Some(view) = listing(catalog.resources(), server, &mut found) {
                    resources(&server.alias, view, &query, &mut found.candidates);
                }
            }
            Kind::Prompts => {
                if let Some(view) = listing(catalog.prompts(), server, &mut found) {
                    prompts(&server.alias, &view.prompts, &query, &mut found.candidates);
                }
            }
            Kind::Arguments { alias, prompt } if *alias == server.alias => {
                if let Some(view) = listing(catalog.prompts(), server, &mut found)
                    && let Some(row) = view.prompts.iter().find(|p| p.name == *prompt)
                {
                    let given = given_arguments(lines);
                    arguments(row, &given, &query, &mut found.candidates);
                }
            }
            Kind::Arguments { .. } => {}
        }
    }
    found.candidates.truncate(MAX_CANDIDATES);
    let settled = found.waiting.is_empty() && found.unasked.is_empty();
    if found.token.text.is_empty() && found.candidates.is_empty() && settled {
        return None;
    }
    Some(found)
}

/// The listing of `server` in `of`, or notes that it is missing.
fn listing<'a, T>(
    of: &'a std::collections::HashMap<String, Listed<T>>,
    server: &ServerView,
    found: &mut Completion,
) -> Option<&'a T> {
    match of.get(&server.alias) {
        None => {
            found.unasked.push(server.alias.clone());
            None
        }
        Some(Listed { view: None, .. }) => {
            found.waiting.push(server.alias.clone());
            None
        }
        Some(Listed {
            view: Some(view), ..
        }) => Some(view),
    }
}

fn resources(
    alias: &str,
    view: &crate::protocol::ResourcesView,
    query: &str,
    out: &mut Vec<Candidate>,
) {
    for r in view.resources.iter().filter(|r| typable(&r.uri)) {
        if out.len() >= MAX_CANDIDATES {
            return;
        }
        let full = format!("{alias}:{}", r.uri);
        if matches(query, &[&full, &r.name]) {
            out.push(Candidate {
                insert: format!("@{full} "),
                label: r.uri.clone(),
                detail: about(alias, r),
            });
        }
    }
    // A template's URI up to its first variable: the operator types the rest.
    for t in view.templates.iter().filter(|t| typable(&t.uri)) {
        if out.len() >= MAX_CANDIDATES {
            return;
        }
        let full = format!("{alias}:{}", t.uri);
        if matches(query, &[&full, &t.name]) {
            let fixed = t.uri.split('{').next().unwrap_or_default();
            out.push(Candidate {
                insert: format!("@{alias}:{fixed}"),
                label: t.uri.clone(),
                detail: format!("{alias} · template · {}", t.name),
            });
        }
    }
}

fn about(alias: &str, r: &ResourceRow) -> String {
    let mut parts = vec![alias.to_string(), r.name.clone()];
    parts.extend(r.mime.clone());
    if let Some(size) = r.size {
        parts.push(crate::ui::text::bytes(size));
    }
    parts.join(" · ")
}

fn prompts(alias: &str, rows: &[PromptRow], query: &str, out: &mut Vec<Candidate>) {
    for p in rows.iter().filter(|p| typable(&p.name)) {
        if out.len() >= MAX_CANDIDATES {
            return;
        }
        let full = format!("{alias}:{}", p.name);
        if !matches(query, &[&full]) {
            continue;
        }
        let args: Vec<String> = p
            .arguments
            .iter()
            .map(|a| format!("{}{}", a.name, if a.required { "*" } else { "" }))
            .collect();
        let mut detail = p.description.clone().unwrap_or_default();
        if !args.is_empty() {
            detail = format!("({}) {detail}", args.join(", "));
        }
        out.push(Candidate {
            insert: format!("/{full} "),
            label: format!("/{full}"),
            detail,
        });
    }
}

fn arguments(row: &PromptRow, given: &[String], query: &str, out: &mut Vec<Candidate>) {
    let open = row
        .arguments
        .iter()
        .filter(|a| typable(&a.name) && !a.name.contains('=') && !given.contains(&a.name));
    for a in open.filter(|a| matches(query, &[&a.name])) {
        let need = if a.required { "required" } else { "optional" };
        out.push(Candidate {
            insert: format!("{}=", a.name),
            label: format!("{}=", a.name),
            detail: match &a.description {
                Some(d) => format!("{need} · {d}"),
                None => need.to_string(),
            },
        });
    }
}

/// The `key` of each `key=…` after the prompt's name.
fn given_arguments(lines: &[String]) -> Vec<String> {
    lines
        .iter()
        .flat_map(|l| l.split_whitespace())
        .skip(1)
        .filter_map(|w| w.split_once('=').map(|(k, _)| k.to_string()))
        .collect()
}

/// Whether `text` can be typed back as one token of the input box.
fn typable(text: &str) -> bool {
    if text.is_ascii() {
        // ASCII holds no invisible or bidi character: only controls and spaces.
        return !text.is_empty() && text.bytes().all(|b| b > b' ' && b != 0x7f);
    }
    text.chars().all(|c| {
        !c.is_whitespace()
            && !c.is_control()
            && !crate::sanitize::is_dangerous(c)
            && !crate::sanitize::hidden::is_invisible(c)
    })
}

/// Whether any field holds `query` (lowercase), ignoring case.
fn matches(query: &str, fields: &[&str]) -> bool {
    query.is_empty() || fields.iter().any(|f| holds(f, query))
}

fn holds(field: &str, query: &str) -> bool {
    if !query.is_ascii() {
        return field.to_lowercase().contains(query);
    }
    // ASCII: compared in place, no lowercase copy of every entry.
    let (field, query) = (field.as_bytes(), query.as_bytes());
    field
        .windows(query.len())
        .any(|w| w.eq_ignore_ascii_case(query))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matching_ignores_case_with_or_without_ascii() {
        assert!(matches("readme", &["demo://x/README.md"]));
        assert!(matches("", &["anything"]));
        assert!(!matches("table", &["demo://x/readme", "readme"]));
        assert!(matches("é", &["Café"]));
        assert!(matches("ü", &["MÜNCHEN"]));
        assert!(!matches("longer than the field", &["short"]));
    }
}
