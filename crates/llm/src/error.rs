//! Errors of the model client. Each displays as one sentence a user can act on.

use tooltrail_protocol::ErrorCode;

#[derive(Debug, thiserror::Error)]
pub enum LlmError {
    #[error("the request was cancelled")]
    Cancelled,
    #[error("the model endpoint {url} could not be reached ({detail})")]
    Unreachable { url: String, detail: String },
    #[error("the model endpoint answered HTTP {status}: {message}")]
    Http {
        status: u16,
        message: String,
        code: ErrorCode,
    },
    #[error("the model endpoint did not answer within {secs} seconds")]
    Timeout { secs: u64 },
    #[error("the model endpoint sent a response that is not a valid chat completion: {0}")]
    InvalidResponse(String),
    #[error("the model's answer stopped before it was finished")]
    Incomplete,
    #[error("the model reported an error: {0}")]
    Model(String),
}

impl LlmError {
    /// The protocol code for this error.
    pub fn code(&self) -> ErrorCode {
        match self {
            Self::Cancelled => ErrorCode::Internal,
            Self::Unreachable { .. } => ErrorCode::Unreachable,
            Self::Http { code, .. } => *code,
            Self::Timeout { .. } => ErrorCode::Timeout,
            Self::InvalidResponse(_) => ErrorCode::InvalidResponse,
            Self::Incomplete => ErrorCode::IncompleteResponse,
            Self::Model(_) => ErrorCode::ModelError,
        }
    }
}
