//! Standard output for the commands. `println!` panics when the reader has gone
//! (`mcp-harness check | head -1`); these writers go quiet instead, so a command
//! still finishes and closes its servers.

use std::io::Write as _;

/// Standard output that goes quiet once it cannot be written, e.g. when the
/// reader of `run --json | head -1` has gone: `println!` would panic there, and
/// the run must still finish and close its servers. Every write is flushed, so
/// a reader sees each event as it happens.
#[derive(Default)]
pub struct Out {
    closed: bool,
}

impl Out {
    pub fn text(&mut self, text: &str) {
        if self.closed {
            return;
        }
        let mut stdout = std::io::stdout().lock();
        if let Err(e) = stdout
            .write_all(text.as_bytes())
            .and_then(|()| stdout.flush())
        {
            self.closed = true;
            // A closed pipe is the reader's choice; anything else is worth a word.
            if e.kind() != std::io::ErrorKind::BrokenPipe {
                let _ = writeln!(std::io::stderr(), "mcp-harness: stopped printing: {e}");
            }
        }
    }

    pub fn line(&mut self, line: &str) {
        self.text(&format!("{line}\n"));
    }
}

/// Prints `text` once, quietly giving up on a closed pipe.
pub fn print(text: &str) {
    Out::default().text(text);
}

/// Prints `line` and a newline, quietly giving up on a closed pipe.
pub fn println(line: &str) {
    Out::default().line(line);
}
