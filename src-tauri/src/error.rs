//! The error every command returns: a short code the UI can branch on and one sentence it shows.

use serde::Serialize;
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
        Self::new(error.code(), sentence(&error.to_string()))
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
            | McpError::Request { .. } => "mcp",
        };
        Self::new(code, sentence(&error.to_string()))
    }
}

pub type CommandResult<T> = Result<T, CommandError>;

/// Capitalised and ending in a full stop, as the UI shows every error.
pub use tooltrail_protocol::sentence;
