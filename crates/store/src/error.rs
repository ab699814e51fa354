//! The store's one error type. Every message is a sentence a user can read.

use std::path::PathBuf;

/// What can go wrong when opening, writing or reading the store.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("No folder for application data was found; set TOOLTRAIL_DATA_DIR to choose one.")]
    NoDataDir,

    #[error("The folder {path} could not be created: {source}.")]
    CreateDir {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },

    #[error("The history database at {path} could not be opened: {source}.")]
    Open {
        path: PathBuf,
        #[source]
        source: rusqlite::Error,
    },

    #[error(
        "The history database at {path} was written by a newer Tooltrail (schema version {found}; this one knows up to {known})."
    )]
    TooNew {
        path: PathBuf,
        found: i64,
        known: i64,
    },

    #[error("The history database could not be read or written: {0}.")]
    Sqlite(#[from] rusqlite::Error),

    #[error("A stored value could not be decoded: {0}.")]
    Json(#[from] serde_json::Error),

    #[error("A stored value is damaged: {0}.")]
    Corrupt(String),

    #[error("The file {path} could not be used: {source}.")]
    File {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },

    #[error("The export could not be written: {0}.")]
    Write(#[source] std::io::Error),

    #[error("No conversation has the id {0}.")]
    ConversationNotFound(String),

    #[error("No tool call has the id {0}.")]
    CallNotFound(String),

    #[error("No approval rule has the id {0}.")]
    RuleNotFound(String),

    #[error("No snippet named {0:?} is saved for this folder.")]
    SnippetNotFound(String),

    #[error("No turn has the id {0}.")]
    TurnNotFound(String),

    #[error("The cursor {0:?} was not given out by this history; start again without it.")]
    BadCursor(String),

    #[error("The status {0:?} is not one of running, success, error, denied, cancelled, timeout.")]
    BadStatus(String),

    #[error("The format {0:?} is not one of jsonl or md.")]
    BadFormat(String),

    #[error("The search text has no words to look for.")]
    EmptySearch,

    #[error("The recorder has stopped, so events can no longer be written.")]
    RecorderStopped,

    #[error("{count} event(s) could not be recorded; the first failed because {first}")]
    RecordFailed { count: usize, first: String },
}

/// The store's result type.
pub type Result<T, E = StoreError> = std::result::Result<T, E>;

/// An event whose record (`what`, row `id`) is gone from its table.
pub(crate) fn missing(what: &str, id: Option<i64>) -> StoreError {
    StoreError::Corrupt(format!("an event refers to {what} {id:?}, which is gone"))
}
