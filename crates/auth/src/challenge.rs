//! `WWW-Authenticate` challenges (RFC 9110 §11.6.1, RFC 6750 §3, RFC 9728 §5.1):
//! which scheme, and its parameters — `resource_metadata`, `scope`, `error`.

/// One challenge: its scheme and parameters (names lowercased).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Challenge {
    pub scheme: String,
    params: Vec<(String, String)>,
}

impl Challenge {
    pub fn param(&self, name: &str) -> Option<&str> {
        self.params
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    pub fn resource_metadata(&self) -> Option<&str> {
        self.param("resource_metadata").filter(|v| !v.is_empty())
    }

    /// The scopes the server asks for, in order, without duplicates.
    pub fn scopes(&self) -> Vec<String> {
        split_scopes(self.param("scope").unwrap_or_default())
    }

    pub fn error(&self) -> Option<&str> {
        self.param("error")
    }

    pub fn is_insufficient_scope(&self) -> bool {
        self.error() == Some("insufficient_scope")
    }
}

/// The Bearer (or DPoP) challenge of a header value, or an empty one if the
/// header names neither (a 401 without a usable challenge still means "sign in").
pub fn parse(header: &str) -> Challenge {
    let all = parse_all(header);
    all.iter()
        .find(|c| c.scheme.eq_ignore_ascii_case("bearer"))
        .or_else(|| all.iter().find(|c| c.scheme.eq_ignore_ascii_case("dpop")))
        .cloned()
        .unwrap_or_default()
}

/// Every challenge in a header value, in order.
pub fn parse_all(header: &str) -> Vec<Challenge> {
    let mut out: Vec<Challenge> = Vec::new();
    let mut rest = header.trim();
    while !rest.is_empty() {
        rest = rest.trim_start_matches([',', ' ', '\t']);
        let Some((token, after)) = take_token(rest) else {
            break;
        };
        let after_ws = after.trim_start_matches([' ', '\t']);
        if let Some(value_part) = after_ws.strip_prefix('=') {
            // A parameter of the current challenge.
            let (value, remaining) = take_value(value_part.trim_start_matches([' ', '\t']));
            if let Some(current) = out.last_mut() {
                current.params.push((token.to_ascii_lowercase(), value));
            }
            rest = remaining;
        } else {
            out.push(Challenge {
                scheme: token.to_string(),
                params: Vec::new(),
            });
            rest = after;
        }
    }
    out
}

/// Space-separated scope tokens, deduplicated, order kept.
pub fn split_scopes(value: &str) -> Vec<String> {
    let mut scopes: Vec<String> = Vec::new();
    for s in value.split_whitespace() {
        if !scopes.iter().any(|k| k == s) {
            scopes.push(s.to_string());
        }
    }
    scopes
}

fn take_token(s: &str) -> Option<(&str, &str)> {
    let end = s
        .find(|c: char| c == '=' || c == ',' || c.is_whitespace() || c == '"')
        .unwrap_or(s.len());
    (end > 0).then(|| (&s[..end], &s[end..]))
}

/// A quoted string (with `\` escapes) or a bare token; returns the rest after it.
fn take_value(s: &str) -> (String, &str) {
    if let Some(body) = s.strip_prefix('"') {
        let mut value = String::new();
        let mut chars = body.char_indices();
        while let Some((i, c)) = chars.next() {
            match c {
                '\\' => {
                    if let Some((_, escaped)) = chars.next() {
                        value.push(escaped);
                    }
                }
                '"' => return (value, &body[i + 1..]),
                c => value.push(c),
            }
        }
        (value, "")
    } else {
        let end = s.find([',', ' ', '\t']).unwrap_or(s.len());
        (s[..end].to_string(), &s[end..])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bearer_with_everything() {
        let c = parse(
            r#"Bearer error="insufficient_scope", scope="files:read files:write", resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource", error_description="need \"write\"""#,
        );
        assert_eq!(c.scheme, "Bearer");
        assert!(c.is_insufficient_scope());
        assert_eq!(c.scopes(), vec!["files:read", "files:write"]);
        assert_eq!(
            c.resource_metadata(),
            Some("https://mcp.example.com/.well-known/oauth-protected-resource")
        );
        assert_eq!(c.param("error_description"), Some("need \"write\""));
    }

    #[test]
    fn several_challenges_and_bare_tokens() {
        let all = parse_all(
            r#"Basic realm="x", DPoP algs="ES256", Bearer scope=read, error=invalid_token"#,
        );
        assert_eq!(all.len(), 3);
        let c =
            parse(r#"Basic realm="x", DPoP algs="ES256", Bearer scope=read, error=invalid_token"#);
        assert_eq!(c.scheme, "Bearer");
        assert_eq!(c.scopes(), vec!["read"]);
        assert_eq!(c.error(), Some("invalid_token"));
        assert_eq!(parse("Bearer").scheme, "Bearer");
        assert_eq!(parse("").scheme, "");
        assert_eq!(
            parse(r#"Bearer scope="unterminated"#).scopes(),
            vec!["unterminated"]
        );
    }
}
