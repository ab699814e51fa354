//! Tools as the model and the UI see them: specs, results, errors and approvals.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use ts_rs::TS;

/// What the model is told about a tool.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct ToolSpec {
    pub name: String,
    pub description: String,
    /// JSON Schema of the arguments object.
    pub parameters: Value,
    /// True when the tool only reads: such calls may run in parallel and without approval.
    #[serde(default)]
    pub read_only: bool,
}

/// Whether and which tool the model must call (OpenAI's `tool_choice`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case", tag = "mode", content = "name")]
pub enum ToolChoice {
    Auto,
    None,
    Required,
    /// Exactly this function.
    Function(String),
}

/// Where a tool comes from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum ToolSource {
    Builtin,
    Mcp { server: String },
}

/// How a tool call ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum ToolStatus {
    Success,
    Error,
    Denied,
    Cancelled,
    Timeout,
}

impl ToolStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Success => "success",
            Self::Error => "error",
            Self::Denied => "denied",
            Self::Cancelled => "cancelled",
            Self::Timeout => "timeout",
        }
    }
}

/// Short, stable codes for what went wrong in a tool call. The model reads them, so they are
/// the same on every platform and never carry system paths.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum ToolErrorCode {
    /// The arguments did not match the tool's schema or were not valid JSON.
    InvalidArguments,
    ToolNotFound,
    OutsideWorkspace,
    NotFound,
    NotAFile,
    NotADirectory,
    BinaryFile,
    TooLarge,
    InvalidPattern,
    Timeout,
    /// The call needs the user's approval and none could be asked for.
    ApprovalRequired,
    Denied,
    Cancelled,
    /// The tool ran and reported failure (a command's non-zero exit is not this: it is a result).
    Failed,
    Io,
}

impl ToolErrorCode {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::InvalidArguments => "invalid_arguments",
            Self::ToolNotFound => "tool_not_found",
            Self::OutsideWorkspace => "outside_workspace",
            Self::NotFound => "not_found",
            Self::NotAFile => "not_a_file",
            Self::NotADirectory => "not_a_directory",
            Self::BinaryFile => "binary_file",
            Self::TooLarge => "too_large",
            Self::InvalidPattern => "invalid_pattern",
            Self::Timeout => "timeout",
            Self::ApprovalRequired => "approval_required",
            Self::Denied => "denied",
            Self::Cancelled => "cancelled",
            Self::Failed => "failed",
            Self::Io => "io",
        }
    }

    /// The status a call that failed with this code ends in.
    pub fn status(self) -> ToolStatus {
        match self {
            Self::Timeout => ToolStatus::Timeout,
            Self::Denied | Self::ApprovalRequired => ToolStatus::Denied,
            Self::Cancelled => ToolStatus::Cancelled,
            Self::InvalidArguments
            | Self::ToolNotFound
            | Self::OutsideWorkspace
            | Self::NotFound
            | Self::NotAFile
            | Self::NotADirectory
            | Self::BinaryFile
            | Self::TooLarge
            | Self::InvalidPattern
            | Self::Failed
            | Self::Io => ToolStatus::Error,
        }
    }
}

/// A tool error the model should see and can act on: a code and one sentence that names
/// workspace-relative paths only.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct ToolError {
    pub code: ToolErrorCode,
    pub message: String,
}

impl ToolError {
    pub fn new(code: ToolErrorCode, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
        }
    }

    /// The text the model reads for this error.
    pub fn to_model_text(&self) -> String {
        format!("error [{}]: {}", self.code.as_str(), self.message)
    }
}

impl std::fmt::Display for ToolError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.code.as_str(), self.message)
    }
}

impl std::error::Error for ToolError {}

/// What a successful tool call returns.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct ToolOutput {
    /// The text the model reads.
    pub text: String,
    /// The same result as structured data, for programs: `tooltrail tool`, the UI, the audit log.
    pub data: Value,
    /// Images and sounds the tool returned, for a model that sees them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[ts(optional, as = "Option<Vec<crate::media::Media>>")]
    pub media: Vec<crate::media::Media>,
}

impl ToolOutput {
    pub fn new(text: impl Into<String>, data: Value) -> Self {
        Self {
            text: text.into(),
            data,
            media: Vec::new(),
        }
    }

    /// The same output, with `media` for a model that sees them.
    pub fn with_media(self, media: Vec<crate::media::Media>) -> Self {
        Self { media, ..self }
    }
}

/// The user's answer to an approval request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case", tag = "decision")]
pub enum ApprovalReply {
    AllowOnce,
    /// Allow this exact call (same tool, same arguments) for the rest of the conversation.
    AllowForConversation,
    /// Allow it and keep the rule the request offered (`rule` of `approval_requested`): from
    /// now on, commands starting with the same words run in this workspace without asking.
    AllowInWorkspace,
    Deny {
        /// Told to the model, so it can change course.
        #[serde(default)]
        reason: Option<String>,
    },
}

/// Who or what decided whether a call could run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum ApprovalBy {
    /// The tool only reads (or the command policy found it read-only): no approval needed.
    Policy,
    /// The user answered when asked.
    User,
    /// The user allowed the same call earlier in this conversation.
    Conversation,
    /// A stored rule, by id.
    Rule { id: String },
    /// A setting made for the whole run, such as `tooltrail ask --approve all|deny`.
    Setting,
    /// A replay of a recorded question: a call that could change something or ask the user
    /// is never run again; it is given the recorded result of the same call (allowed) or is
    /// not run (refused).
    Replay,
}

/// The decision recorded with every tool call.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct ApprovalRecord {
    pub allowed: bool,
    pub by: ApprovalBy,
    /// The deny reason given to the model, or why approval was needed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub reason: Option<String>,
}

impl ApprovalRecord {
    pub fn not_needed() -> Self {
        Self {
            allowed: true,
            by: ApprovalBy::Policy,
            reason: None,
        }
    }
}

/// How far a running call got, as the tool reports it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct ToolProgress {
    pub progress: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub total: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub message: Option<String>,
    /// Set when the server runs the call as a task (MCP Tasks): where the task stands.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub task: Option<TaskProgress>,
}

/// A call the MCP server runs as a task (MCP Tasks): the task, and where it stands. Sent
/// with each change, so a card shows it and the record knows an open task to pick up again.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct TaskProgress {
    /// The server that holds the task, as `mcp.json` names it.
    pub server: String,
    /// The server's own name for the tool the task runs.
    pub tool: String,
    /// The server's id for the task.
    pub task_id: String,
    pub status: TaskStatus,
    /// The server's words on where the task stands.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub message: Option<String>,
}

/// Where a server's task stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum TaskStatus {
    Working,
    /// The server waits for the user's answer to a question it asked.
    InputRequired,
    Completed,
    Failed,
    Cancelled,
}

impl TaskStatus {
    /// Whether the task has ended (its result or error is known).
    pub fn is_terminal(self) -> bool {
        match self {
            Self::Completed | Self::Failed | Self::Cancelled => true,
            Self::Working | Self::InputRequired => false,
        }
    }
}

/// What a standing approval rule does with the commands it matches.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum RuleKind {
    Allow,
    Deny,
}

impl RuleKind {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Allow => "allow",
            Self::Deny => "deny",
        }
    }

    /// The kind `as_str` names; `None` for any other text.
    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "allow" => Some(Self::Allow),
            "deny" => Some(Self::Deny),
            _ => None,
        }
    }
}
