//! The workspace root and path resolution beneath it.

use std::path::{Path, PathBuf};

#[derive(Debug, thiserror::Error)]
pub enum WorkspaceError {
    #[error("the workspace folder {0} does not exist or is not a folder")]
    NotAFolder(String),
}

/// An opened workspace folder.
#[derive(Debug)]
pub struct Workspace {
    root: PathBuf,
}

impl Workspace {
    pub fn open(root: impl AsRef<Path>) -> Result<Self, WorkspaceError> {
        let root = root.as_ref();
        let canonical = root
            .canonicalize()
            .ok()
            .filter(|path| path.is_dir())
            .ok_or_else(|| WorkspaceError::NotAFolder(root.display().to_string()))?;
        Ok(Self { root: canonical })
    }

    /// The canonical root folder.
    pub fn root(&self) -> &Path {
        &self.root
    }
}
