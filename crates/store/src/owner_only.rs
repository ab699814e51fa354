//! The history keeps what the model read of the user's files, the commands it ran and what it
//! answered, so on a shared computer only its owner may read it. The database is created
//! owner-only (`0600`), and SQLite gives the WAL and shared-memory files it makes beside it the
//! database file's mode; a database, WAL or journal left readable by others (by an older
//! version, or copied in) is narrowed when the store opens it. On Windows the data folder is in
//! the user's own profile, whose ACL already keeps other users out.

use std::path::{Path, PathBuf};

use crate::error::{Result, StoreError};

/// The files SQLite keeps for the database at `db`.
fn files_of(db: &Path) -> [PathBuf; 4] {
    let beside = |suffix: &str| {
        let mut name = db.as_os_str().to_os_string();
        name.push(suffix);
        PathBuf::from(name)
    };
    [
        db.to_path_buf(),
        beside("-wal"),
        beside("-shm"),
        beside("-journal"),
    ]
}

/// Creates the database file at `db` owner-only when it is missing, and takes every right of
/// group and others from it and from the files SQLite keeps beside it.
#[cfg(unix)]
pub(crate) fn restrict(db: &Path) -> Result<()> {
    use std::os::unix::fs::{OpenOptionsExt as _, PermissionsExt as _};

    let file_error = |path: &Path| {
        let path = path.to_path_buf();
        move |source| StoreError::File { path, source }
    };
    match std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(db)
    {
        Ok(_) => {}
        Err(error) if error.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(error) => return Err(file_error(db)(error)),
    }
    for path in files_of(db) {
        let metadata = match std::fs::metadata(&path) {
            Ok(metadata) => metadata,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => continue,
            Err(error) => return Err(file_error(&path)(error)),
        };
        let mode = metadata.permissions().mode();
        if mode & 0o077 != 0 {
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode & 0o700))
                .map_err(file_error(&path))?;
        }
    }
    Ok(())
}

#[cfg(not(unix))]
pub(crate) fn restrict(_db: &Path) -> Result<()> {
    Ok(())
}

#[cfg(test)]
#[cfg(unix)]
mod tests {
    use std::os::unix::fs::PermissionsExt as _;

    use crate::Store;

    fn mode(path: &std::path::Path) -> u32 {
        std::fs::metadata(path).unwrap().permissions().mode() & 0o777
    }

    #[test]
    fn attack_localuser_a_new_history_and_its_wal_are_readable_by_their_owner_only() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("history.db");
        let store = Store::open(&db).unwrap();
        drop(store);
        let store = Store::open(&db).unwrap();
        assert_eq!(mode(&db), 0o600);
        // WAL mode keeps its -wal and -shm beside the database while it is open.
        for suffix in ["-wal", "-shm"] {
            let beside = dir.path().join(format!("history.db{suffix}"));
            assert!(beside.exists(), "{suffix} is missing");
            assert_eq!(mode(&beside), 0o600, "{suffix}");
        }
        drop(store);
    }

    #[test]
    fn attack_localuser_a_history_left_readable_by_others_is_narrowed_when_opened() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("history.db");
        drop(Store::open(&db).unwrap());
        for path in super::files_of(&db) {
            if path.exists() {
                std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
            }
        }
        let store = Store::open(&db).unwrap();
        for path in super::files_of(&db) {
            if path.exists() {
                assert_eq!(mode(&path), 0o600, "{}", path.display());
            }
        }
        drop(store);
    }
}
