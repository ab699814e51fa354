//! What can go wrong before a tool call reaches a server: the config file, starting a server,
//! the handshake, listing its tools, signing in. Failures of a call itself are `ToolError`s for
//! the model. Nothing here depends on the rest of the crate, so every module may use it.

use std::path::PathBuf;

/// An error about MCP servers, as one sentence a user can act on.
#[derive(Debug, thiserror::Error)]
pub enum McpError {
    #[error("could not read {}: {source}", path.display())]
    ReadConfig {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },

    #[error("{} is not valid JSON: {message}", path.display())]
    ConfigJson { path: PathBuf, message: String },

    /// A field of the file or of one server is wrong; `message` names the server and field.
    #[error("{}: {message}", path.display())]
    Config { path: PathBuf, message: String },

    #[error("could not write {}: {source}", path.display())]
    WriteConfig {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },

    #[error("there is no MCP server named {0:?} in mcp.json")]
    UnknownServer(String),

    #[error("there is already an MCP server named {0:?} in mcp.json")]
    ServerExists(String),

    #[error("an MCP server needs a name")]
    EmptyServerName,

    /// One of a server's tools has a name another tool already has; that tool is left out.
    #[error("{0}")]
    NameTaken(#[from] tooltrail_tools::DuplicateTool),

    #[error("the MCP server {0:?} is disabled in mcp.json")]
    Disabled(String),

    #[error("the MCP server {server:?} could not be started: {message}")]
    Start {
        server: String,
        message: String,
        /// The last lines the server wrote to stderr, for display.
        stderr: Vec<String>,
    },

    #[error("the MCP server {server:?} did not complete the MCP handshake: {message}")]
    Handshake {
        server: String,
        message: String,
        stderr: Vec<String>,
    },

    #[error(
        "the MCP server {server:?} stopped ({last_error}); it will be started again in {wait_secs} s"
    )]
    Backoff {
        server: String,
        last_error: String,
        wait_secs: u64,
    },

    #[error("the MCP server {server:?} failed to {action}: {message}")]
    Request {
        server: String,
        action: &'static str,
        message: String,
    },

    /// An MCP App view that is not one Tooltrail can show, in the words of `apps.rs`.
    #[error("the MCP server {server:?} gave no view Tooltrail can show at {uri}: {reason}")]
    View {
        server: String,
        uri: String,
        reason: String,
    },

    /// A view asked for a tool it may not call (not meant for views, or not its server's).
    #[error("{0}")]
    NotForViews(String),

    /// The server wants the user signed in, and that did not (or may not) happen here.
    #[error("{0}")]
    SignIn(#[from] SignInError),
}

/// Why a sign-in did not happen, as one sentence without secrets.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SignInError {
    /// The policy forbids opening a browser here.
    #[error("the MCP server {0:?} needs you to sign in: run `tooltrail mcp login {0}`")]
    Needed(String),
    #[error("signing in to the MCP server {server:?} did not work: {reason}")]
    Failed { server: String, reason: String },
    #[error(
        "signing in to the MCP server {server:?} timed out: the browser did not come back within {secs} s"
    )]
    TimedOut { server: String, secs: u64 },
    #[error("the MCP server {0:?} does not ask for sign-in")]
    NotAsked(String),
}

impl McpError {
    /// The server's recent stderr lines, where the error carries them.
    pub fn stderr(&self) -> &[String] {
        match self {
            Self::Start { stderr, .. } | Self::Handshake { stderr, .. } => stderr,
            Self::ReadConfig { .. }
            | Self::ConfigJson { .. }
            | Self::Config { .. }
            | Self::WriteConfig { .. }
            | Self::UnknownServer(_)
            | Self::ServerExists(_)
            | Self::EmptyServerName
            | Self::NameTaken(_)
            | Self::Disabled(_)
            | Self::Backoff { .. }
            | Self::Request { .. }
            | Self::View { .. }
            | Self::NotForViews(_)
            | Self::SignIn(_) => &[],
        }
    }
}
