//! The session's `results/` directory: whole results over `max_result_bytes`,
//! one file per call (`CALL_ID.txt`, the text as UTF-8, owner-only), and paging
//! through them (`read_result`).

use std::fs::File;
use std::io::{BufWriter, Read as _, Seek as _, SeekFrom};
use std::path::Path;

/// A call id as a file name: `[A-Za-z0-9_-]` only, at most 100 characters.
pub fn file_stem(call_id: &str) -> String {
    let stem: String = call_id
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .take(100)
        .collect();
    if stem.is_empty() { "call".into() } else { stem }
}

/// A new, owner-only file for `call_id` in `dir` (created 0700 if missing);
/// an id seen before gets `-2`, `-3`… rather than replacing an older result.
pub(super) fn create(dir: &Path, call_id: &str) -> std::io::Result<(BufWriter<File>, String)> {
    use std::os::unix::fs::{DirBuilderExt as _, OpenOptionsExt as _};
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)?;
    let stem = file_stem(call_id);
    for n in 1..1000 {
        let name = if n == 1 {
            format!("{stem}.txt")
        } else {
            format!("{stem}-{n}.txt")
        };
        match std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(dir.join(&name))
        {
            Ok(file) => return Ok((BufWriter::with_capacity(256 * 1024, file), name)),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
    Err(std::io::Error::other("too many results with this call id"))
}

/// One page of a saved result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Page {
    pub text: String,
    /// Byte offsets of `text` in the file, and the file's size.
    pub start: u64,
    pub end: u64,
    pub total: u64,
}

/// Why a saved result cannot be read back (the model is told, as the tool's failure).
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    #[error(
        "no saved result for call `{0}` in this session (results are saved only when they exceed max_result_bytes)"
    )]
    NotSaved(String),
    #[error("cannot open results/{name}: {error}")]
    Open { name: String, error: std::io::Error },
    #[error("cannot read results/{name}: {error}")]
    Read { name: String, error: std::io::Error },
    #[error("offset {offset} is past the end of results/{name} ({total} bytes)")]
    PastEnd {
        offset: u64,
        name: String,
        total: u64,
    },
}

/// Reads up to `length` bytes of `results/CALL_ID.txt` from `offset`, on
/// character boundaries (a start inside a character moves to the next one).
pub fn read(dir: &Path, call_id: &str, offset: u64, length: usize) -> Result<Page, ReadError> {
    let name = format!("{}.txt", file_stem(call_id));
    let mut file = File::open(dir.join(&name)).map_err(|error| match error.kind() {
        std::io::ErrorKind::NotFound => ReadError::NotSaved(file_stem(call_id)),
        _ => ReadError::Open {
            name: name.clone(),
            error,
        },
    })?;
    let read = |error| ReadError::Read {
        name: name.clone(),
        error,
    };
    let total = file.metadata().map_err(read)?.len();
    if offset > total {
        return Err(ReadError::PastEnd {
            offset,
            name,
            total,
        });
    }
    file.seek(SeekFrom::Start(offset)).map_err(read)?;
    // Up to 3 bytes more on each side to land on character boundaries.
    let mut bytes = Vec::with_capacity(length + 8);
    (&mut file)
        .take(length as u64 + 4)
        .read_to_end(&mut bytes)
        .map_err(read)?;
    let skip = bytes
        .iter()
        .take(3)
        .take_while(|b| (**b & 0xC0) == 0x80)
        .count();
    let mut end = (skip + length).min(bytes.len());
    while end > skip && end < bytes.len() && (bytes[end] & 0xC0) == 0x80 {
        end -= 1;
    }
    let text = String::from_utf8_lossy(&bytes[skip..end]).into_owned();
    let start = offset + skip as u64;
    Ok(Page {
        start,
        end: start + (end - skip) as u64,
        total,
        text,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write as _;

    #[test]
    fn pages_land_on_character_boundaries_and_files_are_owner_only() {
        use std::os::unix::fs::PermissionsExt as _;
        let dir = tempfile::tempdir().unwrap();
        let (mut file, name) = create(dir.path(), "toolu_01/../x").unwrap();
        assert_eq!(name, "toolu_01____x.txt");
        file.write_all("aé中😀z".as_bytes()).unwrap();
        drop(file);
        let mode = std::fs::metadata(dir.path().join(&name))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
        let page = read(dir.path(), "toolu_01/../x", 2, 4).unwrap();
        // Offset 2 is inside é: the page starts at 中.
        assert_eq!(page.text, "中");
        assert_eq!((page.start, page.end, page.total), (3, 6, 11));
        assert_eq!(
            read(dir.path(), "toolu_01/../x", 6, 100).unwrap().text,
            "😀z"
        );
        let (_, second) = create(dir.path(), "toolu_01/../x").unwrap();
        assert_eq!(second, "toolu_01____x-2.txt");
        assert!(
            read(dir.path(), "nope", 0, 10)
                .unwrap_err()
                .to_string()
                .contains("no saved result")
        );
    }
}
