//! The runtime's locks: advisory file locks in the runtime folder, which the kernel releases
//! when their holder dies, however it dies. A process killed mid-question therefore never
//! leaves the runtime marked busy, and a crashed supervisor never looks alive.
//!
//! - `start.lock`, exclusive: one caller at a time starts a runtime.
//! - `in-use.lock`, shared: every question holds a [`Lease`] while it runs; the supervisor
//!   counts idle time only while it can take the lock exclusively, i.e. while no one holds it.
//! - `supervisor.lock`, exclusive: held by the live supervisor all its life.

use std::fs::{File, OpenOptions, TryLockError};
use std::path::Path;

use super::error::SupervisorError;

/// A question's hold on the running runtime: while any lease is alive, the runtime does not
/// stop for being idle (a long command or a pending approval counts as use). Dropping it lets
/// go.
#[derive(Debug)]
pub struct Lease {
    _file: File,
}

impl Lease {
    /// Waits for the shared lock (a supervisor deciding to stop holds it exclusively for a
    /// moment).
    pub(crate) fn acquire(path: &Path) -> Result<Self, SupervisorError> {
        let file = open(path)?;
        file.lock_shared()
            .map_err(SupervisorError::io(format!("lock {}", path.display())))?;
        Ok(Self { _file: file })
    }
}

/// An exclusive lock, released when dropped.
#[derive(Debug)]
pub(crate) struct Exclusive {
    file: File,
}

impl Exclusive {
    /// Waits for the lock.
    pub(crate) fn acquire(path: &Path) -> Result<Self, SupervisorError> {
        let file = open(path)?;
        file.lock()
            .map_err(SupervisorError::io(format!("lock {}", path.display())))?;
        Ok(Self { file })
    }

    /// The locked file, to write in it; the lock lasts as long as the file is open.
    pub(crate) fn into_file(self) -> File {
        self.file
    }

    /// The lock if no one holds it now.
    pub(crate) fn try_acquire(path: &Path) -> Result<Option<Self>, SupervisorError> {
        let file = open(path)?;
        match file.try_lock() {
            Ok(()) => Ok(Some(Self { file })),
            Err(TryLockError::WouldBlock) => Ok(None),
            Err(TryLockError::Error(source)) => Err(SupervisorError::Io {
                what: format!("lock {}", path.display()),
                source,
            }),
        }
    }
}

/// Whether someone holds the lock at `path` (a missing lock file is held by no one).
pub(crate) fn is_held(path: &Path) -> bool {
    if !path.exists() {
        return false;
    }
    matches!(Exclusive::try_acquire(path), Ok(None))
}

fn open(path: &Path) -> Result<File, SupervisorError> {
    let mut options = OpenOptions::new();
    options.read(true).write(true).create(true).truncate(false);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    options
        .open(path)
        .map_err(SupervisorError::io(format!("open {}", path.display())))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn leases_share_and_keep_out_an_exclusive_hold_until_all_are_gone() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("in-use.lock");
        assert!(!is_held(&path));
        let first = Lease::acquire(&path).unwrap();
        let second = Lease::acquire(&path).unwrap();
        assert!(is_held(&path));
        assert!(Exclusive::try_acquire(&path).unwrap().is_none());
        drop(first);
        assert!(is_held(&path));
        drop(second);
        assert!(!is_held(&path));
        let held = Exclusive::try_acquire(&path).unwrap();
        assert!(held.is_some());
        assert!(is_held(&path));
    }
}
