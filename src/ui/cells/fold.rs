//! How much of a long text an entry shows, and how it says what it left out.

/// Lines shown of an expanded entry (the model got all of it).
pub const EXPANDED_LINES: usize = 200;

pub fn more_lines(n: usize) -> String {
    if n == 1 {
        "1 more line".into()
    } else {
        format!("{n} more lines")
    }
}
