//! The credential formats the result scan knows, as data: one row per kind,
//! after the well-known published rule sets (gitleaks, GitHub secret scanning,
//! the vendors' own token formats). Each pattern matches the credential's own
//! shape (a fixed prefix, a fixed length, a marker), never "a long random
//! string", so a public key, a UUID or a git sha is not a credential.
//!
//! Patterns are written for one `RegexSet` over arbitrary text: word
//! boundaries are ASCII (`(?-u:\b)`), which keeps the scan in the lazy DFA on
//! non-ASCII text. A rule whose pattern has a group named `secret` redacts
//! that group only (`Bearer [redacted: bearer_token]`), otherwise the whole match.

use serde::Serialize;

/// What kind of credential a hit is (the name the model and the audit log see).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SecretKind {
    AwsAccessKey,
    AwsSecretKey,
    PrivateKey,
    GithubToken,
    GitlabToken,
    SlackToken,
    SlackWebhook,
    BearerToken,
    Jwt,
    GoogleApiKey,
    StripeKey,
    OpenaiKey,
    AnthropicKey,
    NpmToken,
    SendgridKey,
    UrlPassword,
}

impl SecretKind {
    pub fn as_str(self) -> &'static str {
        match self {
            SecretKind::AwsAccessKey => "aws_access_key",
            SecretKind::AwsSecretKey => "aws_secret_key",
            SecretKind::PrivateKey => "private_key",
            SecretKind::GithubToken => "github_token",
            SecretKind::GitlabToken => "gitlab_token",
            SecretKind::SlackToken => "slack_token",
            SecretKind::SlackWebhook => "slack_webhook",
            SecretKind::BearerToken => "bearer_token",
            SecretKind::Jwt => "jwt",
            SecretKind::GoogleApiKey => "google_api_key",
            SecretKind::StripeKey => "stripe_key",
            SecretKind::OpenaiKey => "openai_key",
            SecretKind::AnthropicKey => "anthropic_key",
            SecretKind::NpmToken => "npm_token",
            SecretKind::SendgridKey => "sendgrid_key",
            SecretKind::UrlPassword => "url_password",
        }
    }
}

impl std::fmt::Display for SecretKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One credential format.
pub(super) struct Rule {
    pub kind: SecretKind,
    pub pattern: &'static str,
    /// A text that holds no run of [`MIN_RUN`] token characters can match
    /// this rule only if it contains this literal; `None`: it cannot match at
    /// all (every match holds such a run). The scan skips the rules a text
    /// cannot match without running them.
    pub without_run: Option<&'static str>,
}

/// The shortest run of token characters (`[A-Za-z0-9_.~+/=-]`) that every
/// match of a rule without a `without_run` literal holds: a Slack token's
/// `xoxb-` and its ten characters are the shortest.
pub(super) const MIN_RUN: usize = 15;

/// Whether `byte` can be part of a token (the characters the rules' long runs
/// are made of).
pub(super) fn is_token_byte(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || matches!(byte, b'_' | b'.' | b'~' | b'+' | b'/' | b'=' | b'-')
}

/// The table. Order matters only where two rules match the same text: the
/// earlier one names it (a Slack webhook before a URL password).
pub(super) const RULES: &[Rule] = &[
    Rule {
        kind: SecretKind::PrivateKey,
        // A whole block when it ends, else the header and its base64 lines.
        pattern: r"(?s)-----BEGIN[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)?-----.*?-----END[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)?-----|-----BEGIN[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)?-----(?:\s*[A-Za-z0-9+/=:,-]{16,})*",
        without_run: Some("PRIVATE KEY"),
    },
    Rule {
        kind: SecretKind::AwsAccessKey,
        pattern: r"(?-u:\b)(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z2-7]{16}(?-u:\b)",
        without_run: None,
    },
    Rule {
        kind: SecretKind::AwsSecretKey,
        pattern: r#"(?i)aws_?secret_?(?:access_?)?key["']?\s*[:=]\s*["']?(?P<secret>[A-Za-z0-9/+=]{40})(?-u:\b)"#,
        without_run: None,
    },
    Rule {
        kind: SecretKind::GithubToken,
        pattern: r"(?-u:\b)(?:(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{82})(?-u:\b)",
        without_run: None,
    },
    Rule {
        kind: SecretKind::GitlabToken,
        pattern: r"(?-u:\b)glpat-[A-Za-z0-9_-]{20,}",
        without_run: None,
    },
    Rule {
        kind: SecretKind::SlackWebhook,
        pattern: r"https://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9+/_-]{20,}",
        without_run: None,
    },
    Rule {
        kind: SecretKind::SlackToken,
        pattern: r"(?-u:\b)xox[abposr]-[A-Za-z0-9-]{10,250}",
        without_run: None,
    },
    Rule {
        kind: SecretKind::AnthropicKey,
        pattern: r"(?-u:\b)sk-ant-[a-z]{3,8}[0-9]{2}-[A-Za-z0-9_-]{80,120}",
        without_run: None,
    },
    Rule {
        kind: SecretKind::OpenaiKey,
        pattern: r"(?-u:\b)sk-(?:(?:proj|svcacct|admin)-)?[A-Za-z0-9_-]{20,74}T3BlbkFJ[A-Za-z0-9_-]{20,74}",
        without_run: None,
    },
    Rule {
        kind: SecretKind::StripeKey,
        // Secret and restricted keys; publishable (`pk_`) keys are public.
        pattern: r"(?-u:\b)(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{24,99}(?-u:\b)",
        without_run: None,
    },
    Rule {
        kind: SecretKind::GoogleApiKey,
        pattern: r"(?-u:\b)AIza[A-Za-z0-9_-]{35}",
        without_run: None,
    },
    Rule {
        kind: SecretKind::NpmToken,
        pattern: r"(?-u:\b)npm_[A-Za-z0-9]{36}(?-u:\b)",
        without_run: None,
    },
    Rule {
        kind: SecretKind::SendgridKey,
        pattern: r"(?-u:\b)SG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}",
        without_run: None,
    },
    Rule {
        kind: SecretKind::Jwt,
        // Header and claims both JSON objects (`eyJ` is `{"`), signed or not.
        pattern: r"(?-u:\b)eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*",
        without_run: None,
    },
    Rule {
        kind: SecretKind::BearerToken,
        pattern: r"(?i)(?-u:\b)bearer[ \t]+(?P<secret>[A-Za-z0-9._~+/-]{20,}=*)",
        without_run: None,
    },
    Rule {
        kind: SecretKind::UrlPassword,
        // `scheme://user:password@host`: the password only.
        pattern: r"(?-u:\b)[A-Za-z][A-Za-z0-9+.-]{1,20}://[^\s/:@]{1,100}:(?P<secret>[^\s/:@]{3,200})@",
        without_run: Some("://"),
    },
];

#[cfg(test)]
mod tests {
    use super::super::scan;
    use super::*;

    /// Each rule finds its own kind in a realistic sample, and only there.
    fn finds(text: &str, kind: SecretKind, secret: &str) {
        let hits = scan(text);
        assert!(
            hits.iter().any(|h| h.kind == kind && h.secret == secret),
            "{kind} not found in {text:?}: {hits:?}"
        );
    }

    #[test]
    fn aws_access_key() {
        finds(
            "key AKIAIOSFODNN7EXAMPLE here",
            SecretKind::AwsAccessKey,
            "AKIAIOSFODNN7EXAMPLE",
        );
    }

    #[test]
    fn aws_secret_key() {
        finds(
            "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
            SecretKind::AwsSecretKey,
            "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        );
    }

    #[test]
    fn private_key_block_whole_and_unterminated() {
        let block = "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ\nAAAAAAAAAAEAAAAzAAAAC3NzaC1lZDI1NTE5AAAAI\n-----END OPENSSH PRIVATE KEY-----";
        finds(
            &format!("here:\n{block}\nforward it"),
            SecretKind::PrivateKey,
            block,
        );
        let cut = "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun";
        finds(&format!("{cut}\n"), SecretKind::PrivateKey, cut);
    }

    #[test]
    fn github_tokens() {
        let classic = format!("ghp_{}", "a1B2c3D4e5".repeat(4).get(..36).unwrap());
        finds(
            &format!("token={classic}"),
            SecretKind::GithubToken,
            &classic,
        );
        let fine = format!("github_pat_{}", "A".repeat(82));
        finds(&fine, SecretKind::GithubToken, &fine);
    }

    #[test]
    fn gitlab_token() {
        finds(
            "glpat-xxxxxxxxxxxxxxxxxxxx1",
            SecretKind::GitlabToken,
            "glpat-xxxxxxxxxxxxxxxxxxxx1",
        );
    }

    #[test]
    fn slack_token_and_webhook() {
        finds(
            "xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx",
            SecretKind::SlackToken,
            "xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx",
        );
        let hook = "https://hooks.slack.com/services/T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX";
        finds(hook, SecretKind::SlackWebhook, hook);
    }

    #[test]
    fn bearer_token_keeps_the_word() {
        finds(
            "Authorization: Bearer abcdef0123456789abcdef0123",
            SecretKind::BearerToken,
            "abcdef0123456789abcdef0123",
        );
    }

    #[test]
    fn jwt() {
        let jwt = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U";
        finds(&format!("({jwt})"), SecretKind::Jwt, jwt);
    }

    #[test]
    fn google_api_key() {
        let key = format!("AIza{}", "Sy".repeat(17) + "A");
        finds(&format!("key={key}&q=1"), SecretKind::GoogleApiKey, &key);
    }

    #[test]
    fn stripe_key() {
        let key = format!("sk_live_{}", "4eC39HqLyjWDarjtT1zdp7dc");
        finds(&key, SecretKind::StripeKey, &key);
        assert!(scan("pk_live_4eC39HqLyjWDarjtT1zdp7dc").is_empty());
    }

    #[test]
    fn openai_key() {
        let key = format!("sk-proj-{}T3BlbkFJ{}", "a".repeat(20), "b".repeat(20));
        finds(&key, SecretKind::OpenaiKey, &key);
    }

    #[test]
    fn anthropic_key() {
        let key = format!("sk-ant-api03-{}", "x".repeat(93));
        finds(&key, SecretKind::AnthropicKey, &key);
    }

    #[test]
    fn npm_token() {
        let key = format!("npm_{}", "a1".repeat(18));
        finds(&key, SecretKind::NpmToken, &key);
    }

    #[test]
    fn sendgrid_key() {
        let key = format!("SG.{}.{}", "a".repeat(22), "b".repeat(43));
        finds(&key, SecretKind::SendgridKey, &key);
    }

    #[test]
    fn url_password() {
        finds(
            "postgres://admin:hunter2x@db.internal:5432/app",
            SecretKind::UrlPassword,
            "hunter2x",
        );
    }

    /// The skip is safe: the shortest match of each rule that names no
    /// literal holds a run of `MIN_RUN`, and the literal rules match without
    /// one. (Each rule's own test above goes through the skip too.)
    #[test]
    fn the_shortest_matches_pass_the_token_run_skip() {
        let shortest = [
            (
                SecretKind::SlackToken,
                "say xoxb-0123456789 now".to_string(),
            ),
            (
                SecretKind::GitlabToken,
                format!("a glpat-{} b", "x".repeat(20)),
            ),
            (
                SecretKind::BearerToken,
                format!("Bearer {}", "a~b.".repeat(5)),
            ),
            (SecretKind::Jwt, "eyJabcdefgh.eyJabcdefgh.".to_string()),
            (SecretKind::AwsAccessKey, "AKIAIOSFODNN7EXAMPLE".to_string()),
            (
                SecretKind::UrlPassword,
                "see https://u:abc@h/ x".to_string(),
            ),
            (
                SecretKind::PrivateKey,
                "-----BEGIN PRIVATE KEY-----".to_string(),
            ),
        ];
        for (kind, text) in shortest {
            let rule = RULES.iter().find(|r| r.kind == kind).unwrap();
            let hits = scan(&text);
            assert!(
                hits.iter().any(|h| h.kind == kind),
                "{kind}: {text:?} {hits:?}"
            );
            if rule.without_run.is_none() {
                assert!(super::super::has_token_run(text.as_bytes()), "{kind}");
            }
        }
        // Prose of short words holds no run: nothing but the literal rules runs.
        assert!(!super::super::has_token_run(
            "All work and no play makes a huge résult.\n"
                .repeat(50)
                .as_bytes()
        ));
        assert_eq!(
            RULES.iter().filter(|r| r.without_run.is_some()).count(),
            2,
            "only the private key and the URL password match without a run"
        );
    }

    #[test]
    fn every_kind_has_a_rule_and_every_rule_compiles() {
        for rule in RULES {
            regex::Regex::new(rule.pattern).unwrap_or_else(|e| panic!("{}: {e}", rule.kind));
        }
        assert_eq!(RULES.len(), 16);
    }

    #[test]
    fn public_keys_uuids_shas_and_prose_pass() {
        for benign in [
            "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl user@host",
            "ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABAQC7 user@host",
            "-----BEGIN PUBLIC KEY-----\nMIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEAu1SU1L\n-----END PUBLIC KEY-----",
            "id 123e4567-e89b-12d3-a456-426614174000",
            "commit 9fceb02d0ae598e95dc970b74767f19372d61af8",
            "Use a bearer token in the Authorization header.",
            "https://example.com/path?x=1 and user@example.com",
            "The AKIA prefix marks AWS access keys.",
            "pk_test_TYooMQauvdEDq54NiTphI7jx is a publishable key",
        ] {
            assert!(scan(benign).is_empty(), "{benign:?}: {:?}", scan(benign));
        }
    }
}
