//! Free space, asked of the file system before a download or a copy starts, so that a model
//! that cannot fit is refused before anything is written; and the errors that mean the disk
//! filled up anyway (another program wrote meanwhile, or the size was not known).

use std::path::Path;

use crate::models::ModelError;

/// The bytes an unprivileged user may still write on the file system holding `dir`.
pub(crate) fn available_space(dir: &Path) -> Result<u64, ModelError> {
    fs4::available_space(dir)
        .map_err(|source| ModelError::io("find the free space of", dir, source))
}

/// Whether a write failed because the disk (or the user's quota) is full.
pub(crate) fn is_full(error: &std::io::Error) -> bool {
    matches!(
        error.kind(),
        std::io::ErrorKind::StorageFull | std::io::ErrorKind::QuotaExceeded
    )
}
