//! Confinement for everything a tool touches: paths resolved beneath the workspace root.

mod workspace;

pub use workspace::{Workspace, WorkspaceError};
