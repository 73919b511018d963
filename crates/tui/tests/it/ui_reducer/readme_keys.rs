//! The book's key reference (docs/src/tui.md, "Every key") is the keymap:
//! every binding with a description is a row of its table, in the dispatcher's
//! order, so neither can drift. On a mismatch the test prints the table as it
//! must read.

use mcp_harness::ui::keymap::BINDINGS;

/// The table the book must hold, from the same table help and the footer read.
fn table() -> String {
    let mut out = String::from("| where | keys | what they do |\n|---|---|---|\n");
    for b in BINDINGS.iter().filter(|b| !b.desc.is_empty()) {
        // `|` would end a cell; the key names never hold a backtick.
        let desc = b.desc.replace('|', "\\|");
        out.push_str(&format!(
            "| {} | `{}` | {} |\n",
            b.scope.title(),
            b.keys,
            desc
        ));
    }
    out
}

#[test]
fn readme_lists_every_key_of_the_keymap() {
    let readme = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../docs/src/tui.md"
    ))
    .expect("docs/src/tui.md");
    let table = table();
    assert!(
        readme.contains(&table),
        "docs/src/tui.md's key reference differs from the keymap; it must read:\n\n{table}"
    );
}
