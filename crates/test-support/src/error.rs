//! Errors of the scripted server's setup: scripts and fixtures that cannot be read.

/// What went wrong reading a script or a fixture.
#[derive(Debug, thiserror::Error)]
pub enum SupportError {
    #[error("could not read {path}: {source}")]
    Read {
        path: String,
        source: std::io::Error,
    },
    #[error("could not write {path}: {source}")]
    Write {
        path: String,
        source: std::io::Error,
    },
    #[error("the script is not valid JSON: {0}")]
    ScriptJson(#[from] serde_json::Error),
    #[error("the script must be a JSON list of replies")]
    ScriptNotAList,
    #[error("reply {index} of the script is not valid: {reason}")]
    BadReply { index: usize, reason: String },
    #[error("there is no fixture named {name:?}; the fixtures are: {known}")]
    UnknownFixture { name: String, known: String },
    #[error("the fixture {name} is not a captured HTTP response: {reason}")]
    BadFixture { name: String, reason: String },
    #[error("could not listen on 127.0.0.1:{port}: {source}")]
    Listen { port: u16, source: std::io::Error },
}
