//! Messages of any size from stdio servers: `lexer` cuts long strings as they
//! stream past (long result text goes whole into a file), `gate` is the reader
//! under rmcp that runs it and enforces `max_message_bytes`, and the
//! `SpillTable` hands what was cut from a response to whoever awaits that
//! response (by its JSON-RPC id).

pub mod gate;
pub mod lexer;
mod paths;
mod unescape;

use std::collections::HashMap;
use std::fs::File;
use std::io::BufWriter;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

/// One long text of a message, decoded, whole, in a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Piece {
    /// Which text of the message (0 = the first text block, in order).
    pub ordinal: usize,
    /// `None` when the file could not be made (the text is then lost beyond
    /// its head, and said so).
    pub path: Option<PathBuf>,
    /// Its whole length in bytes (UTF-8).
    pub bytes: u64,
}

/// Something left out of a message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Omitted {
    pub what: &'static str,
    pub bytes: u64,
}

/// What was cut from one message.
#[derive(Debug, Default)]
pub struct Spilled {
    pub pieces: Vec<Piece>,
    pub omitted: Vec<Omitted>,
    /// A string outside the text and binary places was cut (structured content
    /// or another field is no longer what the server sent).
    pub cut_other: bool,
    /// A piece could not be written whole (disk full, read-only directory).
    pub failed: bool,
    /// The `requestState` was longer than `max_request_state_bytes`: its
    /// whole length (decoded). What is left of it must not be sent back.
    pub state_cut: Option<u64>,
}

impl Spilled {
    pub fn is_empty(&self) -> bool {
        self.pieces.is_empty()
            && self.omitted.is_empty()
            && !self.cut_other
            && !self.failed
            && self.state_cut.is_none()
    }

    /// The piece holding text number `ordinal`, if that text was long.
    pub fn piece(&self, ordinal: usize) -> Option<&Piece> {
        self.pieces.iter().find(|p| p.ordinal == ordinal)
    }
}

impl Drop for Spilled {
    fn drop(&mut self) {
        // Pieces not moved into a result file are temporary.
        for path in self.pieces.iter().filter_map(|p| p.path.as_ref()) {
            let _ = std::fs::remove_file(path);
        }
    }
}

/// One connection's pieces, in a directory of their own (removed with it).
pub struct SpillTable {
    dir: PathBuf,
    next: AtomicU64,
    filed: Mutex<HashMap<String, Spilled>>,
}

impl SpillTable {
    pub fn new(dir: PathBuf) -> Self {
        Self {
            dir,
            next: AtomicU64::new(0),
            filed: Mutex::new(HashMap::new()),
        }
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// A new piece file, readable by the owner only.
    fn create_piece(&self) -> std::io::Result<(BufWriter<File>, PathBuf)> {
        use std::os::unix::fs::{DirBuilderExt as _, OpenOptionsExt as _};
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(&self.dir)?;
        let n = self.next.fetch_add(1, Ordering::Relaxed);
        let path = self.dir.join(format!("piece-{n}.txt"));
        let file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&path)?;
        Ok((BufWriter::with_capacity(64 * 1024, file), path))
    }

    fn file(&self, id: String, spilled: Spilled) {
        let mut filed = self.filed.lock().unwrap_or_else(|e| e.into_inner());
        // A server that sends many big messages nobody awaits: keep a few.
        if filed.len() >= 64 {
            filed.clear();
        }
        filed.insert(id, spilled);
    }

    /// What was cut from the response with this id, if anything.
    pub fn take(&self, id: &str) -> Option<Spilled> {
        self.filed
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(id)
    }
}

impl Drop for SpillTable {
    fn drop(&mut self) {
        self.filed.lock().unwrap_or_else(|e| e.into_inner()).clear();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
