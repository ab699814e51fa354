//! Confinement for everything a tool touches.
//!
//! - [`Workspace`] resolves every path a tool is given beneath the workspace root, component by
//!   component and symlinks included, and refuses what would leave it. Errors carry
//!   workspace-relative paths only, so nothing about the machine leaks to the model.
//!
//! ```
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use tooltrail_sandbox::{PathError, Workspace};
//! let dir = tempfile::tempdir()?;
//! std::fs::create_dir(dir.path().join("src"))?;
//! std::fs::write(dir.path().join("src/main.rs"), "fn main() {}\n")?;
//!
//! let ws = Workspace::open(dir.path())?;
//! let file = ws.resolve("src/../src/main.rs")?;
//! assert_eq!(file.relative(), "src/main.rs");
//! assert!(matches!(ws.resolve("../elsewhere"), Err(PathError::Outside(_))));
//! assert!(matches!(ws.resolve("/etc/passwd"), Err(PathError::AbsoluteOutside)));
//! # Ok(()) }
//! ```

mod error;
mod workspace;

pub use error::{PathError, WorkspaceError};
pub use workspace::{ResolvedPath, Workspace};
