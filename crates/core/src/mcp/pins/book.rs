//! Where pins are kept: `mcp-harness.lock` (or, for a hub built without one,
//! memory). A read is cached until the file changes on disk, so a long TUI
//! session parses it once and still sees `mcp-harness pin` run elsewhere.
//! Every write re-reads the file under a lock on its directory, changes one
//! alias, and replaces the file atomically (a temp file beside it, then a
//! rename): a reader sees the old file or the new one, never half of one.
//!
//! All methods block (file I/O): call them from `spawn_blocking`.

use std::fs::File;
use std::io::Write as _;
use std::os::unix::fs::{MetadataExt as _, OpenOptionsExt as _};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::SystemTime;

use nix::fcntl::{Flock, FlockArg};

use super::lock::{self, AliasPins, Lock};

/// The name of the lock file, in the config file's directory.
pub const LOCK_FILE: &str = "mcp-harness.lock";

/// The pins of every alias, and where they live.
pub struct PinBook {
    store: Store,
    /// Other lock files the harness knows (the default config's, the embedded
    /// default's): an alias new here but pinned there is not trusted on first
    /// use without a word (a copied config would otherwise start afresh).
    others: Vec<PathBuf>,
}

enum Store {
    Memory(Mutex<Arc<Lock>>),
    File {
        path: PathBuf,
        cache: Mutex<Option<(Option<Stamp>, Arc<Lock>)>>,
    },
}

/// Identifies one version of the file on disk (a rename makes a new inode).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Stamp {
    inode: u64,
    len: u64,
    modified: Option<SystemTime>,
}

/// The lock file cannot be read or written. Connections that need their pins
/// fail rather than run unchecked.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PinError {
    #[error("cannot read the lock file {path}: {message}")]
    Read { path: String, message: String },
    #[error("the lock file {path} is not valid: {message}")]
    Invalid { path: String, message: String },
    #[error("cannot write the lock file {path}: {message}")]
    Write { path: String, message: String },
}

impl PinBook {
    /// Pins that live as long as this process (tests, the conformance client).
    pub fn in_memory() -> Self {
        Self {
            store: Store::Memory(Mutex::new(Arc::new(Lock::default()))),
            others: Vec::new(),
        }
    }

    /// Pins in the lock file at `path` (which need not exist yet).
    pub fn file(path: PathBuf) -> Self {
        Self {
            store: Store::File {
                path,
                cache: Mutex::new(None),
            },
            others: Vec::new(),
        }
    }

    /// Consults `others` before pinning an alias that has no pins here.
    pub fn consulting(mut self, others: Vec<PathBuf>) -> Self {
        self.others = others;
        self
    }

    /// The first other lock that pins `alias`, and its pins. A lock that cannot
    /// be read is passed over (it is not this config's to judge).
    pub fn pinned_elsewhere(&self, alias: &str) -> Option<(PathBuf, AliasPins)> {
        self.others.iter().find_map(|path| {
            let pins = read(path).ok()?.servers.remove(alias)?;
            (!pins.is_empty()).then(|| (path.clone(), pins))
        })
    }

    /// The lock file, if the pins live in one.
    pub fn path(&self) -> Option<&Path> {
        match &self.store {
            Store::Memory(_) => None,
            Store::File { path, .. } => Some(path),
        }
    }

    /// Where the pins live, for messages.
    pub fn location(&self) -> String {
        match &self.store {
            Store::Memory(_) => "memory (this process only)".into(),
            Store::File { path, .. } => path.display().to_string(),
        }
    }

    /// Every alias's pins as they are now (a missing file holds none).
    pub fn load(&self) -> Result<Arc<Lock>, PinError> {
        match &self.store {
            Store::Memory(lock) => Ok(Arc::clone(&guard(lock))),
            Store::File { path, cache } => {
                let stamp = stamp(path).map_err(|e| read_error(path, &e))?;
                let mut cache = guard(cache);
                if let Some((cached, lock)) = cache.as_ref()
                    && *cached == stamp
                {
                    return Ok(Arc::clone(lock));
                }
                let lock = Arc::new(read(path)?);
                *cache = Some((stamp, Arc::clone(&lock)));
                Ok(lock)
            }
        }
    }

    /// Changes one alias's pins (an alias left without pins is dropped) and
    /// writes the file if anything changed; every other entry is kept.
    pub fn update(
        &self,
        alias: &str,
        change: impl FnOnce(&mut AliasPins),
    ) -> Result<Arc<Lock>, PinError> {
        match &self.store {
            Store::Memory(lock) => {
                let mut lock = guard(lock);
                let mut next = (**lock).clone();
                apply(&mut next, alias, change);
                *lock = Arc::new(next);
                Ok(Arc::clone(&lock))
            }
            Store::File { path, cache } => {
                let dir = match path.parent() {
                    Some(dir) if !dir.as_os_str().is_empty() => dir.to_path_buf(),
                    _ => PathBuf::from("."),
                };
                std::fs::create_dir_all(&dir).map_err(|e| write_error(path, &e))?;
                // Serializes writers (another harness, `mcp-harness pin`), so
                // two updates of different aliases cannot lose one another.
                let _writers = lock_dir(&dir).map_err(|e| write_error(path, &e))?;
                let mut next = read(path)?;
                let before = next.clone();
                apply(&mut next, alias, change);
                if next != before {
                    write_atomically(path, &dir, &lock::render(&next))
                        .map_err(|e| write_error(path, &e))?;
                }
                let stamp = stamp(path).map_err(|e| read_error(path, &e))?;
                let next = Arc::new(next);
                *guard(cache) = Some((stamp, Arc::clone(&next)));
                Ok(next)
            }
        }
    }
}

fn apply(lock: &mut Lock, alias: &str, change: impl FnOnce(&mut AliasPins)) {
    let pins = lock.servers.entry(alias.to_string()).or_default();
    change(pins);
    if pins.is_empty() {
        lock.servers.remove(alias);
    }
}

fn read(path: &Path) -> Result<Lock, PinError> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Lock::default()),
        Err(e) => return Err(read_error(path, &e)),
    };
    lock::parse(&text).map_err(|e| PinError::Invalid {
        path: path.display().to_string(),
        message: e.to_string(),
    })
}

fn stamp(path: &Path) -> std::io::Result<Option<Stamp>> {
    match std::fs::metadata(path) {
        Ok(meta) => Ok(Some(Stamp {
            inode: meta.ino(),
            len: meta.len(),
            modified: meta.modified().ok(),
        })),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
    }
}

fn lock_dir(dir: &Path) -> std::io::Result<Flock<File>> {
    let handle = File::open(dir)?;
    Flock::lock(handle, FlockArg::LockExclusive).map_err(|(_, errno)| errno.into())
}

/// Temp file in the same directory (so the rename cannot cross file systems),
/// flushed to disk, then renamed over the lock file.
fn write_atomically(path: &Path, dir: &Path, text: &str) -> std::io::Result<()> {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| LOCK_FILE.into());
    let temp = dir.join(format!(
        ".{name}.{}.{}.tmp",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    ));
    let written = (|| {
        // Owner-only, like everything else the harness keeps.
        let mut file = File::options()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&temp)?;
        file.write_all(text.as_bytes())?;
        file.sync_all()?;
        std::fs::rename(&temp, path)
    })();
    if written.is_err() {
        let _ = std::fs::remove_file(&temp);
    }
    written?;
    // Best effort: make the rename itself durable.
    if let Ok(dir) = File::open(dir) {
        let _ = dir.sync_all();
    }
    Ok(())
}

fn read_error(path: &Path, e: &std::io::Error) -> PinError {
    PinError::Read {
        path: path.display().to_string(),
        message: e.to_string(),
    }
}

fn write_error(path: &Path, e: &std::io::Error) -> PinError {
    PinError::Write {
        path: path.display().to_string(),
        message: e.to_string(),
    }
}

fn guard<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mcp::pins::Pin;
    use crate::mcp::pins::canonical::hash;

    fn pin(definition: &str) -> Pin {
        Pin {
            sha256: hash(definition.as_bytes()),
            definition: definition.into(),
        }
    }

    #[test]
    fn updates_keep_other_entries_and_replace_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(LOCK_FILE);
        let book = PinBook::file(path.clone());
        assert!(book.load().unwrap().servers.is_empty(), "no file, no pins");
        book.update("a", |p| {
            p.insert("x".into(), pin("{\"name\":\"x\"}"));
            p.insert("y".into(), pin("{\"name\":\"y\"}"));
        })
        .unwrap();
        // Another process writes another alias.
        PinBook::file(path.clone())
            .update("b", |p| {
                p.insert("z".into(), pin("{\"name\":\"z\"}"));
            })
            .unwrap();
        let inode = std::fs::metadata(&path).unwrap().ino();
        let lock = book
            .update("a", |p| {
                p.remove("y");
            })
            .unwrap();
        assert_eq!(lock.servers["a"].keys().collect::<Vec<_>>(), ["x"]);
        assert_eq!(lock.servers["b"].keys().collect::<Vec<_>>(), ["z"], "kept");
        assert_ne!(
            std::fs::metadata(&path).unwrap().ino(),
            inode,
            "a write replaces the file (temp + rename), never edits it in place"
        );
        let leftovers: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(leftovers, [LOCK_FILE], "no temp file left behind");
        assert_eq!(*PinBook::file(path).load().unwrap(), *lock);
    }

    #[test]
    fn reads_are_cached_until_the_file_changes() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(LOCK_FILE);
        let book = PinBook::file(path.clone());
        book.update("a", |p| {
            p.insert("x".into(), pin("{}"));
        })
        .unwrap();
        let first = book.load().unwrap();
        assert!(Arc::ptr_eq(&first, &book.load().unwrap()), "cached");
        PinBook::file(path.clone())
            .update("a", |p| {
                p.insert("w".into(), pin("[]"));
            })
            .unwrap();
        assert_eq!(book.load().unwrap().servers["a"].len(), 2, "reread");
    }

    #[test]
    fn an_invalid_file_is_an_error_and_is_never_overwritten() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(LOCK_FILE);
        std::fs::write(
            &path,
            "version = 1\n[servers.a.tools.x]\nsha256 = \"nope\"\n",
        )
        .unwrap();
        let book = PinBook::file(path.clone());
        let e = book.load().unwrap_err();
        assert!(matches!(e, PinError::Invalid { .. }), "{e}");
        assert!(e.to_string().contains(&path.display().to_string()), "{e}");
        assert!(book.update("b", |_| {}).is_err());
        assert!(
            std::fs::read_to_string(&path).unwrap().contains("nope"),
            "left as it was"
        );
    }
}
