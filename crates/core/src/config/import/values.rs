//! Values copied from another host's config into ours: its variable syntax
//! (`${env:X}`, `${X}`, `${X:-default}`, `$X`, `${input:id}`, `${workspaceFolder}`,
//! `${userHome}`) becomes ours (`${X}`), a literal `$` becomes `$$`, and literal
//! secrets (every literal `env` value, every literal header) are replaced by a
//! variable the operator must set: the value itself is never written.

use std::path::Path;

use super::Variable;
use crate::mcp::names::normalize;

/// Which variable syntaxes the source host understands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Syntax {
    /// `${NAME}` and `${NAME:-default}` (Claude Code).
    Braces,
    /// `${env:NAME}`, `${input:ID}`, `${workspaceFolder}`, `${userHome}` (VS Code, Cursor).
    Editor,
    /// `$NAME` and `${NAME}` (Gemini CLI).
    Shell,
    /// None: every `$` is literal (Claude Desktop, Codex).
    None,
}

/// Context for translating the values of one server.
pub struct Translator<'a> {
    pub syntax: Syntax,
    pub alias: &'a str,
    /// `${workspaceFolder}`: the folder that holds `.vscode/` or `.cursor/`.
    pub workspace: Option<&'a Path>,
    /// VS Code `inputs`: id → description.
    pub inputs: &'a [(String, String)],
}

/// A translated value and whether it referred to any variable.
pub struct Translated {
    pub text: String,
    pub has_reference: bool,
    /// Things the operator should know (a dropped default, an unknown variable).
    pub notes: Vec<String>,
    pub variables: Vec<Variable>,
}

impl Translator<'_> {
    /// Translates one value found at `key` (e.g. `servers.github.args[2]`).
    pub fn value(&self, raw: &str, key: &str) -> Translated {
        let mut out = Translated {
            text: String::with_capacity(raw.len()),
            has_reference: false,
            notes: Vec::new(),
            variables: Vec::new(),
        };
        let mut rest = raw;
        while let Some(pos) = rest.find('$') {
            out.text.push_str(&rest[..pos]);
            let after = &rest[pos + 1..];
            if let Some(body) = after.strip_prefix('{')
                && let Some(end) = body.find('}')
                && self.syntax != Syntax::None
            {
                self.braced(&body[..end], key, &mut out);
                rest = &body[end + 1..];
                continue;
            }
            if self.syntax == Syntax::Shell {
                let name_len = after
                    .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                    .unwrap_or(after.len());
                if name_len > 0 && !after.starts_with(|c: char| c.is_ascii_digit()) {
                    out.reference(&after[..name_len]);
                    rest = &after[name_len..];
                    continue;
                }
            }
            out.text.push_str("$$");
            rest = after;
        }
        out.text.push_str(rest);
        out
    }

    fn braced(&self, body: &str, key: &str, out: &mut Translated) {
        let (kind, name) = match body.split_once(':') {
            Some((kind, name)) => (kind, name),
            None => ("", body),
        };
        match (self.syntax, kind) {
            (Syntax::Editor, "env") | (Syntax::Braces | Syntax::Shell, "") if valid(name) => {
                out.reference(name)
            }
            (Syntax::Braces, _) if valid(kind) && name.starts_with('-') => {
                out.reference(kind);
                out.notes.push(format!(
                    "{key}: the default value of `${{{kind}:-…}}` was not copied; `{kind}` must be set"
                ));
            }
            (Syntax::Editor, "input") => {
                let var = variable_name(self.alias, name);
                let about = self
                    .inputs
                    .iter()
                    .find(|(id, _)| id == name)
                    .map(|(_, d)| d.clone())
                    .unwrap_or_default();
                out.reference(&var);
                out.variables.push(Variable {
                    name: var,
                    key: key.to_string(),
                    why: if about.is_empty() {
                        format!("was the editor's prompt `{name}`")
                    } else {
                        format!("was the editor's prompt `{name}` ({about})")
                    },
                });
            }
            (Syntax::Editor, "") if name == "userHome" => out.reference("HOME"),
            (Syntax::Editor, "") if name == "workspaceFolder" && self.workspace.is_some() => {
                let folder = self
                    .workspace
                    .map(|p| p.to_string_lossy().into_owned())
                    .unwrap_or_default();
                out.text.push_str(&folder.replace('$', "$$"));
                // Resolved here, but still a reference in the source: not a secret.
                out.has_reference = true;
            }
            _ => {
                // Kept visibly, as a literal: the harness cannot expand it.
                out.text.push_str("$${");
                out.text.push_str(body);
                out.text.push('}');
                out.notes.push(format!(
                    "{key}: `${{{body}}}` is not something mcp-harness can expand; it was kept as literal text"
                ));
            }
        }
    }

    /// An `env` value: a literal is a secret until proven otherwise, so it
    /// becomes `${KEY}`; a value built from variables is kept (translated).
    pub fn env_value(&self, key_name: &str, raw: &str, key: &str) -> Translated {
        let translated = self.value(raw, key);
        if translated.has_reference || raw.is_empty() {
            return translated;
        }
        let var = if valid(key_name) {
            key_name.to_string()
        } else {
            variable_name(self.alias, key_name)
        };
        secret(var, key)
    }

    /// A header value: a literal becomes `${ALIAS_HEADERNAME}`.
    pub fn header_value(&self, header: &str, raw: &str, key: &str) -> Translated {
        let translated = self.value(raw, key);
        if translated.has_reference || raw.is_empty() {
            return translated;
        }
        secret(variable_name(self.alias, header), key)
    }
}

impl Translated {
    fn reference(&mut self, name: &str) {
        self.has_reference = true;
        self.text.push_str("${");
        self.text.push_str(name);
        self.text.push('}');
    }
}

fn secret(var: String, key: &str) -> Translated {
    Translated {
        text: format!("${{{var}}}"),
        has_reference: true,
        notes: Vec::new(),
        variables: vec![Variable {
            name: var,
            key: key.to_string(),
            why: "held a literal value, not copied".into(),
        }],
    }
}

/// A name our `${…}` accepts.
fn valid(name: &str) -> bool {
    !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// `ALIAS_NAME`, upper case, every other character `_`.
pub fn variable_name(alias: &str, name: &str) -> String {
    format!("{}_{}", normalize(alias), normalize(name)).to_ascii_uppercase()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(syntax: Syntax) -> Translator<'static> {
        Translator {
            syntax,
            alias: "git-hub",
            workspace: Some(Path::new("/work/proj")),
            inputs: &[],
        }
    }

    #[test]
    fn each_syntax_becomes_ours() {
        assert_eq!(
            t(Syntax::Editor).value("${env:TOKEN}", "k").text,
            "${TOKEN}"
        );
        assert_eq!(
            t(Syntax::Editor).value("${workspaceFolder}/x", "k").text,
            "/work/proj/x"
        );
        assert_eq!(
            t(Syntax::Editor).value("${userHome}/x", "k").text,
            "${HOME}/x"
        );
        assert_eq!(t(Syntax::Braces).value("a ${B} c", "k").text, "a ${B} c");
        let d = t(Syntax::Braces).value("${B:-x}", "k");
        assert_eq!(d.text, "${B}");
        assert_eq!(d.notes.len(), 1);
        assert_eq!(
            t(Syntax::Shell).value("$TOKEN/$1", "k").text,
            "${TOKEN}/$$1"
        );
        assert_eq!(t(Syntax::None).value("${X} $5", "k").text, "$${X} $$5");
        let unknown = t(Syntax::Editor).value("${config:x}", "k");
        assert_eq!(unknown.text, "$${config:x}");
        assert!(!unknown.has_reference);
    }

    #[test]
    fn literal_secrets_become_variables() {
        let e = t(Syntax::Editor).env_value("API_KEY", "sk-123", "servers.g.env.API_KEY");
        assert_eq!(e.text, "${API_KEY}");
        assert_eq!(e.variables[0].name, "API_KEY");
        let h = t(Syntax::Editor).header_value("X-Api-Key", "abc", "servers.g.headers.X-Api-Key");
        assert_eq!(h.text, "${GIT_HUB_X_API_KEY}");
        let kept = t(Syntax::Editor).header_value("Authorization", "Bearer ${env:T}", "k");
        assert_eq!(kept.text, "Bearer ${T}");
        assert!(kept.variables.is_empty());
    }
}
