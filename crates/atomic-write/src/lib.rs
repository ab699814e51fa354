//! Writing a file so that a crash leaves the old content or the new, never a mix.
//!
//! The bytes go to a temporary file in the same folder (so the rename stays on one file
//! system), are flushed to disk, and the temporary file is renamed over the target, which
//! replaces it in one step. The temporary name holds the process id, so two processes writing
//! the same file never share one. An existing file keeps its permissions.
//!
//! Its own crate, below every crate that writes such files (the built-in file tools, the
//! host's undo of a change, the models folder's records), since none of those may depend on
//! another for it and the protocol does no I/O.
//!
//! ```
//! let folder = tempfile::tempdir()?;
//! let path = folder.path().join("notes.txt");
//! tooltrail_atomic_write::write_atomically(&path, b"first")?;
//! tooltrail_atomic_write::write_atomically(&path, b"second")?;
//! assert_eq!(std::fs::read(&path)?, b"second");
//! # Ok::<(), std::io::Error>(())
//! ```

use std::io::Write;
use std::path::Path;

/// Writes `bytes` to `path` through a temporary file in the same folder and a rename, so a
/// crash leaves the old file or the new one, never half of one. The folder is made when it is
/// missing; an existing file keeps its permissions.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let folder = path
        .parent()
        .ok_or_else(|| std::io::Error::from(std::io::ErrorKind::InvalidInput))?;
    std::fs::create_dir_all(folder)?;
    let name = path
        .file_name()
        .map(|name| name.to_string_lossy().into_owned())
        .unwrap_or_default();
    let temp = folder.join(format!(".{name}.tooltrail-{}.tmp", std::process::id()));
    let result = (|| {
        let mut file = std::fs::File::create(&temp)?;
        file.write_all(bytes)?;
        file.sync_all()?;
        if let Ok(meta) = std::fs::metadata(path) {
            std::fs::set_permissions(&temp, meta.permissions())?;
        }
        std::fs::rename(&temp, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&temp);
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn names_in(folder: &Path) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(folder)
            .unwrap()
            .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    #[test]
    fn a_new_file_is_written_in_a_new_folder_and_no_temporary_file_stays() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("deeper").join("notes.txt");
        write_atomically(&path, b"hello").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"hello");
        assert_eq!(names_in(&dir.path().join("deeper")), vec!["notes.txt"]);
    }

    #[test]
    fn an_existing_file_is_replaced_whole() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("notes.txt");
        std::fs::write(&path, b"a much longer first version").unwrap();
        write_atomically(&path, b"short").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"short");
        assert_eq!(names_in(dir.path()), vec!["notes.txt"]);
    }

    #[cfg(unix)]
    #[test]
    fn an_existing_file_keeps_its_permissions() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("run.sh");
        std::fs::write(&path, b"#!/bin/sh\n").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o751)).unwrap();
        write_atomically(&path, b"#!/bin/sh\necho hi\n").unwrap();
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o751);
    }

    #[test]
    fn a_failed_write_leaves_the_old_file_and_no_temporary_file() {
        let dir = tempfile::tempdir().unwrap();
        // A folder where the file should be: the rename fails.
        let path = dir.path().join("taken");
        std::fs::create_dir(&path).unwrap();
        std::fs::write(path.join("inside"), b"kept").unwrap();
        assert!(write_atomically(&path, b"new").is_err());
        assert_eq!(std::fs::read(path.join("inside")).unwrap(), b"kept");
        assert_eq!(names_in(dir.path()), vec!["taken"]);
    }
}
