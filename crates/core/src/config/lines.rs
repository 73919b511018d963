//! Where a policy entry sits in the config text (for "explain": which line
//! decided a call). Read with `toml_edit`, which keeps every key's span.

use toml_edit::{Document, Item, Key};

/// The 1-based line of `[servers.ALIAS.tools] TOOL = …` in `text`.
pub fn policy_line(text: &str, alias: &str, tool: &str) -> Option<usize> {
    let doc = Document::parse(text).ok()?;
    let server = doc.get("servers")?.get(alias)?;
    let key = key_in(server.get("tools")?, tool)?;
    Some(line_of(text, key.span()?.start))
}

/// The 1-based line of `[builtin_tools] NAME = …` in `text`.
pub fn builtin_line(text: &str, name: &str) -> Option<usize> {
    let doc = Document::parse(text).ok()?;
    let key = key_in(doc.get("builtin_tools")?, name)?;
    Some(line_of(text, key.span()?.start))
}

fn key_in<'a>(table: &'a Item, name: &str) -> Option<&'a Key> {
    match table {
        Item::Table(t) => t.key(name),
        Item::Value(v) => v.as_inline_table()?.key(name),
        _ => None,
    }
}

fn line_of(text: &str, offset: usize) -> usize {
    text.get(..offset).map_or(0, |t| t.matches('\n').count()) + 1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_line_of_a_policy_entry_whatever_its_form() {
        let text = "# servers\n[servers.a]\ncommand = \"x\"\n\n[servers.a.tools]\nlookup = \"allow\"\n\"files/read\" = \"confirm\"\n[servers.b]\ntools = { set = \"deny\" }\n[builtin_tools]\nread_file = \"confirm\"\n";
        assert_eq!(policy_line(text, "a", "lookup"), Some(6));
        assert_eq!(policy_line(text, "a", "files/read"), Some(7));
        assert_eq!(policy_line(text, "b", "set"), Some(9));
        assert_eq!(policy_line(text, "a", "nope"), None);
        assert_eq!(builtin_line(text, "read_file"), Some(11));
    }
}
