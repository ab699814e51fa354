//! Project instructions (`AGENTS.md` and the like) that were found and not used, and why: the
//! welcome screen, the context meter and the command line say so instead of leaving them out
//! silently.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// A file of project instructions that was left out of the system prompt.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct InstructionsLeftOut {
    /// The file as the user knows it: relative to the folder (`AGENTS.md`, `../CLAUDE.md`).
    pub file: String,
    pub reason: LeftOutReason,
}

/// Why a file of project instructions was left out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum LeftOutReason {
    /// It is a link, or lies under a linked folder, that leads outside the folder it was found
    /// in: a cloned folder could otherwise send any file of the machine to the model.
    LinkOutside,
    /// It is no ordinary file: a folder, a pipe, a socket or a device.
    NotAFile,
    /// It could not be read (no permission, or a loop of links).
    Unreadable,
}

impl LeftOutReason {
    /// The reason as the end of an English sentence, for the command line.
    pub fn describe(self) -> &'static str {
        match self {
            Self::LinkOutside => "it is a link to a file outside the folder",
            Self::NotAFile => "it is not an ordinary file (a folder, a pipe or a device)",
            Self::Unreadable => "it could not be read",
        }
    }
}

impl InstructionsLeftOut {
    /// `AGENTS.md was left out: it is a link to a file outside the folder.`
    pub fn sentence(&self) -> String {
        format!("{} was left out: {}.", self.file, self.reason.describe())
    }
}
