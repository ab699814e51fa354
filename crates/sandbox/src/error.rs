//! Why a path or a workspace could not be used.
//!
//! Every message names workspace-relative paths only: they reach the model, which must never
//! learn where the workspace lives on disk or see an operating-system error dump.

use tooltrail_protocol::{ToolError, ToolErrorCode};

/// The workspace folder itself could not be opened.
#[derive(Debug, thiserror::Error)]
pub enum WorkspaceError {
    #[error("the workspace folder {0} does not exist or is not a folder")]
    NotAFolder(String),
}

/// A path a tool was given could not be resolved inside the workspace.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PathError {
    /// The path leads out of the workspace (`..`, an absolute path elsewhere, a symlink out).
    #[error("`{0}` is outside the workspace")]
    Outside(String),
    /// An absolute path that does not lie inside the workspace. The path itself is not repeated.
    #[error(
        "absolute paths must lie inside the workspace; use a path relative to the workspace root"
    )]
    AbsoluteOutside,
    /// A form of path that is never accepted (NUL byte, `~`, drive or UNC prefix).
    #[error("{0}")]
    Refused(&'static str),
    #[error("`{0}` does not exist")]
    NotFound(String),
    /// A component in the middle of the path is a file, not a folder.
    #[error("`{0}` is not a folder")]
    NotADirectory(String),
    /// A folder (or the root) where a file is needed.
    #[error("`{0}` is a folder, not a file")]
    NotAFile(String),
    #[error("`{0}`: too many levels of symbolic links")]
    TooManyLinks(String),
    /// Reading the file system failed; the OS error's kind is kept, its text (which may carry
    /// system paths) is not.
    #[error("`{path}`: {kind}")]
    Io {
        path: String,
        kind: std::io::ErrorKind,
    },
}

impl PathError {
    /// The tool error code this maps to.
    pub fn code(&self) -> ToolErrorCode {
        match self {
            Self::Outside(_) | Self::AbsoluteOutside | Self::Refused(_) => {
                ToolErrorCode::OutsideWorkspace
            }
            Self::NotFound(_) => ToolErrorCode::NotFound,
            Self::NotADirectory(_) => ToolErrorCode::NotADirectory,
            Self::NotAFile(_) => ToolErrorCode::NotAFile,
            Self::TooManyLinks(_) | Self::Io { .. } => ToolErrorCode::Io,
        }
    }
}

impl From<PathError> for ToolError {
    fn from(error: PathError) -> Self {
        ToolError::new(error.code(), error.to_string())
    }
}
