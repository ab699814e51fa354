//! What can go wrong: [`ServerError`] keeps the server from starting; [`ApiError`] is one
//! request's failure, answered in OpenAI's shape `{"error": {"message", "type", "code"}}`
//! with the tool codes of docs/requirements.md, so that OpenAI clients raise it as they raise
//! OpenAI's own.

use std::net::SocketAddr;
use std::path::PathBuf;

use axum::Json;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::json;
use tooltrail_host::HostError;

/// Why `tooltrail serve` could not start.
#[derive(Debug, thiserror::Error)]
pub enum ServerError {
    #[error(
        "refusing to listen on {addr}, which other machines can reach, without a token of your own; pass --token or set TOOLTRAIL_SERVE_TOKEN"
    )]
    NonLoopbackWithoutToken { addr: SocketAddr },
    #[error("could not listen on {addr}: {source}")]
    Bind {
        addr: SocketAddr,
        source: std::io::Error,
    },
    #[error("the access token in {} could not be {action}: {source}", path.display())]
    Token {
        path: PathBuf,
        action: &'static str,
        source: std::io::Error,
    },
    #[error("the access token in {} is empty; delete the file to have a new one made", path.display())]
    EmptyToken { path: PathBuf },
    #[error(transparent)]
    Settings(#[from] tooltrail_settings::SettingsError),
    #[error("the folder {} cannot be used: {reason}", path.display())]
    Workspace { path: PathBuf, reason: String },
    #[error("the session folder {} could not be made: {source}", path.display())]
    SessionFolder {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("the server stopped: {0}")]
    Serve(std::io::Error),
}

/// One request's failure, as the client reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiError {
    pub status: StatusCode,
    /// OpenAI's `type`: `invalid_request_error`, `authentication_error`, ...
    pub kind: &'static str,
    /// OpenAI's `code`, or one for tools: `tool_not_found`, `invalid_api_key`, ...
    pub code: String,
    /// One sentence.
    pub message: String,
    /// The tool concerned, for tool errors (`tool_name`).
    pub tool_name: Option<String>,
    /// Seconds to wait before trying again (sent as `Retry-After`).
    pub retry_after: Option<u64>,
}

/// The error code of a response, kept in its extensions for the metrics.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ErrorCodeTag(pub String);

impl ApiError {
    fn new(status: StatusCode, kind: &'static str, code: &str, message: impl Into<String>) -> Self {
        Self {
            status,
            kind,
            code: code.to_string(),
            message: message.into(),
            tool_name: None,
            retry_after: None,
        }
    }

    /// The request comes from where this server does not answer (403): a `Host` other than
    /// the address served, or a web page's `Origin` not allowed.
    pub fn forbidden(code: &str, message: impl Into<String>) -> Self {
        Self::new(StatusCode::FORBIDDEN, "permission_error", code, message)
    }

    /// The request is malformed (400).
    pub fn invalid(code: &str, message: impl Into<String>) -> Self {
        Self::new(
            StatusCode::BAD_REQUEST,
            "invalid_request_error",
            code,
            message,
        )
    }

    /// `tool_choice` names a tool nobody declared and Tooltrail does not know (400).
    pub fn tool_not_found(name: &str) -> Self {
        Self {
            tool_name: Some(name.to_string()),
            ..Self::invalid("tool_not_found", format!("Tool '{name}' not found"))
        }
    }

    pub fn unauthorized() -> Self {
        Self::new(
            StatusCode::UNAUTHORIZED,
            "authentication_error",
            "invalid_api_key",
            "A valid token is needed: send it as `Authorization: Bearer <token>`.",
        )
    }

    pub fn too_large(limit: usize) -> Self {
        Self::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            "invalid_request_error",
            "request_too_large",
            format!("The request body is larger than the limit of {limit} bytes."),
        )
    }

    pub fn busy(limit: usize) -> Self {
        Self {
            retry_after: Some(1),
            ..Self::new(
                StatusCode::TOO_MANY_REQUESTS,
                "rate_limit_error",
                "rate_limit_exceeded",
                format!("{limit} requests are being answered already; try again in a second."),
            )
        }
    }

    pub fn session_busy() -> Self {
        Self::new(
            StatusCode::CONFLICT,
            "invalid_request_error",
            "session_busy",
            "This session is still answering an earlier request; wait for it to finish.",
        )
    }

    pub fn shutting_down() -> Self {
        Self {
            retry_after: Some(5),
            ..Self::new(
                StatusCode::SERVICE_UNAVAILABLE,
                "server_error",
                "shutting_down",
                "The server is shutting down.",
            )
        }
    }

    pub fn not_found() -> Self {
        Self::new(
            StatusCode::NOT_FOUND,
            "invalid_request_error",
            "unknown_url",
            "There is no such endpoint; see /v1/chat/completions and /v1/models.",
        )
    }

    /// The model endpoint failed (502), with its sentence and the model client's code
    /// (`unreachable`, `unauthorized`, `rate_limited`, `server_error`, ...).
    pub fn model(code: &str, message: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_GATEWAY, "upstream_error", code, message)
    }

    pub fn internal(message: impl Into<String>) -> Self {
        Self::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            "server_error",
            "internal_error",
            message,
        )
    }

    /// The JSON body clients read.
    pub fn body(&self) -> serde_json::Value {
        let mut error = json!({
            "message": self.message,
            "type": self.kind,
            "code": self.code,
        });
        if let Some(tool) = &self.tool_name {
            error["tool_name"] = json!(tool);
        }
        json!({ "error": error })
    }
}

impl From<HostError> for ApiError {
    fn from(error: HostError) -> Self {
        let message = error.to_string();
        match &error {
            HostError::Model(_) | HostError::NoModel { .. } | HostError::Local(_) => {
                Self::model("model_error", message)
            }
            HostError::Busy => Self::session_busy(),
            HostError::ConversationNotFound => Self::invalid("session_not_found", message),
            HostError::Settings(_) => Self::new(
                StatusCode::INTERNAL_SERVER_ERROR,
                "server_error",
                "settings_error",
                message,
            ),
            HostError::Store(_) | HostError::Preferences(_) => Self::internal(message),
            HostError::Content(_) => Self::invalid("content_error", message),
            HostError::View(_) => Self::invalid("view_error", message),
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let mut response = (self.status, Json(self.body())).into_response();
        if let Some(seconds) = self.retry_after {
            response
                .headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from(seconds));
        }
        response.extensions_mut().insert(ErrorCodeTag(self.code));
        response
    }
}
