//! The data dir is the operator's alone: sessions quote results, the log names
//! servers and the token store holds secrets. Every folder the harness makes in
//! it is 0700 and every file 0600, and on start whatever is there already is
//! tightened to the same (an older harness wrote transcripts 0644 in 0755
//! folders).

use std::fs::{DirBuilder, File, OpenOptions};
use std::os::unix::fs::{DirBuilderExt as _, OpenOptionsExt as _, PermissionsExt as _};
use std::path::Path;

const DIR_MODE: u32 = 0o700;
const FILE_MODE: u32 = 0o600;
/// How deep the start-up pass looks: `sessions/ID/results/FILE` is four.
const MAX_DEPTH: usize = 4;

/// Creates `dir` (and missing parents; the new ones owner-only too) and makes
/// it owner-only if it is not.
pub fn create_dir(dir: &Path) -> std::io::Result<()> {
    DirBuilder::new()
        .recursive(true)
        .mode(DIR_MODE)
        .create(dir)?;
    tighten(dir, DIR_MODE)
}

/// Opens `path` for appending, created 0600; an existing file that others
/// could read is made owner-only first.
pub fn append(path: &Path) -> std::io::Result<File> {
    let file = OpenOptions::new()
        .create(true)
        .append(true)
        .mode(FILE_MODE)
        .open(path)?;
    let mode = file.metadata()?.permissions().mode();
    if mode & 0o077 != 0 {
        file.set_permissions(std::fs::Permissions::from_mode(mode & 0o700))?;
    }
    Ok(file)
}

/// Written once the whole data dir has been tightened: from then on everything
/// in it was made owner-only as it was written, and a start looks only at the
/// top (a walk of thousands of sessions costs a few hundred ms in a debug build).
const MARKER: &str = ".owner-only";

/// Makes `data_dir` and everything in it (a few levels down) owner-only, the
/// first time; after that only the data dir and its entries. Symbolic links
/// are neither followed nor changed. Best effort: what cannot be changed is
/// logged and left.
pub fn tighten_tree(data_dir: &Path) {
    let marker = data_dir.join(MARKER);
    if marker.exists() {
        walk(data_dir, 0, 1);
        return;
    }
    walk(data_dir, 0, MAX_DEPTH);
    let _ = OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .mode(FILE_MODE)
        .open(marker);
}

fn walk(path: &Path, depth: usize, max_depth: usize) {
    let Ok(meta) = std::fs::symlink_metadata(path) else {
        return;
    };
    // The data dir itself may be a link the operator made; below it, never follow.
    let is_dir = if depth == 0 {
        path.is_dir()
    } else if meta.file_type().is_symlink() {
        return;
    } else {
        meta.is_dir()
    };
    let want = if is_dir { DIR_MODE } else { FILE_MODE };
    if let Err(e) = tighten(path, want) {
        tracing::warn!("cannot make {} owner-only: {e}", path.display());
    }
    if !is_dir || depth >= max_depth {
        return;
    }
    let Ok(entries) = std::fs::read_dir(path) else {
        return;
    };
    for entry in entries.flatten() {
        walk(&entry.path(), depth + 1, max_depth);
    }
}

/// Clears the group and other bits (a file keeps its owner's bits, so an
/// executable stays executable for its owner).
fn tighten(path: &Path, want: u32) -> std::io::Result<()> {
    let mode = std::fs::metadata(path)?.permissions().mode();
    if mode & 0o077 == 0 {
        return Ok(());
    }
    let owner = if want == DIR_MODE {
        DIR_MODE
    } else {
        mode & 0o700 | FILE_MODE
    };
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(owner))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mode(path: &Path) -> u32 {
        std::fs::symlink_metadata(path)
            .unwrap()
            .permissions()
            .mode()
            & 0o777
    }

    #[test]
    fn loose_folders_and_files_are_tightened_and_links_are_left_alone() {
        let root = tempfile::tempdir().unwrap();
        let data = root.path().join("data");
        let session = data.join("sessions/s1");
        std::fs::create_dir_all(session.join("results")).unwrap();
        for dir in [&data, &data.join("sessions"), &session] {
            std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
        let files = [
            session.join("audit.jsonl"),
            session.join("results/c.txt"),
            data.join("mcp-harness.log"),
        ];
        for file in &files {
            std::fs::write(file, "x").unwrap();
            std::fs::set_permissions(file, std::fs::Permissions::from_mode(0o644)).unwrap();
        }
        let outside = root.path().join("outside.txt");
        std::fs::write(&outside, "x").unwrap();
        std::fs::set_permissions(&outside, std::fs::Permissions::from_mode(0o644)).unwrap();
        std::os::unix::fs::symlink(&outside, session.join("link")).unwrap();
        tighten_tree(&data);
        for dir in [
            &data,
            &data.join("sessions"),
            &session,
            &session.join("results"),
        ] {
            assert_eq!(mode(dir), 0o700, "{}", dir.display());
        }
        for file in &files {
            assert_eq!(mode(file), 0o600, "{}", file.display());
        }
        assert_eq!(
            mode(&outside),
            0o644,
            "a link's target is not the harness's"
        );
        // Once done, a start looks only at the top.
        std::fs::set_permissions(&session, std::fs::Permissions::from_mode(0o755)).unwrap();
        std::fs::set_permissions(&data, std::fs::Permissions::from_mode(0o755)).unwrap();
        tighten_tree(&data);
        assert_eq!(mode(&data), 0o700);
        assert_eq!(mode(&session), 0o755, "below the top: left to the writers");
    }

    #[test]
    fn append_creates_owner_only_and_tightens_an_old_file() {
        let root = tempfile::tempdir().unwrap();
        let fresh = root.path().join("new.jsonl");
        drop(append(&fresh).unwrap());
        assert_eq!(mode(&fresh), 0o600);
        let old = root.path().join("old.jsonl");
        std::fs::write(&old, "x").unwrap();
        std::fs::set_permissions(&old, std::fs::Permissions::from_mode(0o664)).unwrap();
        drop(append(&old).unwrap());
        assert_eq!(mode(&old), 0o600);
        let dir = root.path().join("a/b");
        create_dir(&dir).unwrap();
        assert_eq!(mode(&dir), 0o700);
        assert_eq!(mode(&root.path().join("a")), 0o700);
    }
}
