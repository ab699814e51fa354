//! Every file operation inside the folder, through the folder's directory handle.
//!
//! The folder is opened once, when the [`Workspace`] is, as a directory handle
//! ([`cap_std::fs::Dir`]). Every read, write, listing and removal that a built-in tool, undo,
//! project instructions or an attachment makes names its file by a path *relative to that
//! handle*, and the operating system resolves it beneath the handle: on Linux with `openat2`
//! and `RESOLVE_BENEATH` (a `..` or a link that would climb out fails in the kernel), elsewhere
//! by `cap-std` walking one component at a time with `O_NOFOLLOW` opens. Nothing is resolved
//! to a path string, checked, and opened again: a folder swapped for a link after
//! [`Workspace::resolve`] looked at it, or a link planted at a temporary name, can at most
//! lead to another file inside the folder, never out of it.
//!
//! [`Workspace::resolve`] still walks a path first, to give the model its clear messages
//! (`` `x` is outside the workspace ``) and the canonical relative name a change is recorded
//! under; the handle is what enforces the boundary.

use std::fs::File;
use std::io::ErrorKind;
use std::path::{Component, Path};

use cap_std::fs::{Metadata, OpenOptions, OpenOptionsExt as _};

use crate::error::PathError;
use crate::workspace::{ResolvedPath, Workspace};

impl Workspace {
    /// Opens an existing file (or folder) beneath the folder for reading, with its metadata
    /// taken from the open file itself, so what is checked is what is read. A pipe is opened
    /// without waiting for a writer; callers look at the metadata before they read.
    pub fn open_read(&self, at: &ResolvedPath) -> Result<(File, std::fs::Metadata), PathError> {
        let shown = |err: std::io::Error| path_error(at.relative(), &err);
        let file = self.open_file(handle_path(at)).map_err(shown)?;
        let meta = file.metadata().map_err(shown)?;
        Ok((file, meta))
    }

    /// As [`open_read`](Self::open_read), for a path a walk found beneath the root (absolute,
    /// as the walker gives it), without its metadata: a walk opens every file it reads, and
    /// the caller asks the open file for what it needs. A path that is not below the root is
    /// refused. A pipe is opened without waiting; reading a folder fails.
    pub fn open_found(&self, found: &Path) -> Result<File, PathError> {
        let relative = self.below_root(found)?;
        self.open_file(relative)
            .map_err(|err| path_error(&self.relative(found), &err))
    }

    /// The metadata of a path a walk found beneath the root: of the link itself when
    /// `follow` is false, else of what it leads to, which must lie inside the folder.
    pub fn found_metadata(&self, found: &Path, follow: bool) -> Result<Metadata, PathError> {
        let relative = self.below_root(found)?;
        let result = if follow {
            self.dir.metadata(relative)
        } else {
            self.dir.symlink_metadata(relative)
        };
        result.map_err(|err| path_error(&self.relative(found), &err))
    }

    /// The metadata of a resolved path, following links inside the folder.
    pub fn metadata(&self, at: &ResolvedPath) -> Result<Metadata, PathError> {
        self.dir
            .metadata(handle_path(at))
            .map_err(|err| path_error(at.relative(), &err))
    }

    /// The whole content of an existing file beneath the folder.
    pub fn read(&self, at: &ResolvedPath) -> Result<Vec<u8>, PathError> {
        self.dir
            .read(handle_path(at))
            .map_err(|err| path_error(at.relative(), &err))
    }

    /// Replaces (or creates) the file at `at` with `bytes`, whole or not at all: a temporary
    /// file with a random name, made exclusively beside it, then renamed over it, all through
    /// the folder's handle. Missing folders on the way are made.
    pub fn write(&self, at: &ResolvedPath, bytes: &[u8]) -> Result<(), PathError> {
        if at.is_root() {
            return Err(PathError::NotAFile(".".to_string()));
        }
        tooltrail_atomic_write::write_in(&self.dir, handle_path(at), bytes)
            .map_err(|err| path_error(at.relative(), &err))
    }

    /// Removes the file at `at` (a link there is removed itself, not what it leads to).
    pub fn remove_file(&self, at: &ResolvedPath) -> Result<(), PathError> {
        self.dir
            .remove_file(handle_path(at))
            .map_err(|err| path_error(at.relative(), &err))
    }

    /// Opens `relative` for reading through the handle, without waiting on a pipe.
    fn open_file(&self, relative: &Path) -> std::io::Result<File> {
        let mut options = OpenOptions::new();
        options.read(true);
        #[cfg(unix)]
        options.custom_flags(rustix::fs::OFlags::NONBLOCK.bits() as i32);
        Ok(self.dir.open_with(relative, &options)?.into_std())
    }

    /// `found` below the root, as a path relative to the handle.
    fn below_root<'p>(&self, found: &'p Path) -> Result<&'p Path, PathError> {
        let inside = found
            .strip_prefix(self.root())
            .map_err(|_| PathError::AbsoluteOutside)?;
        if inside
            .components()
            .any(|part| !matches!(part, Component::Normal(_)))
        {
            return Err(PathError::Outside(self.relative(found)));
        }
        Ok(if inside.as_os_str().is_empty() {
            Path::new(".")
        } else {
            inside
        })
    }
}

/// A resolved path as the handle takes it.
fn handle_path(at: &ResolvedPath) -> &Path {
    Path::new(at.relative())
}

/// What went wrong, said with the workspace-relative name only. The handle's refusal of a
/// path that leads out (a `PermissionDenied` that no system call returned, or the kernel's
/// `EXDEV` from `RESOLVE_BENEATH`) is said as such.
pub(crate) fn path_error(shown: &str, err: &std::io::Error) -> PathError {
    let escaped = (err.kind() == ErrorKind::PermissionDenied && err.raw_os_error().is_none())
        || err.kind() == ErrorKind::CrossesDevices;
    if escaped {
        return PathError::Outside(shown.to_string());
    }
    if is_loop(err) {
        return PathError::TooManyLinks(shown.to_string());
    }
    match err.kind() {
        ErrorKind::NotFound => PathError::NotFound(shown.to_string()),
        ErrorKind::NotADirectory => PathError::NotADirectory(shown.to_string()),
        kind => PathError::Io {
            path: shown.to_string(),
            kind,
        },
    }
}

fn is_loop(err: &std::io::Error) -> bool {
    #[cfg(unix)]
    {
        err.raw_os_error() == Some(rustix::io::Errno::LOOP.raw_os_error())
    }
    #[cfg(not(unix))]
    {
        let _ = err;
        false
    }
}
