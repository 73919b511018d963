//! What the input box's completion knows: each connected server's listings
//! (per connection), the popup's selection, and the word before the cursor.

use std::collections::HashMap;
use std::time::Instant;

use crate::protocol::{AliasStatus, PromptsView, ResourcesView, ServerView};

/// What the UI knows of each connected server's resources and prompts: asked
/// for when completion first needs them, forgotten when the server says they
/// changed or its connection ends. Every change counts a generation, so what
/// was completed from it can be kept until it changes.
#[derive(Debug, Default)]
pub struct Catalog {
    resources: HashMap<String, Listed<ResourcesView>>,
    prompts: HashMap<String, Listed<PromptsView>>,
    generation: u64,
}

/// A listing of one connection (`opened`: when it opened, to tell a new
/// connection of the same alias from the one listed).
#[derive(Debug)]
pub struct Listed<T> {
    pub opened: Option<Instant>,
    /// `None`: asked, no answer yet.
    pub view: Option<T>,
}

impl Catalog {
    pub fn resources(&self) -> &HashMap<String, Listed<ResourcesView>> {
        &self.resources
    }

    pub fn prompts(&self) -> &HashMap<String, Listed<PromptsView>> {
        &self.prompts
    }

    /// Counts every change.
    pub fn generation(&self) -> u64 {
        self.generation
    }

    pub fn set_resources(&mut self, alias: String, listed: Listed<ResourcesView>) {
        self.generation += 1;
        self.resources.insert(alias, listed);
    }

    pub fn set_prompts(&mut self, alias: String, listed: Listed<PromptsView>) {
        self.generation += 1;
        self.prompts.insert(alias, listed);
    }

    pub fn forget_resources(&mut self, alias: &str) {
        self.generation += 1;
        self.resources.remove(alias);
    }

    pub fn forget_prompts(&mut self, alias: &str) {
        self.generation += 1;
        self.prompts.remove(alias);
    }

    /// Forgets the listings of connections that are gone.
    pub fn keep_live(&mut self, servers: &[ServerView]) {
        let live = |alias: &String, opened: Option<Instant>| {
            servers.iter().any(|s| {
                s.alias == *alias
                    && s.state == AliasStatus::Ready
                    && s.health.as_ref().map(|h| h.opened) == opened
            })
        };
        let before = self.resources.len() + self.prompts.len();
        self.resources.retain(|alias, l| live(alias, l.opened));
        self.prompts.retain(|alias, l| live(alias, l.opened));
        if self.resources.len() + self.prompts.len() != before {
            self.generation += 1;
        }
    }
}

/// The completion popup's state: its selection, and the token the operator
/// closed it for (it opens again once the token changes).
#[derive(Debug, Default)]
pub struct Picker {
    pub selected: usize,
    /// The token the selection was made on (a new token starts at the top).
    pub on: Option<Token>,
    pub dismissed: Option<Token>,
}

/// The word the cursor ends: where it starts in its line (in characters) and
/// its text up to the cursor.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Token {
    pub row: usize,
    pub start: usize,
    pub text: String,
}

/// The token before the cursor of the input box (`None`: the cursor follows
/// a space, or the box is empty).
pub fn token(lines: &[String], (row, col): (usize, usize)) -> Option<Token> {
    let line = lines.get(row)?;
    let before: Vec<char> = line.chars().take(col).collect();
    let start = before
        .iter()
        .rposition(|c| c.is_whitespace())
        .map_or(0, |i| i + 1);
    if start == before.len() {
        return None;
    }
    Some(Token {
        row,
        start,
        text: before[start..].iter().collect(),
    })
}

/// `alias:rest` split at the first `:` when `alias` could be an alias (letters,
/// digits, `_` and `-`); `None` otherwise.
pub fn split_alias(text: &str) -> Option<(&str, &str)> {
    let (alias, rest) = text.split_once(':')?;
    let shaped = !alias.is_empty()
        && alias
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    shaped.then_some((alias, rest))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(text: &str) -> Vec<String> {
        text.split('\n').map(str::to_string).collect()
    }

    #[test]
    fn the_token_is_the_word_before_the_cursor() {
        let t = token(&lines("look at @demo:fi"), (0, 16)).unwrap();
        assert_eq!((t.start, t.text.as_str()), (8, "@demo:fi"));
        // The cursor in the middle of a word: the part before it.
        let t = token(&lines("look at @demo:file"), (0, 11)).unwrap();
        assert_eq!(t.text, "@de");
        assert_eq!(token(&lines("look "), (0, 5)), None);
        assert_eq!(token(&lines(""), (0, 0)), None);
        let t = token(&lines("first\n/x"), (1, 2)).unwrap();
        assert_eq!((t.row, t.start, t.text.as_str()), (1, 0, "/x"));
        // Characters, not bytes.
        let t = token(&lines("é @ü"), (0, 4)).unwrap();
        assert_eq!((t.start, t.text.as_str()), (2, "@ü"));
    }

    #[test]
    fn an_alias_has_the_shape_of_one() {
        assert_eq!(
            split_alias("demo_alpha:file:///a"),
            Some(("demo_alpha", "file:///a"))
        );
        assert_eq!(split_alias("etc/hosts:x"), None);
        assert_eq!(split_alias(":x"), None);
        assert_eq!(split_alias("noColon"), None);
    }
}
