//! [`ChangeJournal`]: where `file_write` keeps what a file was before a turn first changed it,
//! so that the turn can be undone.
//!
//! The tools crate must not depend on the store: the host implements this on the record's
//! database (in the data folder, never the workspace). Without a journal (`ToolContext::changes`
//! is `None`) a write still happens, but cannot be undone, and its result says so.

use tooltrail_protocol::ToolError;

/// Which call of which turn a write belongs to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallScope {
    pub conversation_id: String,
    pub turn_id: String,
    pub call_id: String,
}

/// The record of the changes each turn made to files.
pub trait ChangeJournal: Send + Sync {
    /// Called before a write to `path` (workspace-relative): keeps `prior` (the file's bytes, or
    /// `None` when it does not exist) unless this turn already kept the state of `path`, so
    /// that undo goes back to what the file was before the turn.
    fn before_write(
        &self,
        scope: &CallScope,
        path: &str,
        prior: Option<&[u8]>,
    ) -> Result<(), ToolError>;

    /// Called after a write: `written` is what the file holds now. Undo refuses when the
    /// file no longer holds it (someone changed it since).
    fn after_write(&self, scope: &CallScope, path: &str, written: &[u8]) -> Result<(), ToolError>;
}
