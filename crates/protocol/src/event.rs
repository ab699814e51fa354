//! The events one turn produces, in order. The UI renders them, the store records them, and
//! `tooltrail ask --json` prints them one per line.
//!
//! The three events of one tool call — [`EventBody::ToolCallDelta`] while its arguments stream,
//! [`EventBody::ToolCallStarted`] and [`EventBody::ToolCallFinished`] — share its `call_id`.
//! `ToolCallFinished` is self-contained (tool, arguments, approval, result), so a reader that
//! only keeps finished calls, like the audit log, needs nothing else.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use ts_rs::TS;

use crate::change::FileChange;
use crate::message::Message;
use crate::server_request::{ElicitationAction, ElicitationRequest, SamplingMessage};
use crate::tool::{ApprovalRecord, TaskProgress, ToolError, ToolSource, ToolStatus};
use crate::tool_mode::ToolMode;
use crate::view::{ViewEnd, ViewLink};

/// One event of a turn.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct Event {
    pub conversation_id: String,
    pub turn_id: String,
    /// Counts from 0 within a turn, with no gaps.
    #[ts(type = "number")]
    pub seq: u64,
    /// Milliseconds since the Unix epoch.
    #[ts(type = "number")]
    pub time_ms: i64,
    #[serde(flatten)]
    pub body: EventBody,
}

/// What happened.
///
/// The chunk types of Cherry Studio's tool-call middleware map onto these one to one, in
/// either tool mode, so a client built on them can follow a turn (docs/requirements.md, "The
/// event stream's chunk vocabulary"); [`EventBody::seed_chunk_type`] gives the mapping:
///
/// | chunk type | event |
/// |---|---|
/// | `text_delta` | [`EventBody::TextDelta`] |
/// | `mcp_tool_in_progress` (a call as the model writes it) | [`EventBody::ToolCallDelta`] |
/// | `mcp_tool_call_begin` | [`EventBody::ToolCallStarted`] |
/// | `mcp_tool_call_response` | [`EventBody::ToolCallFinished`] with status `success` |
/// | `mcp_tool_call_error` | [`EventBody::ToolCallFinished`] with any other status |
/// | `mcp_tool_complete` (the results go back to the model) | [`EventBody::MessageAdded`] of a tool message |
///
/// The rest (turn start and end, approvals, progress, usage, the round limit, the tool mode,
/// errors) has no chunk type.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum EventBody {
    /// The user asked something; the turn begins.
    TurnStarted {
        workspace: String,
        model: String,
        user_message: String,
        /// The recorded turn this one asks again with another model (`tooltrail replay`,
        /// History's "Replay with…"); `None` for a question asked by the person.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        replay_of: Option<String>,
    },
    /// A message was added to the conversation the model sees (the user's question, the
    /// assistant's reply with its tool calls, each tool result as sent to the model).
    MessageAdded { message: Message },
    /// A piece of the assistant's answer as it streams.
    TextDelta { round: u32, text: String },
    /// A tool call as the model streams it: its name once known, then argument fragments.
    ToolCallDelta {
        round: u32,
        index: u32,
        call_id: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        tool: Option<String>,
        arguments_delta: String,
        /// The tool's view (MCP Apps), on the delta that first names a tool that has one: a
        /// live call's view may open while the model still writes the arguments, and gets
        /// them as they come (`ui/notifications/tool-input-partial`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        view: Option<ViewLink>,
    },
    /// A call waits for the user's decision. Nothing runs until it comes.
    ApprovalRequested {
        call_id: String,
        tool: String,
        arguments: Value,
        /// The exact command for shell tools, or a one-line summary of the call.
        summary: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        cwd: Option<String>,
        /// Why approval is needed.
        reason: String,
        /// The standing rule "always allow in this workspace" would keep, as the words a
        /// command must start with; absent when the call cannot have one (a redirection, a
        /// substitution, an interpreter, or not a command at all).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        rule: Option<String>,
        /// What the call would change in a file, as a diff (`file_write`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        change: Option<FileChange>,
        /// Set when only this one call may be allowed: no "allow for this conversation" or
        /// "always allow", and no standing rule lets it through (`file_write`).
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        #[ts(optional, as = "Option<bool>")]
        once_only: bool,
    },
    /// A running call asks the user a question (`ask_user`) and waits for the answer, which
    /// comes back as the call's result; a dismissed question is an error result.
    UserQuestion {
        call_id: String,
        question: String,
        /// Answers to offer as buttons; the user may also write their own.
        choices: Vec<String>,
    },
    /// How far the model's server has read this round's prompt, before its first token: sent
    /// while a long prompt is read (llama.cpp's `prompt_progress`), so a wait has figures.
    PromptProgress {
        round: u32,
        /// Tokens of the prompt read so far, those from the cache included.
        processed: u32,
        /// Tokens in the whole prompt.
        total: u32,
        /// Tokens the server took from its cache instead of reading them.
        cached: u32,
        /// Milliseconds spent reading so far.
        #[ts(type = "number")]
        elapsed_ms: u64,
    },
    /// A call starts running.
    ToolCallStarted {
        round: u32,
        call_id: String,
        tool: String,
        source: ToolSource,
        /// The tool's description, as the model saw it: sent at the start so that a call cut
        /// off before it finished (a crash, a stopped turn) still has it on record.
        #[serde(default)]
        description: String,
        arguments: Value,
        approval: ApprovalRecord,
        /// The tool's view (MCP Apps), when it has one.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        view: Option<ViewLink>,
    },
    /// A running call reported how far it got (MCP progress notifications).
    ToolCallProgress {
        call_id: String,
        tool: String,
        progress: f64,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        total: Option<f64>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        message: Option<String>,
        /// Set when the server runs the call as a task: the task and where it stands.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        task: Option<TaskProgress>,
    },
    /// An MCP server asks the user for input while its tool `call_id` runs (elicitation). The
    /// call waits for [`EventBody::ElicitationAnswered`] of the same `request_id`.
    ElicitationRequested {
        call_id: String,
        /// Names this request among the call's (a call may ask more than once).
        request_id: String,
        server: String,
        /// The server's words to the user.
        message: String,
        request: ElicitationRequest,
    },
    /// The answer the server got: the user's, or a decline where no one could answer (then
    /// `reason` says why).
    ElicitationAnswered {
        call_id: String,
        request_id: String,
        server: String,
        action: ElicitationAction,
        /// The form's values, when accepted.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        content: Option<Value>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        reason: Option<String>,
    },
    /// An MCP server asks to use the user's model while its tool `call_id` runs (sampling).
    /// Nothing is sent to the model until the user says yes.
    SamplingRequested {
        call_id: String,
        request_id: String,
        server: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        system_prompt: Option<String>,
        messages: Vec<SamplingMessage>,
        /// The most tokens the server asked for.
        max_tokens: u32,
    },
    /// How a sampling request ended: the model's answer (with its tokens) or why there is none.
    SamplingAnswered {
        call_id: String,
        request_id: String,
        server: String,
        /// The user said yes and the model answered.
        approved: bool,
        /// The model's answer, when it ran.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        text: Option<String>,
        /// The model that answered.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        model: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        usage: Option<Usage>,
        /// Why there is no answer (declined, no one to ask, the model failed).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        reason: Option<String>,
    },
    /// A call ended, whether it ran or not.
    ToolCallFinished {
        round: u32,
        call_id: String,
        tool: String,
        source: ToolSource,
        /// The tool's description, as the model saw it.
        description: String,
        /// The arguments as parsed; the raw text when they were not valid JSON.
        arguments: Value,
        status: ToolStatus,
        #[ts(type = "number")]
        duration_ms: u64,
        /// The full result text. What the model got may have been cut (`truncated_for_model`).
        result: String,
        /// The structured result, where the tool gives one.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        data: Option<Value>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        error: Option<ToolError>,
        approval: ApprovalRecord,
        truncated_for_model: bool,
        /// The tool's view (MCP Apps), when it has one.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        view: Option<ViewLink>,
    },
    /// How the model was offered the tools in this turn: emitted with the first answer, and
    /// again when the mode changes. `fell_back` is set when the server refused native tools
    /// and the same request went again in prompt mode (auto mode), which the front end
    /// remembers for the provider and model.
    ToolModeUsed { mode: ToolMode, fell_back: bool },
    /// The model used its rounds; it is asked once more, without tools, to answer.
    RoundLimitReached { limit: u32 },
    /// Token counts the server reported for one model call.
    Usage(Usage),
    /// How much of the model's context window the next request takes, estimated before it is
    /// sent: one per request to the model. `used_tokens` stays within `window_tokens` minus
    /// the room kept for the answer, unless the server did not say how large its window is
    /// (a warning then says the request went all the same).
    ContextUsage {
        round: u32,
        used_tokens: u32,
        window_tokens: u32,
    },
    /// The answer of this round ended because the model reached its token limit or the end of
    /// its context window (`finish_reason: "length"`), so it is cut short.
    AnswerTruncated { round: u32 },
    /// Tooltrail stopped reading the answer of this round because the model was repeating
    /// itself: the same call twice in one answer, a call the turn had already made twice, or
    /// the same text (or a call's arguments) over and over. What came before the repetition is
    /// kept; the server stops generating when the stream is closed.
    RepetitionStopped {
        round: u32,
        /// The tool whose call (or arguments) repeated; `None` when the text did.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        tool: Option<String>,
        /// How many times the repeated call or run of text had appeared.
        repeats: u32,
        /// About how many tokens the model had generated in this round when it was stopped.
        tokens: u32,
        /// Calls that had begun to stream (`tool_call_delta`) but were not kept: they never
        /// run, and a timeline drops them.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        #[ts(optional, as = "Option<Vec<String>>")]
        dropped: Vec<String>,
    },
    /// Something went wrong. `fatal` errors end the turn.
    Error {
        code: ErrorCode,
        message: String,
        fatal: bool,
    },
    /// The first event of a view turn (see [`crate::view`]): the window shows the view of the
    /// call `parent_call_id` of the turn `parent_turn_id`, served from `origin`.
    ViewOpened {
        parent_turn_id: String,
        parent_call_id: String,
        server: String,
        /// The tool as the record names it (`server__tool`).
        tool: String,
        resource_uri: String,
        /// The Content-Security-Policy header the page was served with.
        csp: String,
        /// Domains the server declared that were not allowed, with the page kept to the rest.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        #[ts(optional, as = "Option<Vec<String>>")]
        refused_domains: Vec<String>,
        /// The permissions the user granted the view (`camera`, `microphone`, ...).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        #[ts(optional, as = "Option<Vec<String>>")]
        granted: Vec<String>,
    },
    /// The last event of a view turn: the view is gone.
    ViewClosed { reason: ViewEnd },
    /// The turn is over.
    TurnFinished {
        reason: TurnEnd,
        rounds: u32,
        /// The final answer text of the turn.
        text: String,
    },
}

/// What a [`EventBody::RepetitionStopped`] event says, in a sentence without a final period:
/// "the model repeated the call to `read_file` (3 times); stopped after about 420 tokens".
///
/// Text seen once (`repeats` 1, no tool) is the model copying its own instructions back.
pub fn repetition_sentence(tool: Option<&str>, repeats: u32, tokens: u32) -> String {
    let what = match tool {
        Some(tool) => format!("the call to `{tool}` ({repeats} times)"),
        None if repeats <= 1 => "its own instructions".to_string(),
        None => format!("the same text ({repeats} times)"),
    };
    format!("the model repeated {what}; stopped after about {tokens} tokens")
}

impl EventBody {
    /// The middleware's chunk type this event stands for, where there is one (see the table on
    /// [`EventBody`]).
    pub fn seed_chunk_type(&self) -> Option<&'static str> {
        match self {
            Self::TextDelta { .. } => Some("text_delta"),
            Self::ToolCallDelta { .. } => Some("mcp_tool_in_progress"),
            Self::ToolCallStarted { .. } => Some("mcp_tool_call_begin"),
            Self::ToolCallFinished { status, .. } => Some(match status {
                ToolStatus::Success => "mcp_tool_call_response",
                ToolStatus::Error
                | ToolStatus::Denied
                | ToolStatus::Cancelled
                | ToolStatus::Timeout => "mcp_tool_call_error",
            }),
            Self::MessageAdded {
                message: Message::Tool { .. },
            } => Some("mcp_tool_complete"),
            Self::MessageAdded { .. }
            | Self::TurnStarted { .. }
            | Self::ApprovalRequested { .. }
            | Self::UserQuestion { .. }
            | Self::ElicitationRequested { .. }
            | Self::ElicitationAnswered { .. }
            | Self::SamplingRequested { .. }
            | Self::SamplingAnswered { .. }
            | Self::ToolCallProgress { .. }
            | Self::PromptProgress { .. }
            | Self::ToolModeUsed { .. }
            | Self::RoundLimitReached { .. }
            | Self::Usage(_)
            | Self::ContextUsage { .. }
            | Self::AnswerTruncated { .. }
            | Self::RepetitionStopped { .. }
            | Self::Error { .. }
            | Self::ViewOpened { .. }
            | Self::ViewClosed { .. }
            | Self::TurnFinished { .. } => None,
        }
    }

    /// The `type` tag this body serialises with.
    pub fn kind(&self) -> &'static str {
        match self {
            Self::TurnStarted { .. } => "turn_started",
            Self::MessageAdded { .. } => "message_added",
            Self::TextDelta { .. } => "text_delta",
            Self::ToolCallDelta { .. } => "tool_call_delta",
            Self::ApprovalRequested { .. } => "approval_requested",
            Self::UserQuestion { .. } => "user_question",
            Self::ElicitationRequested { .. } => "elicitation_requested",
            Self::ElicitationAnswered { .. } => "elicitation_answered",
            Self::SamplingRequested { .. } => "sampling_requested",
            Self::SamplingAnswered { .. } => "sampling_answered",
            Self::ToolCallStarted { .. } => "tool_call_started",
            Self::ToolCallProgress { .. } => "tool_call_progress",
            Self::PromptProgress { .. } => "prompt_progress",
            Self::ToolCallFinished { .. } => "tool_call_finished",
            Self::ToolModeUsed { .. } => "tool_mode_used",
            Self::RoundLimitReached { .. } => "round_limit_reached",
            Self::Usage(_) => "usage",
            Self::ContextUsage { .. } => "context_usage",
            Self::AnswerTruncated { .. } => "answer_truncated",
            Self::RepetitionStopped { .. } => "repetition_stopped",
            Self::Error { .. } => "error",
            Self::ViewOpened { .. } => "view_opened",
            Self::ViewClosed { .. } => "view_closed",
            Self::TurnFinished { .. } => "turn_finished",
        }
    }
}

/// Token counts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct Usage {
    pub prompt_tokens: u32,
    pub completion_tokens: u32,
    pub total_tokens: u32,
}

/// Why a turn ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum TurnEnd {
    /// The model answered without asking for tools.
    Completed,
    /// The round limit was hit and the model gave its last answer.
    RoundLimit,
    Cancelled,
    Error,
}

/// Codes for errors that reach the user (not the model).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum ErrorCode {
    /// No connection could be made to the model endpoint.
    Unreachable,
    /// The endpoint refused the key (401/403).
    Unauthorized,
    /// The endpoint or model was not found (404).
    NotFound,
    /// The request was rejected (400 and other 4xx).
    BadRequest,
    /// 429 after every retry.
    RateLimited,
    /// 5xx after every retry.
    ServerError,
    /// The model took too long to answer.
    Timeout,
    /// The server sent something that is not a valid chat completion stream.
    InvalidResponse,
    /// The stream ended before the model finished.
    IncompleteResponse,
    /// The server reported an error inside the stream.
    ModelError,
    Internal,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_repetition_is_said_as_a_person_would_say_it() {
        assert_eq!(
            repetition_sentence(Some("read_file"), 3, 420),
            "the model repeated the call to `read_file` (3 times); stopped after about 420 tokens"
        );
        assert_eq!(
            repetition_sentence(None, 4, 150),
            "the model repeated the same text (4 times); stopped after about 150 tokens"
        );
        assert_eq!(
            repetition_sentence(None, 1, 170),
            "the model repeated its own instructions; stopped after about 170 tokens"
        );
    }
}
