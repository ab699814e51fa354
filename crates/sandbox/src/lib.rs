//! Confinement for everything a tool touches.
//!
//! - [`Workspace`] resolves every path a tool is given beneath the workspace root, component by
//!   component and symlinks included, and refuses what would leave it. Errors carry
//!   workspace-relative paths only, so nothing about the machine leaks to the model. That walk
//!   is for the model's messages and the name a change is recorded under; the boundary itself
//!   is the folder's directory handle, opened once with the workspace, through which every
//!   read, write, listing and removal goes (`handle.rs`, writes by `tooltrail_atomic_write`).
//! - [`policy`] judges a shell command on its bash syntax tree: read-only (runs without asking),
//!   ask (needs the user's approval, with a one-sentence reason), or deny (never runs).
//! - [`run_bash`] runs an allowed command with process hygiene: a cleared environment, stdin
//!   from `/dev/null`, its own process group killed on timeout or cancel, capped output.
//! - [`Sandbox`] is the OS sandbox every command runs in, because a policy is not a security
//!   boundary: whatever the user approves and whatever the classifier gets wrong still cannot
//!   read outside the workspace, write to it unless approved, reach the network, or outlive
//!   its call. Linux: a helper process (the host binary re-executed, see [`maybe_run_helper`])
//!   with Landlock, seccomp, resource limits and a subreaper. macOS: a `sandbox-exec` profile.
//!   [`Sandbox::status`] says what holds on this machine; where nothing does, callers ask before
//!   every command.
//! - [`reach`] works out what one command can reach: system folders, the workspace, the user's
//!   toolchains ([`toolchains`]) and extra folders read-only with their secrets left out, a
//!   private temp folder and the workspace's build caches, and the environment that points the
//!   toolchains there. `tooltrail doctor` prints the same reach.
//! - [`rules`] are the user's standing decisions: always allow an exact command prefix in a
//!   workspace, or always refuse one.
//!
//! This crate has no `unsafe`: the system calls go through `rustix`, `landlock` and
//! `seccompiler`.
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
mod handle;
mod helper_args;
pub mod limits;
#[cfg(target_os = "linux")]
mod linux;
pub mod macos;
mod os_sandbox;
pub mod policy;
mod process;
pub mod reach;
mod report;
pub mod rules;
mod secrets;
pub mod shell;
mod system_paths;
pub mod toolchains;
pub mod windows;
mod workspace;

pub use error::{PathError, WorkspaceError};
pub use helper_args::HELPER_ARG;
pub use os_sandbox::{Sandbox, SandboxStatus, maybe_run_helper};
pub use process::{BashCommand, BashOutput, Confinement, RunError, run_bash};
pub use reach::{Access, CommandReach, Grant, Reason, SandboxSettings};
pub use secrets::Hidden;
pub use toolchains::HostEnv;
pub use workspace::{ResolvedPath, Workspace};
