//! The error every command returns: a short code the UI can branch on and one sentence it shows.

use serde::Serialize;
use tooltrail_runtime::models::ModelError;
use ts_rs::TS;

/// What every command rejects with.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, thiserror::Error, TS)]
#[error("{message}")]
pub struct CommandError {
    pub code: &'static str,
    pub message: String,
}

impl CommandError {
    pub fn new(code: &'static str, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
        }
    }

    pub fn no_workspace() -> Self {
        Self::new("no_workspace", "Open a folder first.")
    }
}

impl From<crate::settings::SettingsError> for CommandError {
    fn from(error: crate::settings::SettingsError) -> Self {
        Self::new("settings", error.to_string())
    }
}

impl From<tooltrail_host::HostError> for CommandError {
    fn from(error: tooltrail_host::HostError) -> Self {
        // An endpoint that cannot be reached gets a code of its own: the window then offers
        // the first-run guide instead of a bare error.
        let code = match &error {
            tooltrail_host::HostError::Model(failure)
                if failure.code == tooltrail_protocol::ErrorCode::Unreachable =>
            {
                "unreachable"
            }
            _ => error.code(),
        };
        Self::new(code, sentence(&error.to_string()))
    }
}

/// A models-folder error as the window shows it.
pub fn model_error(error: ModelError) -> CommandError {
    let code = match &error {
        ModelError::NotInstalled { .. } => "not_found",
        ModelError::NameTaken { .. } | ModelError::Busy { .. } => "busy",
        ModelError::BadName { .. } | ModelError::BadReference { .. } | ModelError::Gguf(_) => {
            "bad_input"
        }
        _ => "models",
    };
    CommandError::new(code, sentence(&error.to_string()))
}

impl From<tooltrail_host::ChooseError> for CommandError {
    fn from(error: tooltrail_host::ChooseError) -> Self {
        use tooltrail_host::ChooseError;
        match error {
            ChooseError::Models(error) => model_error(error),
            ChooseError::Settings(_) | ChooseError::Detect(_) => {
                Self::new("settings", sentence(&error.to_string()))
            }
            ChooseError::NotPulled { .. }
            | ChooseError::ModelFileMissing { .. }
            | ChooseError::LocalIdTaken { .. } => Self::new("models", sentence(&error.to_string())),
        }
    }
}

impl From<tooltrail_mcp::McpError> for CommandError {
    fn from(error: tooltrail_mcp::McpError) -> Self {
        use tooltrail_mcp::McpError;
        let code = match &error {
            McpError::UnknownServer(_) => "not_found",
            McpError::ServerExists(_) | McpError::EmptyServerName => "bad_input",
            McpError::ReadConfig { .. }
            | McpError::ConfigJson { .. }
            | McpError::Config { .. }
            | McpError::WriteConfig { .. } => "mcp_config",
            McpError::Disabled(_)
            | McpError::NameTaken(_)
            | McpError::Start { .. }
            | McpError::Handshake { .. }
            | McpError::Backoff { .. }
            | McpError::Request { .. }
            | McpError::View { .. }
            | McpError::SignIn(_) => "mcp",
            McpError::NotForViews(_) => "denied",
        };
        Self::new(code, sentence(&error.to_string()))
    }
}

pub type CommandResult<T> = Result<T, CommandError>;

/// Capitalised and ending in a full stop, as the UI shows every error.
pub use tooltrail_protocol::sentence;
