//! Confinement for everything a tool touches.
//!
//! - [`Workspace`] resolves every path a tool is given beneath the workspace root, component by
//!   component and symlinks included, and refuses what would leave it. Errors carry
//!   workspace-relative paths only, so nothing about the machine leaks to the model.
//! - [`policy`] judges a shell command on its bash syntax tree: read-only (runs without asking),
//!   ask (needs the user's approval, with a one-sentence reason), or deny (never runs).
//! - [`run_bash`] runs an allowed command with process hygiene: a cleared environment, stdin
//!   from `/dev/null`, its own process group killed on timeout or cancel, capped output.
//!
//! The OS sandbox (Landlock and seccomp, `sandbox-exec`, Job Objects) is a later layer.
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
//!
//! use tooltrail_sandbox::policy::{Verdict, classify};
//! assert_eq!(classify("find . -name '*.go' | wc -l"), Verdict::ReadOnly);
//! assert!(matches!(classify("rm build.log"), Verdict::Ask { .. }));
//! assert!(matches!(classify("rm -rf /"), Verdict::Deny { .. }));
//! # Ok(()) }
//! ```

mod error;
pub mod policy;
mod process;
mod workspace;

pub use error::{PathError, WorkspaceError};
pub use process::{BashCommand, BashOutput, RunError, run_bash};
pub use workspace::{ResolvedPath, Workspace};
