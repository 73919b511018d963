//! `${VAR}` references in launch settings: secrets come from the environment at
//! connect time, never from the config file itself.

use std::path::PathBuf;

/// The harness's own executable, so configs can launch the demo servers (and any
/// other subcommand) without knowing where the binary lives.
pub const SELF_EXE_VAR: &str = "MCP_HARNESS_EXE";

/// Where `${VAR}` values come from.
#[derive(Debug, Clone)]
pub struct Vars {
    self_exe: PathBuf,
}

impl Vars {
    pub fn new(self_exe: PathBuf) -> Self {
        Self { self_exe }
    }

    /// Variables of this process, with `MCP_HARNESS_EXE` set to the running binary.
    pub fn from_process() -> Self {
        Self::new(std::env::current_exe().unwrap_or_else(|_| PathBuf::from("mcp-harness")))
    }

    /// One variable's value (the *name* of a secret's variable comes from the config).
    pub fn get(&self, name: &str) -> Option<String> {
        self.lookup(name)
    }

    fn lookup(&self, name: &str) -> Option<String> {
        if name == SELF_EXE_VAR {
            return Some(self.self_exe.to_string_lossy().into_owned());
        }
        std::env::var(name).ok()
    }

    /// Expands `${NAME}`; `$$` is a literal `$`. The error names the variable,
    /// never a value.
    pub fn expand(&self, template: &str) -> Result<String, VarError> {
        expand_with(template, |name| self.lookup(name))
    }
}

/// Why a `${…}` template does not expand: it names the variable, never a value.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum VarError {
    #[error("unterminated `${{` (write `$$` for a literal `$`)")]
    Unterminated,
    #[error("`${{{0}}}` is not a valid variable name")]
    BadName(String),
    #[error("environment variable `{0}` is not set")]
    Unset(String),
    /// Not a variable's fault as such: what it expanded to is plaintext http to
    /// a remote host, which `allow_insecure_http` must allow.
    #[error(
        "expands to plaintext http:// to `{0}`, which is not loopback; use https://, or set \
         `allow_insecure_http = true` on this server to send it in the clear"
    )]
    InsecureHttp(String),
}

/// Checks `${…}` syntax without looking anything up (config load time).
pub fn check_syntax(template: &str) -> Result<(), VarError> {
    expand_with(template, |_| Some(String::new())).map(|_| ())
}

fn expand_with(
    template: &str,
    lookup: impl Fn(&str) -> Option<String>,
) -> Result<String, VarError> {
    let mut out = String::with_capacity(template.len());
    let mut rest = template;
    while let Some(pos) = rest.find('$') {
        out.push_str(&rest[..pos]);
        let after = &rest[pos + 1..];
        if let Some(tail) = after.strip_prefix('$') {
            out.push('$');
            rest = tail;
        } else if let Some(body) = after.strip_prefix('{') {
            let end = body.find('}').ok_or(VarError::Unterminated)?;
            let name = &body[..end];
            if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
                return Err(VarError::BadName(name.to_string()));
            }
            let value = lookup(name).ok_or_else(|| VarError::Unset(name.to_string()))?;
            out.push_str(&value);
            rest = &body[end + 1..];
        } else {
            out.push('$');
            rest = after;
        }
    }
    out.push_str(rest);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars() -> Vars {
        Vars::new(PathBuf::from("/opt/bin/mcp-harness"))
    }

    #[test]
    fn expands_self_exe_and_literals() {
        assert_eq!(
            vars().expand("${MCP_HARNESS_EXE}").unwrap(),
            "/opt/bin/mcp-harness"
        );
        assert_eq!(vars().expand("a$$b $c").unwrap(), "a$b $c");
    }

    #[test]
    fn unset_variables_are_named_in_the_error() {
        let err = vars()
            .expand("Bearer ${MCP_HARNESS_TEST_SURELY_UNSET}")
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "environment variable `MCP_HARNESS_TEST_SURELY_UNSET` is not set"
        );
    }

    #[test]
    fn syntax_errors_are_caught_early() {
        assert!(check_syntax("${OK_1}").is_ok());
        assert!(check_syntax("${unterminated").is_err());
        assert!(check_syntax("${bad-name}").is_err());
        assert!(check_syntax("${}").is_err());
    }
}
